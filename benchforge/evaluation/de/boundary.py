"""The scorer's trust boundary: which folders candidate code may write, and the only way what it
produced reaches the scorer.

A scoring work folder holds:

============================  ===========================================================
``candidate/``                the candidate's dbt runs (its database, ``target/``, logs):
                              the workspace of sandboxes that run candidate code
``cs/``                       the component-score worker's nodes (candidate SQL runs here)
``profiles/``                 Benchforge's dbt profile, written before and mounted read-only
``collected-build/``          plain data written by the *collect* step out of ``candidate/``
``collected-cs/``             plain data written by the *collect* step out of ``cs/``
``scorer/``                   the scorer's own files (comparison database, helper inputs);
                              never mounted into any sandbox
============================  ===========================================================

Once candidate code has run in ``candidate/`` or ``cs/``, the scorer process opens nothing in
that tree again. A collect step (trusted code, :mod:`benchforge.evaluation.de.cs_worker`, run in
a sandbox that sees the tree read-only and may write only a fresh ``collected-*`` folder)
copies dbt's JSON artifacts and exports tables as Parquet; the scorer reads those files through
descriptors opened with ``O_NOFOLLOW`` (regular files only; DuckDB reads the Parquet through
``/proc/self/fd/N`` of the checked descriptor) in a comparison database it creates in
``scorer/``. A planted macro, a symlinked database or a
forged manifest in a candidate tree is therefore never opened by the scorer.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchforge.core.errors import BenchforgeError

MAX_JSON_BYTES = 512 * 1024 * 1024


class UnsafeCollectedFile(BenchforgeError):
    """A collected file is missing, a link, not a regular file or too large."""


class ScoringFolders(BaseModel):
    """The folders of one scoring run under ``root`` (see the module doc)."""

    root: Path

    @property
    def candidate(self) -> Path:
        return self.root / "candidate"

    @property
    def components(self) -> Path:
        return self.root / "cs"

    @property
    def profiles(self) -> Path:
        return self.root / "profiles"

    @property
    def collected_build(self) -> Path:
        return self.root / "collected-build"

    @property
    def collected_components(self) -> Path:
        return self.root / "collected-cs"

    @property
    def private(self) -> Path:
        return self.root / "scorer"

    def candidate_writable(self) -> list[Path]:
        """The trees candidate code may write (the scorer never opens them once it ran)."""
        return [self.candidate, self.components]

    @classmethod
    def fresh(cls, root: Path) -> ScoringFolders:
        """Empties ``root`` and makes the folders the scorer writes before any candidate
        code runs (the ``collected-*`` and ``cs`` folders are made fresh when used)."""
        if root.is_symlink():
            root.unlink()
        elif root.exists():
            shutil.rmtree(root)
        folders = cls(root=root)
        for folder in (folders.candidate, folders.profiles, folders.private):
            folder.mkdir(parents=True)
        return folders


def fresh_folder(folder: Path) -> Path:
    if folder.is_symlink():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def open_collected(folder: Path, name: str) -> int:
    """A read-only descriptor of ``folder/name``, a regular file that is no symlink (nor is
    ``folder``); ``name`` must be a plain file name."""
    if "/" in name or name in ("", ".", ".."):
        raise UnsafeCollectedFile(f"{name!r} is not a plain file name")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        dir_fd = os.open(folder, flags | os.O_DIRECTORY)
    except OSError as err:
        raise UnsafeCollectedFile(f"{folder}: {err.strerror}") from None
    try:
        fd = os.open(name, flags | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError as err:
        raise UnsafeCollectedFile(f"{folder / name}: {err.strerror}") from None
    finally:
        os.close(dir_fd)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        raise UnsafeCollectedFile(f"{folder / name} is not a plain regular file")
    return fd


def read_collected_json(folder: Path, name: str, limit: int = MAX_JSON_BYTES) -> Any:
    """The JSON document ``folder/name`` (see :func:`open_collected`)."""
    with os.fdopen(open_collected(folder, name), "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnsafeCollectedFile(f"{folder / name} is larger than {limit} bytes")
    try:
        return json.loads(data)
    except ValueError as err:
        raise UnsafeCollectedFile(f"{folder / name} is not JSON: {err}") from None


@contextlib.contextmanager
def collected_file_path(folder: Path, name: str) -> Iterator[str]:
    """A path DuckDB can open that names exactly the checked file ``folder/name``
    (``/proc/self/fd/N`` of its descriptor), valid inside the ``with`` block."""
    fd = open_collected(folder, name)
    try:
        yield f"/proc/self/fd/{fd}"
    finally:
        os.close(fd)

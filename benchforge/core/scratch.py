"""Scratch folders that concurrent processes can share without corrupting each other.

Several runs, score-runs and verifications may work on one artifact root at once (two
nightlies, a backfill beside a nightly). Every folder under the scratch space is one of:

- **published once** (:func:`publish_once`): named by a key of its content, built in a private
  staging folder beside it and renamed into place, never changed afterwards. A reader sees it
  whole or not at all, so no half-written folder is ever copied, built or hashed; two builders
  of one key both build, the first rename wins and the other's copy is dropped;
- **private** (:func:`private_folder`): a fresh folder per use, removed by its owner;
- **guarded** (:func:`folder_lock`): built in place by one holder of an exclusive lock while
  others wait (gold builds: minutes of dbt, worth not repeating);
- **shared** (:func:`shared_until_last`): used by every process holding it (the processes
  running one run id at once), removed by the last one out.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path


def content_key(*parts: object) -> str:
    """A short digest of ``parts`` (their ``str``), for naming published folders."""
    h = hashlib.sha256()
    for part in parts:
        h.update(str(part).encode() + b"\0")
    return h.hexdigest()[:16]


def publish_once(dest: Path, make: Callable[[Path], object]) -> Path:
    """``dest``, made by ``make(path)`` (which must create ``path``) unless it exists already.
    ``dest``'s name must be a key of what ``make`` puts there."""
    if dest.is_dir():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        built = staging / dest.name
        make(built)
        try:
            os.rename(built, dest)
        except OSError:  # published meanwhile by another process: same key, same content
            if not dest.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def private_folder(parent: Path, prefix: str) -> Path:
    """A new empty folder under ``parent`` that no other caller gets; ``prefix`` may name
    subfolders (``suite/task/epoch-0``), the last part then starts the folder's name."""
    where = parent / prefix
    where.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{where.name}-", dir=where.parent))


_guard = threading.Lock()
_thread_locks: dict[Path, threading.Lock] = {}


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Holds ``folder``'s lock: this process's threads first (a lock per folder), then other
    processes of this machine (an exclusive ``flock`` on ``<folder>.lock``)."""
    with _guard:
        lock = _thread_locks.setdefault(folder, threading.Lock())
    with lock:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with open(folder.with_name(folder.name + ".lock"), "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def shared_until_last(folder: Path) -> Iterator[None]:
    """Holds ``folder`` (which need not exist) for the block, with every other holder; the
    last holder to leave removes it. Holders are counted by a shared ``flock`` on
    ``<folder>.lock``, which the kernel drops with its process: a crashed holder counts no
    more, and the next last holder removes what it left."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        try:
            yield
        finally:
            try:
                # exclusive only when no one else holds it; a holder starting meanwhile
                # waits for its shared lock until the folder is gone
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass  # another holder is still inside: it removes the folder
            else:
                shutil.rmtree(folder, ignore_errors=True)

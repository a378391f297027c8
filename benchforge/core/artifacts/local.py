"""Artifact store backed by a local folder, with atomic writes and sidecar checksums.

Layout: ``<root>/<key>`` holds the data and ``<root>/.checksums/<key>.json`` its
recorded ``{"sha256", "size", "ino"}``. A write fills a temp file next to the target,
fsyncs it, writes the sidecar, then ``os.replace``s the temp file into place, so readers
see either the old or the new file, never a partial one. The recorded inode lets a reader
that races a writer tell "sidecar already updated, data not yet" from real corruption.
Writers of one key take a lock (one of a fixed set of lock files under the checksum folder),
so two processes writing different content to one key cannot leave one's data under the
other's sidecar.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import hashlib
import io
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, NamedTuple

from benchforge.core.artifacts.base import (
    CHECKSUM_DIR,
    TEMP_PREFIX,
    ArtifactInfo,
    ArtifactStore,
    commit_temp,
    hash_stream,
    is_valid_key,
    join_key,
    normalize_prefix,
    temp_file_next_to,
    validate_key,
)
from benchforge.core.errors import ArtifactError, ArtifactNotFound, ChecksumMismatch

# How long a reader waits for a concurrent writer to finish swapping data and sidecar.
_SETTLE_SECONDS = 2.0
# Writers lock one of this many files, chosen by the key's hash: bounded, never cleaned up.
_WRITER_LOCKS = 64
_LOCK_FOLDER = ".writer-locks"


class _Record(NamedTuple):
    sha256: str
    size: int
    ino: int


def _oserror(action: str, path: Path, exc: OSError) -> ArtifactError:
    return ArtifactError(f"cannot {action} {path}: {exc.strerror or exc}")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class LocalArtifactStore(ArtifactStore):
    """Artifacts as files under ``root``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(os.path.abspath(Path(root).expanduser()))
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ArtifactError(
                f"artifact root {self.root} is not usable: {exc.strerror or exc}"
            ) from exc
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise ArtifactError(f"artifact root {self.root} is not writable")

    def __repr__(self) -> str:
        return f"LocalArtifactStore({str(self.root)!r})"

    # -- paths -------------------------------------------------------------------------
    def _path(self, key: str) -> Path:
        return self.root.joinpath(*key.split("/"))

    def _sidecar(self, key: str) -> Path:
        parts = key.split("/")
        return self.root.joinpath(CHECKSUM_DIR, *parts[:-1], parts[-1] + ".json")

    def uri(self, key: str) -> str:
        return str(self._path(validate_key(key)))

    # -- writing -----------------------------------------------------------------------
    def _write(self, key: str, fill: Callable[[IO[bytes]], tuple[str, int]]) -> ArtifactInfo:
        key = validate_key(key)
        target = self._path(key)
        if target.is_dir():
            raise ArtifactError(f"cannot write {target}: a folder of artifacts exists there")
        try:
            with temp_file_next_to(target) as (fh, tmp):
                sha, size = fill(fh)
                ino = commit_temp(fh, tmp)
                with self._writer_lock(key):
                    self._write_sidecar(key, _Record(sha, size, ino))
                    os.replace(tmp, target)
            _fsync_dir(target.parent)
        except OSError as exc:
            raise _oserror("write", target, exc) from exc
        return ArtifactInfo(key=key, size=size, sha256=sha, uri=str(target))

    @contextlib.contextmanager
    def _writer_lock(self, key: str) -> Iterator[None]:
        folder = self.root / CHECKSUM_DIR / _LOCK_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        slot = int(hashlib.sha256(key.encode()).hexdigest(), 16) % _WRITER_LOCKS
        with open(folder / f"{slot:02d}.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _write_sidecar(self, key: str, record: _Record) -> None:
        sidecar = self._sidecar(key)
        with temp_file_next_to(sidecar) as (fh, tmp):
            fh.write(json.dumps(record._asdict()).encode())
            commit_temp(fh, tmp)
            os.replace(tmp, sidecar)

    def put_bytes(self, key: str, data: bytes) -> ArtifactInfo:
        return self._write(key, lambda fh: hash_stream(io.BytesIO(data), fh))

    def put_file(self, key: str, path: Path) -> ArtifactInfo:
        path = Path(path)
        try:
            src = open(path, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise _oserror("read", path, exc) from exc
        with src:
            return self._write(key, lambda fh: hash_stream(src, fh))

    # -- reading -----------------------------------------------------------------------
    def _read_sidecar(self, key: str) -> _Record | None:
        sidecar = self._sidecar(key)
        try:
            raw = json.loads(sidecar.read_bytes())
            return _Record(str(raw["sha256"]), int(raw["size"]), int(raw["ino"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ArtifactError(f"unreadable checksum record {sidecar}: {exc}") from exc

    def _read_into(self, key: str, sink: IO[bytes]) -> None:
        """Copy ``key`` into ``sink`` and verify it, retrying while a writer races us."""
        key = validate_key(key)
        path = self._path(key)
        deadline = time.monotonic() + _SETTLE_SECONDS
        while True:
            sink.seek(0)
            sink.truncate()
            try:
                with open(path, "rb") as src:
                    ino = os.fstat(src.fileno()).st_ino
                    sha, _ = hash_stream(src, sink)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
                raise ArtifactNotFound(f"{path}: no such artifact") from exc
            except OSError as exc:
                raise _oserror("read", path, exc) from exc
            record = self._read_sidecar(key)
            if record is not None and record.sha256 == sha:
                return
            if (record is None or record.ino != ino) and time.monotonic() < deadline:
                time.sleep(0.01)  # a writer is between sidecar and data swap
                continue
            if record is None:
                raise ArtifactError(f"{path}: no recorded sha256 (not written by benchforge?)")
            raise ChecksumMismatch(
                f"{path}: content sha256 {sha} does not match recorded {record.sha256}"
            )

    def get_bytes(self, key: str) -> bytes:
        buf = io.BytesIO()
        self._read_into(key, buf)
        return buf.getvalue()

    def get_file(self, key: str, dest: Path) -> Path:
        dest = Path(dest)
        try:
            with temp_file_next_to(dest) as (fh, tmp):
                self._read_into(key, fh)
                commit_temp(fh, tmp)
                os.replace(tmp, dest)
        except OSError as exc:
            raise _oserror("write", dest, exc) from exc
        return dest

    def exists(self, key: str) -> bool:
        return self._path(validate_key(key)).is_file()

    def info(self, key: str) -> ArtifactInfo:
        key = validate_key(key)
        path = self._path(key)
        deadline = time.monotonic() + _SETTLE_SECONDS
        while True:
            try:
                st = path.stat()
            except (FileNotFoundError, NotADirectoryError) as exc:
                raise ArtifactNotFound(f"{path}: no such artifact") from exc
            except OSError as exc:
                raise _oserror("stat", path, exc) from exc
            if not path.is_file():
                raise ArtifactNotFound(f"{path}: no such artifact")
            record = self._read_sidecar(key)
            consistent = record is not None and (
                record.ino == st.st_ino or record.size == st.st_size
            )
            if consistent or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        if record is None:
            raise ArtifactError(f"{path}: no recorded sha256 (not written by benchforge?)")
        return ArtifactInfo(key=key, size=st.st_size, sha256=record.sha256, uri=str(path))

    def list(self, prefix: str = "") -> builtins.list[ArtifactInfo]:
        prefix = normalize_prefix(prefix)
        base = self._path(prefix) if prefix else self.root
        if not base.is_dir():
            return []
        infos = []
        for dirpath, dirnames, filenames in os.walk(base):
            here = Path(dirpath)
            if here == self.root and CHECKSUM_DIR in dirnames:
                dirnames.remove(CHECKSUM_DIR)
            for name in filenames:
                key = (here / name).relative_to(self.root).as_posix()
                if name.startswith(TEMP_PREFIX) or not is_valid_key(key):
                    continue
                try:
                    infos.append(self.info(key))
                except ArtifactNotFound:
                    continue  # deleted while we were listing
        return sorted(infos, key=lambda i: i.key)

    # -- deleting ----------------------------------------------------------------------
    def delete(self, key: str) -> None:
        key = validate_key(key)
        path, sidecar = self._path(key), self._sidecar(key)
        if path.is_dir():
            return
        try:
            path.unlink(missing_ok=True)
            sidecar.unlink(missing_ok=True)
        except OSError as exc:
            raise _oserror("delete", path, exc) from exc
        self._prune(path.parent)
        self._prune(sidecar.parent)

    def delete_prefix(self, prefix: str) -> int:
        prefix = normalize_prefix(prefix)
        if not prefix:
            raise ArtifactError("delete_prefix needs a non-empty prefix")
        infos = self.list(prefix)
        for info in infos:
            self.delete(info.key)
        for folder in (self._path(prefix), self._sidecar(join_key(prefix, "x")).parent):
            if folder.is_dir():
                for dirpath, _, _ in sorted(os.walk(folder), reverse=True):
                    self._prune(Path(dirpath))
        return len(infos)

    def _prune(self, folder: Path) -> None:
        """Remove empty folders from ``folder`` up to (not including) the root."""
        stops = {self.root, self.root / CHECKSUM_DIR}
        while folder not in stops and folder.is_relative_to(self.root):
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent

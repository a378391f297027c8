"""Backend-independent artifact store interface, key rules and directory helpers."""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Protocol

from pydantic import BaseModel, ConfigDict

from benchforge.core.errors import ArtifactError, ArtifactNotFound

CHUNK_SIZE = 1024 * 1024
# Names reserved for store internals; keys may not use them.
CHECKSUM_DIR = ".checksums"
TEMP_PREFIX = ".bf-tmp-"
FILE_MODE = 0o644


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


class Writable(Protocol):
    def write(self, data: bytes, /) -> object: ...


class ArtifactInfo(BaseModel):
    """Description of one stored artifact."""

    model_config = ConfigDict(frozen=True)

    key: str
    size: int
    sha256: str
    uri: str


def validate_key(key: str) -> str:
    """Return ``key`` if it is a clean POSIX relative path, else raise ArtifactError."""
    if not isinstance(key, str) or not key:
        raise ArtifactError(f"invalid artifact key {key!r}: must be a non-empty string")
    problem = None
    if "\\" in key:
        problem = "backslashes are not allowed"
    elif "\x00" in key:
        problem = "NUL characters are not allowed"
    elif key.startswith("/"):
        problem = "absolute keys are not allowed"
    else:
        segments = key.split("/")
        if any(s == "" for s in segments):
            problem = "empty path segments are not allowed"
        elif any(s in (".", "..") for s in segments):
            problem = "'.' and '..' segments are not allowed"
        elif segments[0] == CHECKSUM_DIR:
            problem = f"'{CHECKSUM_DIR}' is reserved"
        elif any(s.startswith(TEMP_PREFIX) for s in segments):
            problem = f"segments starting with '{TEMP_PREFIX}' are reserved"
    if problem:
        raise ArtifactError(f"invalid artifact key {key!r}: {problem}")
    return key


def normalize_prefix(prefix: str) -> str:
    """Validate a folder-like prefix; return it without trailing '/' ('' means everything)."""
    stripped = prefix.rstrip("/") if isinstance(prefix, str) else prefix
    if stripped == "":
        return ""
    return validate_key(stripped)


def is_valid_key(key: str) -> bool:
    """Whether ``key`` passes :func:`validate_key`."""
    try:
        validate_key(key)
    except ArtifactError:
        return False
    return True


def join_key(prefix: str, rel: str) -> str:
    """Join a normalized prefix and a relative key."""
    return f"{prefix}/{rel}" if prefix else rel


def hash_stream(src: Readable, sink: Writable | None = None) -> tuple[str, int]:
    """Stream ``src`` (optionally copying into ``sink``); return (sha256 hex, size)."""
    digest = hashlib.sha256()
    size = 0
    while chunk := src.read(CHUNK_SIZE):
        digest.update(chunk)
        size += len(chunk)
        if sink is not None:
            sink.write(chunk)
    return digest.hexdigest(), size


def hash_file(path: Path) -> tuple[str, int]:
    """Return (sha256 hex, size) of a local file, streaming it."""
    try:
        with open(path, "rb") as fh:
            return hash_stream(fh)
    except OSError as exc:
        raise ArtifactError(f"cannot read {path}: {exc.strerror or exc}") from exc


@contextmanager
def temp_file_next_to(target: Path) -> Iterator[tuple[IO[bytes], Path]]:
    """Yield an open temp file in ``target``'s folder; it is removed unless moved away."""
    for attempt in range(3):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=target.parent)
            break
        except FileNotFoundError:  # folder pruned by a concurrent delete: retry
            if attempt == 2:
                raise
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w+b") as fh:
            yield fh, tmp
    finally:
        tmp.unlink(missing_ok=True)


def commit_temp(fh: IO[bytes], tmp: Path) -> int:
    """Flush and fsync ``fh``, make it world-readable; return its inode."""
    fh.flush()
    os.fsync(fh.fileno())
    os.chmod(tmp, FILE_MODE)
    return os.fstat(fh.fileno()).st_ino


class ArtifactStore(ABC):
    """Key/value store for build artifacts with sha256 verification on every read.

    Prefixes are folder-like: ``list("a/b")`` returns keys under ``a/b/`` only,
    never ``a/bc/...``.
    """

    @abstractmethod
    def put_bytes(self, key: str, data: bytes) -> ArtifactInfo:
        """Store ``data`` under ``key`` (replacing any previous value)."""

    @abstractmethod
    def put_file(self, key: str, path: Path) -> ArtifactInfo:
        """Store the local file ``path`` under ``key``, streaming it."""

    @abstractmethod
    def get_bytes(self, key: str) -> bytes:
        """Return the verified content of ``key``."""

    @abstractmethod
    def get_file(self, key: str, dest: Path) -> Path:
        """Download ``key`` to ``dest`` atomically after verifying its checksum."""

    @abstractmethod
    def exists(self, key: str) -> bool:
        """Whether ``key`` is stored."""

    @abstractmethod
    def info(self, key: str) -> ArtifactInfo:
        """Size, sha256 and URI of ``key``; ArtifactNotFound if absent."""

    @abstractmethod
    def list(self, prefix: str = "") -> list[ArtifactInfo]:
        """All artifacts under ``prefix`` (recursive), sorted by key."""

    @abstractmethod
    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key is not an error."""

    @abstractmethod
    def delete_prefix(self, prefix: str) -> int:
        """Remove every artifact under the (non-empty) ``prefix``; return how many."""

    @abstractmethod
    def uri(self, key: str) -> str:
        """Human/tool-usable location of ``key`` (local path or ``s3://`` URI)."""

    def put_dir(
        self, prefix: str, local_dir: Path, marker: str | None = None
    ) -> builtins.list[ArtifactInfo]:
        """Upload every file under ``local_dir`` to ``prefix``; write ``marker`` last.

        Readers that wait for the marker (a key relative to ``prefix``) never see a partial
        multi-file artifact. If ``local_dir`` holds a file named like the marker, that file is
        the marker; otherwise the marker is a JSON manifest of the uploaded files.
        """
        prefix = normalize_prefix(prefix)
        local_dir = Path(local_dir)
        if not local_dir.is_dir():
            raise ArtifactError(f"cannot upload {local_dir}: not a directory")
        files = sorted(
            (p.relative_to(local_dir).as_posix(), p) for p in local_dir.rglob("*") if p.is_file()
        )
        own_marker = None
        if marker is not None:
            validate_key(marker)
            own_marker = next((path for rel, path in files if rel == marker), None)
            files = [(rel, path) for rel, path in files if rel != marker]
        infos = [self.put_file(join_key(prefix, validate_key(rel)), path) for rel, path in files]
        if marker is not None and own_marker is not None:
            infos.append(self.put_file(join_key(prefix, marker), own_marker))
        elif marker is not None:
            manifest = {"files": [i.model_dump(include={"key", "size", "sha256"}) for i in infos]}
            payload = json.dumps(manifest, indent=2, sort_keys=True).encode()
            infos.append(self.put_bytes(join_key(prefix, marker), payload))
        return infos

    def get_dir(self, prefix: str, dest: Path, marker: str | None = None) -> builtins.list[Path]:
        """Download everything under ``prefix`` into ``dest``; return the local paths.

        With ``marker``, raise ArtifactNotFound unless the marker key is present.
        """
        prefix = normalize_prefix(prefix)
        if marker is not None and not self.exists(join_key(prefix, validate_key(marker))):
            raise ArtifactNotFound(f"{self.uri(join_key(prefix, marker))}: marker not found")
        dest = Path(dest)
        cut = len(prefix) + 1 if prefix else 0
        paths = []
        for info in self.list(prefix):
            paths.append(self.get_file(info.key, dest.joinpath(*info.key[cut:].split("/"))))
        return paths

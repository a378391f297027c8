"""Content digests of folders: what makes two submissions, or two task folders, the same."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def tree_digest(root: Path) -> str:
    """sha256 over every path under ``root`` with its content (a symlink: its target text)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(Path(dirpath, d))]):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix().encode()
            if path.is_symlink():
                h.update(b"L" + rel + b"\0" + os.readlink(path).encode() + b"\0")
            elif path.is_file():
                h.update(b"F" + rel + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def folder_digest(folder: Path) -> str:
    """sha256 over the regular files under ``folder``, by relative path and content."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()

"""The filesystem view of a namespace sandbox, planned on the host side.

The launcher (``launch.py``) only executes the plan; all the reasoning lives here, where it
is typed and testable. The view is the host's own tree, with:

* every host mount read-only (done by the launcher before the plan);
* private tmpfs on /tmp, /var/tmp and /dev/shm;
* each hidden folder covered by an empty read-only tmpfs, each hidden file by a dead mount;
* the exposures bound back at their own path: the workspace read-write, ``read_only`` paths
  and the interpreter's installation read-only, even when they lie under a hidden path;
* folders the sandbox user could not traverse on the way to an exposure (``/root`` holding a
  pyenv interpreter, pytest's 0700 temp root) replaced by an empty folder through which only
  the exposures are reachable, so nothing else of them becomes visible.

Operations are ordered outermost first, so a deeper operation always lands on top of a
shallower one: a hidden folder inside the workspace stays hidden, a dataset inside a hidden
artifact root is visible again.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchforge.sandbox.models import SandboxError

PRIVATE_TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
_HIDDEN_TMPFS_BYTES = 1 << 20
_RANK = {"tmpfs": 0, "mask": 0, "bind": 1}


@dataclass
class MountOp:
    """One mount the launcher makes; ``mountpoints`` are created inside a tmpfs for deeper ops."""

    path: str
    kind: Literal["tmpfs", "mask", "bind"]
    readonly: bool
    mode: int = 0o755
    size: int = _HIDDEN_TMPFS_BYTES
    private_tmp: bool = False
    mountpoints: list[tuple[str, bool]] = field(default_factory=list)

    @property
    def depth(self) -> int:
        return len(Path(self.path).parts)

    def sort_key(self) -> tuple[int, int, int]:
        # At equal paths: cover first, then bind read-only, then read-write (the workspace).
        return (self.depth, _RANK[self.kind], 0 if self.readonly else 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "readonly": self.readonly,
            "mode": self.mode,
            "size": self.size,
            "mountpoints": [[rel, is_dir] for rel, is_dir in self.mountpoints],
        }


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _covering(path: str, ops: list[MountOp], *, strict: bool = False) -> MountOp | None:
    """The deepest op whose path is ``path`` or an ancestor of it (the last such wins)."""
    best: MountOp | None = None
    for op in ops:
        if strict and op.path == path:
            continue
        if _within(path, op.path) and (best is None or op.depth >= best.depth):
            best = op
    return best


def _traversable(path: str, uid: int) -> bool:
    st = os.stat(path)
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    return bool(st.st_mode & stat.S_IXOTH)


def plan_mounts(
    *,
    workspace: Path,
    read_only: list[Path],
    hidden: list[Path],
    runtime: list[Path],
    uid: int,
    tmp_bytes: int,
) -> tuple[list[MountOp], list[str]]:
    """Order the mounts of one sandbox; return them with notes about what they hide."""
    notes: list[str] = []
    ops: list[MountOp] = []
    seen_tmp: set[str] = set()
    for name in PRIVATE_TMP_DIRS:
        real = os.path.realpath(name)
        if os.path.isdir(real) and real not in seen_tmp:
            seen_tmp.add(real)
            ops.append(MountOp(real, "tmpfs", False, mode=0o1777, size=tmp_bytes, private_tmp=True))

    exposures: dict[str, bool] = {}  # path -> read-only
    for path in read_only:
        real = os.path.realpath(path)
        if not os.path.exists(real):
            raise SandboxError(f"read_only path does not exist: {path}")
        exposures[real] = True
    for path in runtime:
        real = os.path.realpath(path)
        if os.path.exists(real):
            exposures.setdefault(real, True)
    exposures[os.path.realpath(workspace)] = False
    ops.extend(MountOp(path, "bind", ro) for path, ro in exposures.items())

    for path in hidden:
        real = os.path.realpath(path)
        if real == "/" or _within(real, "/proc"):
            raise SandboxError(f"cannot hide {path}: the sandbox needs it")
        if not os.path.lexists(real) or real in exposures:
            continue
        ops.append(MountOp(real, "tmpfs" if os.path.isdir(real) else "mask", True))

    # Folders the sandbox user cannot traverse on the way to an exposure.
    blocked: dict[str, list[str]] = {}
    for exposure in sorted(exposures, key=lambda p: len(Path(p).parts)):
        parents = list(reversed(Path(exposure).parents))[1:]  # without "/"
        for parent in map(str, parents):
            cover = _covering(parent, ops)
            if cover is not None and cover.kind == "tmpfs":
                continue  # our own tmpfs: its folders are traversable
            if _traversable(parent, uid):
                continue
            if parent in exposures:
                notes.append(f"{parent} is not accessible to the sandbox user")
                continue
            blocked.setdefault(parent, []).append(exposure)
            ops.append(MountOp(parent, "tmpfs", True))
    for parent, shown in blocked.items():
        notes.append(
            f"{parent} is not accessible to the sandbox user: it appears empty except for "
            + ", ".join(shown)
        )

    ordered: list[MountOp] = []
    for op in sorted(ops, key=MountOp.sort_key):
        cover = _covering(op.path, ordered, strict=True)
        if cover is not None and cover.kind == "tmpfs":
            if op.kind != "bind" and not op.private_tmp:
                continue  # already invisible: it is under one of our tmpfs
            rel = os.path.relpath(op.path, cover.path)
            cover.mountpoints.append((rel, op.kind == "tmpfs" or os.path.isdir(op.path)))
        ordered.append(op)
    return ordered, notes

"""The filesystem view of a namespace sandbox, planned on the host side.

The view is an ALLOW-LIST: the launcher (``launch.py``) builds a fresh root on an empty tmpfs,
makes only what this plan names appear in it, switches into it (``pivot_root``) and detaches
the host's root, so nothing else of the host is reachable at all: no home folders, no other
checkout, no artifact root, no other trial's workspace. All the reasoning lives here, where it
is typed and testable; the launcher only executes the plan. The sandbox sees:

* the system a toolchain needs, read-only at its own path: ``/usr``, ``/etc``, ``/sys`` and
  whichever of ``/bin``, ``/sbin``, ``/lib``, ``/lib32``, ``/lib64``, ``/libx32`` exist (those
  that are symlinks on a merged-/usr host are recreated as the same symlinks), plus the file
  a symlinked ``/etc/resolv.conf`` leads to (systemd-resolved keeps it in /run);
* a minimal ``/dev``: the ``null``, ``zero``, ``full``, ``random``, ``urandom`` and ``tty``
  nodes of the host, the ``fd``/``stdin``/``stdout``/``stderr`` links, a private ``/dev/shm``;
* a fresh ``/proc`` (of the sandbox's pid namespace);
* private, empty tmpfs on ``/tmp``, ``/var/tmp`` and ``/dev/shm``;
* the exposures, bound at their own (host-resolved) path: the interpreter's installation
  (venv and base interpreter) and the request's ``read_only`` paths read-only, the workspace
  read-write;
* the folders leading to an exposure, as empty read-only folders on the root tmpfs that list
  only the way down (with a workspace at /w/x/trials/7/ws: /w, /w/x, /w/x/trials, each showing
  one entry);
* each hidden path that lies inside one of the trees above covered: a folder by an empty
  read-only tmpfs, a file by a dead mount. A hidden path outside them needs nothing (it is
  not there); a hidden system folder is left out of the view.

Operations are ordered outermost first, so a deeper operation always lands on top of a
shallower one: a hidden folder inside the workspace stays hidden, a dataset inside a hidden
folder is visible again (through an empty folder where the hidden one was). Paths are
resolved here, on the host side, before anything runs: an exposure is bound from its real
path, so a symlink planted by an agent cannot redirect it.

Every mount except the workspace and the private tmpfs ends up read-only, nosuid and (but for
the device nodes) nodev; the launcher enforces that on the whole mount tree once it is built.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchforge.core.sandbox.models import SandboxError

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
DEV_LINKS = {
    "/dev/fd": "/proc/self/fd",
    "/dev/stdin": "/proc/self/fd/0",
    "/dev/stdout": "/proc/self/fd/1",
    "/dev/stderr": "/proc/self/fd/2",
}
PRIVATE_TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
RESOLV_CONF = "/etc/resolv.conf"
_HIDDEN_TMPFS_BYTES = 1 << 20
_RANK = {"symlink": 0, "proc": 0, "tmpfs": 0, "mask": 0, "bind": 1}

Kind = Literal["bind", "tmpfs", "mask", "symlink", "proc"]


@dataclass
class MountOp:
    """One step of building the sandbox's root, at ``path`` (the same path inside and out).

    ``bind``: the host's ``path`` (recursively), read-only unless ``readonly`` is False;
    ``dev`` keeps device nodes usable. ``tmpfs``: an empty tmpfs (a private /tmp, or a hidden
    folder). ``mask``: a hidden file, made unopenable. ``symlink``: a link to ``target``.
    ``proc``: the sandbox's own /proc. Missing mount points are created by the launcher.
    """

    path: str
    kind: Kind
    readonly: bool = True
    mode: int = 0o755
    size: int = _HIDDEN_TMPFS_BYTES
    private_tmp: bool = False
    target: str = ""
    dev: bool = False

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
            "target": self.target,
            "dev": self.dev,
        }


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _covering(path: str, ops: list[MountOp], *, strict: bool = False) -> MountOp | None:
    """The deepest mount whose path is ``path`` or an ancestor of it (the last such wins)."""
    best: MountOp | None = None
    for op in ops:
        if op.kind == "symlink" or (strict and op.path == path):
            continue
        if _within(path, op.path) and (best is None or op.depth >= best.depth):
            best = op
    return best


def _traversable(path: str, uid: int) -> bool:
    st = os.stat(path)
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    return bool(st.st_mode & stat.S_IXOTH)


def _exposable(path: Path, what: str) -> str:
    real = os.path.realpath(path)
    if real == "/" or _within(real, "/proc"):
        raise SandboxError(f"cannot expose {path} ({what}): the sandbox builds its own {real}")
    return real


def plan_mounts(
    *,
    workspace: Path,
    read_only: list[Path],
    hidden: list[Path],
    runtime: list[Path],
    uid: int,
    tmp_bytes: int,
    system: tuple[str, ...] = SYSTEM_DIRS,
) -> tuple[list[MountOp], list[str]]:
    """Order the operations that build one sandbox's root; return them with notes."""
    notes: list[str] = []
    hidden_real: list[str] = []
    for path in hidden:
        real = os.path.realpath(path)
        if real == "/" or _within(real, "/proc"):
            raise SandboxError(f"cannot hide {path}: the sandbox needs it")
        if os.path.lexists(real):
            hidden_real.append(real)

    ops: list[MountOp] = [MountOp("/proc", "proc")]
    exposures: dict[str, bool] = {}  # path -> read-only
    for path in read_only:
        real = _exposable(path, "read_only")
        if not os.path.exists(real):
            raise SandboxError(f"read_only path does not exist: {path}")
        exposures[real] = True
    for path in runtime:
        real = _exposable(path, "runtime")
        if os.path.exists(real):
            exposures.setdefault(real, True)
    exposures[_exposable(workspace, "workspace")] = False
    requested = set(exposures)
    for name in system:
        if name in hidden_real or not os.path.lexists(name):
            continue  # a hidden system folder is simply left out
        if os.path.islink(name):
            ops.append(MountOp(name, "symlink", target=os.readlink(name)))
        elif os.path.isdir(name):
            exposures.setdefault(name, True)
    # A resolv.conf linked out of /etc (systemd-resolved: into /run) still works for a
    # sandbox given the host's network: that one file is shown where the link leads.
    resolv = os.path.realpath(RESOLV_CONF)
    if (
        "/etc" in exposures
        and os.path.isfile(resolv)
        and not any(_within(resolv, e) for e in exposures)
        and not _within(resolv, "/proc")
    ):
        exposures[resolv] = True
    ops.extend(MountOp(path, "bind", ro) for path, ro in exposures.items())
    for device in DEVICES:
        if os.path.exists(device) and stat.S_ISCHR(os.stat(device).st_mode):
            ops.append(MountOp(device, "bind", True, dev=True))
    ops.extend(MountOp(link, "symlink", target=target) for link, target in DEV_LINKS.items())
    for name in PRIVATE_TMP_DIRS:
        cover = _covering(name, ops)
        if cover is not None and cover.kind == "bind" and not os.path.isdir(name):
            continue  # inside an exposed host tree that has no such folder
        ops.append(MountOp(name, "tmpfs", False, mode=0o1777, size=tmp_bytes, private_tmp=True))

    for real in hidden_real:
        if real in requested or not any(_within(real, e) for e in exposures):
            continue  # exposed on purpose, or not in the view anyway
        ops.append(MountOp(real, "tmpfs" if os.path.isdir(real) else "mask", True))

    # Folders of an exposed host tree that the sandbox user cannot traverse on the way to a
    # deeper exposure (folders of our own tmpfs are always traversable).
    blocked: dict[str, list[str]] = {}
    for exposure in sorted(exposures, key=lambda p: len(Path(p).parts)):
        for parent in map(str, list(reversed(Path(exposure).parents))[1:]):  # without "/"
            cover = _covering(parent, ops)
            if cover is None or cover.kind != "bind" or _traversable(parent, uid):
                continue
            if parent in exposures:
                notes.append(f"{parent} is not accessible to the sandbox user")
                continue
            if parent not in blocked:
                ops.append(MountOp(parent, "tmpfs", True))
            blocked.setdefault(parent, []).append(exposure)
    for parent, shown in blocked.items():
        notes.append(
            f"{parent} is not accessible to the sandbox user: it appears empty except for "
            + ", ".join(shown)
        )

    ordered: list[MountOp] = []
    for op in sorted(ops, key=MountOp.sort_key):
        cover = _covering(op.path, ordered, strict=True)
        if (
            cover is not None
            and cover.kind == "tmpfs"
            and not cover.private_tmp
            and op.kind != "bind"
        ):
            continue  # already invisible: it is under a hidden folder
        ordered.append(op)
    return ordered, notes

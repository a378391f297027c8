"""Per-sandbox cgroups: one memory and one pids limit for the whole process tree.

rlimits are per process (``RLIMIT_AS``) or per uid (``RLIMIT_NPROC``); only a cgroup bounds
the whole sandbox, counts tmpfs pages, and tells afterwards whether the OOM killer struck.

Sandbox cgroups are created as children of the cgroup this process is in (read from
``/proc/self/cgroup``), in cgroup v1 hierarchies (``memory``, ``pids``) or in the v2 unified
hierarchy when the controller lives there and is delegated. The backend creates and removes
them; the launcher joins them (writing its pid to ``cgroup.procs``) before it forks the
command, so no process of the sandbox ever runs outside them.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PREFIX = "benchforge-sandbox-"
_counter = itertools.count()
_lock = threading.Lock()

Controller = Literal["memory", "pids"]
CONTROLLERS: tuple[Controller, ...] = ("memory", "pids")


@dataclass(frozen=True)
class Hierarchy:
    """Where new cgroups for one controller go: ``parent`` is this process's own cgroup."""

    controller: Controller
    version: Literal[1, 2]
    parent: Path


def _mounts() -> list[tuple[str, str, str, str]]:
    """(root, mount point, fstype, super options) of every cgroup mount."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            fields, rfields = left.split(), right.split()
            if rfields and rfields[0] in ("cgroup", "cgroup2"):
                found.append((fields[3], fields[4], rfields[0], rfields[2]))
    return found


def _join(mount_point: str, mount_root: str, path: str) -> Path | None:
    if not (path == mount_root or path.startswith(mount_root.rstrip("/") + "/")):
        return None
    return Path(mount_point) / os.path.relpath(path, mount_root)


def discover() -> tuple[dict[Controller, Hierarchy], list[str]]:
    """Find where memory and pids cgroups can be made; notes explain what is missing."""
    notes: list[str] = []
    found: dict[Controller, Hierarchy] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = _mounts()
    except OSError as exc:
        return {}, [f"cgroups unreadable ({exc.strerror})"]
    v2_path: str | None = None
    for line in lines:
        hid, controllers, path = line.split(":", 2)
        if hid == "0" and controllers == "":
            v2_path = path
            continue
        for controller in CONTROLLERS:
            if controller not in controllers.split(","):
                continue
            for root, point, fstype, options in mounts:
                if fstype == "cgroup" and controller in options.split(","):
                    parent = _join(point, root, path)
                    if parent is not None and parent.is_dir():
                        found[controller] = Hierarchy(controller, 1, parent)
                        break
    if v2_path is not None:
        for root, point, fstype, _ in mounts:
            if fstype != "cgroup2":
                continue
            parent = _join(point, root, v2_path)
            if parent is None:
                continue
            try:
                available = (parent / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            for controller in CONTROLLERS:
                if controller not in found and controller in available:
                    found[controller] = Hierarchy(controller, 2, parent)
            break
    for controller in CONTROLLERS:
        if controller not in found:
            notes.append(f"no {controller} cgroup controller available to this process")
    return found, notes


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _read_key(path: Path, key: str) -> int:
    """The number after ``key`` in a flat-keyed file (memory.events, pids.events, oom_control)."""
    try:
        match = re.search(rf"^{re.escape(key)} (\d+)$", path.read_text(), re.M)
    except OSError:
        return 0
    return int(match.group(1)) if match else 0


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class CgroupStats:
    oom_kills: int = 0
    pids_limit_hits: int = 0
    peak_memory_bytes: int | None = None


class SandboxCgroups:
    """The cgroups of one sandbox (memory and/or pids), created with their limits set."""

    def __init__(self, dirs: dict[Controller, tuple[Hierarchy, Path]]) -> None:
        self.dirs = dirs

    @property
    def controllers(self) -> set[Controller]:
        return set(self.dirs)

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files the launcher writes its pid to (each directory once)."""
        return sorted({str(path / "cgroup.procs") for _, path in self.dirs.values()})

    def pids(self) -> set[int]:
        found: set[int] = set()
        for _, path in self.dirs.values():
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (path / "cgroup.procs").read_text().split())
        return found

    def stats(self) -> CgroupStats:
        stats = CgroupStats()
        if "memory" in self.dirs:
            hierarchy, path = self.dirs["memory"]
            if hierarchy.version == 1:
                stats.oom_kills = _read_key(path / "memory.oom_control", "oom_kill")
                stats.peak_memory_bytes = _read_int(path / "memory.max_usage_in_bytes")
            else:
                stats.oom_kills = _read_key(path / "memory.events", "oom_kill")
                stats.peak_memory_bytes = _read_int(path / "memory.peak")
        if "pids" in self.dirs:
            stats.pids_limit_hits = _read_key(self.dirs["pids"][1] / "pids.events", "max")
        return stats

    def kill_all(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL every process left in the cgroups; True once they are empty."""
        deadline = time.monotonic() + timeout_s
        while pids := self.pids():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def destroy(self) -> list[str]:
        """Kill what is left and remove the directories; notes say what could not be removed."""
        notes = []
        if not self.kill_all():
            notes.append("processes survived in the sandbox cgroups")
        for _, path in self.dirs.values():
            if not remove_dir(path):
                notes.append(f"could not remove cgroup {path}")
        self.dirs = {}
        return notes


def remove_dir(path: Path, timeout_s: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            # EBUSY: the last task is still exiting.
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                return False
            time.sleep(0.01)


def _new_name() -> str:
    with _lock:
        n = next(_counter)
    return f"{PREFIX}{os.getpid()}-{n}"


def _enable_v2(parent: Path, controller: Controller) -> None:
    subtree = parent / "cgroup.subtree_control"
    if controller not in subtree.read_text().split():
        _write(subtree, f"+{controller}")


def create(
    hierarchies: dict[Controller, Hierarchy], *, memory_bytes: int, pids_max: int
) -> tuple[SandboxCgroups, list[str]]:
    """Make this sandbox's cgroups with limits; a controller that fails is left out, noted."""
    notes: list[str] = []
    name = _new_name()
    dirs: dict[Controller, tuple[Hierarchy, Path]] = {}
    by_parent: dict[Path, Path] = {}  # v2: memory and pids share one directory
    for controller, hierarchy in sorted(hierarchies.items()):
        path = by_parent.get(hierarchy.parent) if hierarchy.version == 2 else None
        created = path is None
        try:
            if path is None:
                if hierarchy.version == 2:
                    _enable_v2(hierarchy.parent, controller)
                path = hierarchy.parent / name
                path.mkdir()
            elif hierarchy.version == 2:
                _enable_v2(hierarchy.parent, controller)
            if controller == "memory":
                if hierarchy.version == 1:
                    _write(path / "memory.limit_in_bytes", str(memory_bytes))
                    # memsw >= limit is required, so it comes second; absent without swap
                    # accounting.
                    memsw = path / "memory.memsw.limit_in_bytes"
                    if memsw.exists():
                        _write(memsw, str(memory_bytes))
                else:
                    _write(path / "memory.max", str(memory_bytes))
                    swap = path / "memory.swap.max"
                    if swap.exists():
                        _write(swap, "0")
            else:
                _write(path / "pids.max", str(pids_max))
        except OSError as exc:
            notes.append(f"{controller} cgroup unusable under {hierarchy.parent} ({exc.strerror})")
            if created and path is not None:
                remove_dir(path)
            continue
        dirs[controller] = (hierarchy, path)
        if hierarchy.version == 2:
            by_parent[hierarchy.parent] = path
    return SandboxCgroups(dirs), notes


def sweep_stale(hierarchies: dict[Controller, Hierarchy]) -> None:
    """Remove empty sandbox cgroups left by processes that died without cleaning up."""
    for hierarchy in hierarchies.values():
        with contextlib.suppress(OSError):
            for child in hierarchy.parent.iterdir():
                match = re.fullmatch(rf"{re.escape(PREFIX)}(\d+)-\d+", child.name)
                if match and int(match.group(1)) != os.getpid() and not _alive(int(match.group(1))):
                    stale = SandboxCgroups({hierarchy.controller: (hierarchy, child)})
                    if stale.kill_all(timeout_s=1.0):
                        remove_dir(child)

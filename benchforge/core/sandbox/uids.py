"""Per-sandbox unprivileged uids, and finding the processes that run as one.

Each namespace sandbox runs as its own uid (and gid) from ``UID_BASE``: the command owns
nothing on the host but its workspace, ``RLIMIT_NPROC`` counts exactly that sandbox's
processes, and "no process of the sandbox survives" is checkable by uid.

A uid is leased with an exclusive ``flock`` on a file named after it, so concurrent sandboxes,
in this process or in other benchforge processes on the machine, never share one; the lock
goes away with the process, so a crash leaks nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

UID_BASE = 200_000
UID_COUNT = 10_000
_LOCK_DIRS = (Path("/run/benchforge-sandbox"), Path(tempfile.gettempdir()) / "benchforge-sandbox")


@dataclass
class UidLease:
    uid: int
    gid: int
    _fd: int

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # drops the flock
            self._fd = -1


def _lock_dir() -> Path:
    for candidate in _LOCK_DIRS:
        try:
            candidate.mkdir(mode=0o700, parents=True, exist_ok=True)
            if os.access(candidate, os.W_OK):
                return candidate
        except OSError:
            continue
    raise OSError("no writable directory for sandbox uid locks")


def lease_uid() -> UidLease:
    """Reserve an unused sandbox uid (gid = uid) until ``release()``."""
    directory = _lock_dir()
    start = random.randrange(UID_COUNT)
    for i in range(UID_COUNT):
        uid = UID_BASE + (start + i) % UID_COUNT
        fd = os.open(directory / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if pids_of_uid(uid):  # a stray from a sandbox whose cleanup never ran: not reused
            os.close(fd)
            continue
        return UidLease(uid, uid, fd)
    raise OSError("every sandbox uid is in use")


def _uids(pid: str) -> set[int]:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Uid:"):
                    return {int(v) for v in line.split()[1:]}
    except OSError:
        pass
    return set()


def pids_of_uid(uid: int) -> list[int]:
    """Processes with ``uid`` as real, effective, saved or filesystem uid (zombies included)."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and uid in _uids(p)]


def kill_uid(uid: int, timeout_s: float = 5.0) -> bool:
    """SIGKILL every process of ``uid`` until none is left; False if some survived."""
    deadline = time.monotonic() + timeout_s
    while pids := pids_of_uid(uid):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True

"""Starting the launcher and watching it: shared by every subprocess-based backend.

A backend describes one run as a :class:`Launch` (the command line that starts the launcher,
the launcher's config, how to kill the tree); :func:`drive_sync` and :func:`drive_async` run
it under the wall clock, keep only the tail of stdout/stderr (a hostile command can print
gigabytes), kill the tree on timeout or cancellation, and collect the launcher's status
messages. The synchronous driver multiplexes in the calling thread (no helper threads); the
asynchronous one never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from benchforge.core.sandbox.models import SandboxError, SandboxLimits, SandboxRequest

LAUNCHER = Path(__file__).with_name("launch.py")
# After the command exits, how long its pipes may stay open (a straggler still writing).
_EOF_GRACE_S = 1.0
# After the polite kill, how long before the forceful one.
_FORCE_AFTER_S = 2.0
_CHUNK = 1 << 16
_MB = 1 << 20
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

KillTree = Callable[[int, bool], None]
"""``kill(pid, force)``: kill the tree started as ``pid``; ``force`` after a polite attempt
failed, or to sweep leftovers once ``pid`` has exited."""


class Tail:
    """Keeps the last ``limit`` bytes written to it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._buf = bytearray()

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._buf += chunk
        if len(self._buf) > self.limit:
            del self._buf[: len(self._buf) - self.limit]

    @property
    def truncated(self) -> bool:
        return self.total > len(self._buf)

    def text(self) -> str:
        return self._buf.decode("utf-8", errors="replace")


@dataclass
class Launch:
    """One run of the launcher, as a backend prepared it."""

    argv: list[str]
    """Starts the launcher (``unshare ... -- python launch.py`` or just ``python launch.py``);
    the channel arguments are appended."""
    env: dict[str, str]
    """Environment of that command line (the sandboxed command's is in ``config``)."""
    config: dict[str, Any]
    stdin: bytes | None
    limits: SandboxLimits
    kill: KillTree


@dataclass
class Outcome:
    returncode: int | None
    """The launcher process's own exit status (namespace: see ``messages``)."""
    stdout: Tail
    stderr: Tail
    wall_s: float
    timed_out: bool
    messages: list[dict[str, Any]] = field(default_factory=list)

    def message(self, event: str) -> dict[str, Any] | None:
        return next((m for m in self.messages if m.get("event") == event), None)


def launcher_argv() -> list[str]:
    # -I: ignore PYTHON* variables and user site; -S: no site-packages (stdlib only, fast).
    return [sys.executable, "-I", "-S", str(LAUNCHER)]


def sandbox_env(request: SandboxRequest, home: Path) -> dict[str, str]:
    """The command's whole environment: defaults, then ``request.env``."""
    env = {
        "PATH": f"{os.path.dirname(sys.executable)}:{SYSTEM_PATH}",
        "HOME": str(home),
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "DO_NOT_TRACK": "1",
    }
    env.update(request.env)
    return env


def rlimits(
    limits: SandboxLimits, *, per_process_memory: bool, nproc: int | None
) -> dict[str, list[int]]:
    """The rlimits the launcher sets (soft = hard, so the command cannot raise them)."""
    found = {
        "RLIMIT_FSIZE": limits.max_file_mb * _MB,
        "RLIMIT_NOFILE": limits.max_open_files,
        "RLIMIT_CORE": 0,
    }
    if per_process_memory:
        found["RLIMIT_AS"] = limits.memory_mb * _MB
    if nproc is not None:
        found["RLIMIT_NPROC"] = nproc
    result = {name: [value, value] for name, value in found.items()}
    if limits.cpu_s is not None:
        # SIGXCPU at the soft limit, SIGKILL one second later at the hard one.
        cpu = math.ceil(limits.cpu_s)
        result["RLIMIT_CPU"] = [cpu, cpu + 1]
    return result


def killed_reason(
    *,
    timed_out: bool,
    returncode: int | None,
    oom_kills: int = 0,
    pids_limit_hits: int = 0,
) -> str | None:
    """Best-effort cause of an abnormal end."""
    if timed_out:
        return "wall_clock"
    if returncode is None or returncode == 0:
        return None
    if oom_kills:
        return "memory"
    if returncode < 0:
        sig = -returncode
        if sig == signal.SIGXCPU:
            return "cpu_time"
        if sig == signal.SIGXFSZ:
            return "file_size"
        try:
            return f"signal {signal.Signals(sig).name}"
        except ValueError:
            return f"signal {sig}"
    if pids_limit_hits:
        return "processes"
    return None


class _Channels:
    """The launcher's config (a memfd), status pipe (launcher -> us) and lifeline pipe.

    The lifeline's write end stays open here until the run ends: if this process dies, the
    launcher sees end-of-file and takes the sandbox down with it.
    """

    def __init__(self, config: dict[str, Any]) -> None:
        data = json.dumps(config).encode()
        try:
            self.config_fd = os.memfd_create("benchforge-sandbox-config", os.MFD_CLOEXEC)
        except (AttributeError, OSError):  # no memfd: an unlinked temporary file
            self.config_fd, name = tempfile.mkstemp(prefix="benchforge-sandbox-")
            os.unlink(name)
        os.write(self.config_fd, data)
        self.status_r, self.status_w = os.pipe()
        self.lifeline_r, self.lifeline_w = os.pipe()
        self._child_ends = [self.config_fd, self.status_w, self.lifeline_r]

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return tuple(self._child_ends)

    @property
    def args(self) -> list[str]:
        return [
            "--config-fd",
            str(self.config_fd),
            "--status-fd",
            str(self.status_w),
            "--lifeline-fd",
            str(self.lifeline_r),
        ]

    def after_spawn(self) -> None:
        for fd in self._child_ends:
            os.close(fd)
        self._child_ends = []

    def messages(self) -> list[dict[str, Any]]:
        os.set_blocking(self.status_r, False)
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self.status_r, _CHUNK):
                data += chunk
        found = []
        for line in data.decode(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
        return found

    def close(self) -> None:
        for fd in [*self._child_ends, self.status_r, self.lifeline_w]:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._child_ends = []


def _spawn_error(launch: Launch, exc: OSError) -> SandboxError:
    return SandboxError(f"cannot start the sandbox ({launch.argv[0]}): {exc}")


def drive_sync(launch: Launch) -> Outcome:
    """Run the launcher to completion (or the wall clock) in the calling thread."""
    channels = _Channels(launch.config)
    try:
        try:
            proc = subprocess.Popen(
                launch.argv + channels.args,
                stdin=subprocess.PIPE if launch.stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=launch.env,
                pass_fds=channels.pass_fds,
                start_new_session=True,
            )
        except OSError as exc:
            raise _spawn_error(launch, exc) from exc
        channels.after_spawn()
        try:
            return _watch(proc, launch, channels)
        except BaseException:
            launch.kill(proc.pid, False)
            launch.kill(proc.pid, True)
            proc.wait()
            raise
        finally:
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
    finally:
        channels.close()


def _watch(proc: subprocess.Popen[bytes], launch: Launch, channels: _Channels) -> Outcome:
    limit = launch.limits.output_limit_bytes
    out, err = Tail(limit), Tail(limit)
    sel = selectors.DefaultSelector()
    assert proc.stdout is not None and proc.stderr is not None
    sinks: dict[int, Tail] = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    for fd in sinks:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    pending = memoryview(launch.stdin or b"")
    stdin: IO[bytes] | None = proc.stdin
    if stdin is not None:
        if pending:
            os.set_blocking(stdin.fileno(), False)
            sel.register(stdin.fileno(), selectors.EVENT_WRITE)
        else:
            stdin.close()
            stdin = None
    pidfd: int | None = None
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(proc.pid)
        sel.register(pidfd, selectors.EVENT_READ)

    start = time.monotonic()
    deadline = start + launch.limits.wall_s
    force_at = math.inf
    exited_at: float | None = None
    timed_out = False
    try:
        while True:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
                launch.kill(proc.pid, True)  # stragglers that outlived the command
                if pidfd is not None:
                    sel.unregister(pidfd)
                    os.close(pidfd)
                    pidfd = None
            if exited_at is not None and (not sinks or now >= exited_at + _EOF_GRACE_S):
                break
            if exited_at is None and now >= deadline and not timed_out:
                timed_out = True
                launch.kill(proc.pid, False)
                force_at = now + _FORCE_AFTER_S
            if exited_at is None and now >= force_at:
                launch.kill(proc.pid, True)
                force_at = math.inf
            if exited_at is not None:
                wake = exited_at + _EOF_GRACE_S
            elif timed_out:
                wake = force_at
            else:
                wake = deadline
            timeout = None if wake == math.inf else max(0.0, wake - now)
            if pidfd is None and exited_at is None:  # no pidfd: poll for the exit
                timeout = 0.05 if timeout is None else min(timeout, 0.05)
            for key, _ in sel.select(timeout):
                fd = int(key.fd)
                if fd in sinks:
                    try:
                        chunk = os.read(fd, _CHUNK)
                    except BlockingIOError:
                        continue
                    if chunk:
                        sinks[fd].add(chunk)
                    else:
                        sel.unregister(fd)
                        del sinks[fd]
                elif stdin is not None and fd == stdin.fileno():
                    try:
                        written = os.write(fd, pending[:_CHUNK])
                        pending = pending[written:]
                    except BlockingIOError:
                        continue
                    except OSError:  # the command closed its stdin
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(fd)
                        stdin.close()
                        stdin = None
    finally:
        if pidfd is not None:
            os.close(pidfd)
        sel.close()
    if proc.returncode is None:
        proc.wait()
    wall = (exited_at or time.monotonic()) - start
    return Outcome(proc.returncode, out, err, wall, timed_out, channels.messages())


async def _pump(stream: asyncio.StreamReader, tail: Tail) -> None:
    while chunk := await stream.read(_CHUNK):
        tail.add(chunk)


async def _feed(stream: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(OSError):  # BrokenPipe / ConnectionReset: it stopped reading
        stream.write(data)
        await stream.drain()
    with contextlib.suppress(OSError):
        stream.close()


async def drive_async(launch: Launch) -> Outcome:
    """Run the launcher without blocking the event loop; cancelling kills the tree."""
    channels = _Channels(launch.config)
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *launch.argv,
                *channels.args,
                stdin=subprocess.PIPE if launch.stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=launch.env,
                pass_fds=channels.pass_fds,
                start_new_session=True,
            )
        except OSError as exc:
            raise _spawn_error(launch, exc) from exc
        channels.after_spawn()
        limit = launch.limits.output_limit_bytes
        out, err = Tail(limit), Tail(limit)
        assert proc.stdout is not None and proc.stderr is not None
        tasks = [
            asyncio.create_task(_pump(proc.stdout, out)),
            asyncio.create_task(_pump(proc.stderr, err)),
        ]
        if proc.stdin is not None and launch.stdin is not None:
            tasks.append(asyncio.create_task(_feed(proc.stdin, launch.stdin)))
        start = time.monotonic()
        timed_out = False
        try:
            try:
                await asyncio.wait_for(proc.wait(), timeout=launch.limits.wall_s)
            except TimeoutError:
                timed_out = True
                await _kill_and_reap(proc, launch)
            wall = time.monotonic() - start
            launch.kill(proc.pid, True)  # stragglers that outlived the command
            _, late = await asyncio.wait(tasks, timeout=_EOF_GRACE_S)
            for task in late:
                task.cancel()
        except BaseException:
            for task in tasks:
                task.cancel()
            await shielded(_kill_and_reap(proc, launch))
            raise
        return Outcome(proc.returncode, out, err, wall, timed_out, channels.messages())
    finally:
        channels.close()


async def _kill_and_reap(proc: asyncio.subprocess.Process, launch: Launch) -> None:
    if proc.returncode is not None:
        return  # reaped: its pid may already belong to someone else
    launch.kill(proc.pid, False)
    try:
        await asyncio.wait_for(proc.wait(), timeout=_FORCE_AFTER_S)
    except TimeoutError:
        launch.kill(proc.pid, True)
        await proc.wait()


async def shielded(coro: Any) -> Any:
    """Await ``coro`` to completion even if the awaiting task is cancelled meanwhile.

    Cleanup after a cancellation must finish (the tree killed, the workspace handed back);
    a second cancellation is re-raised once it has.
    """
    task = asyncio.ensure_future(coro)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():
                raise
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return result

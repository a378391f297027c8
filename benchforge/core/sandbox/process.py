"""The fallback backend: a plain subprocess with rlimits, in its own process group.

It contains nothing but time and resources: the command runs as this user, sees the whole
filesystem and the host's network. It exists so benchmarks still run (with an honest
:class:`~benchforge.core.sandbox.models.Isolation` saying so) where namespaces are unavailable:
not root, a locked-down container, no ``unshare``.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import psutil

from benchforge.core.sandbox.models import Isolation, SandboxError, SandboxRequest, SandboxResult
from benchforge.core.sandbox.supervise import (
    SYSTEM_PATH,
    Launch,
    Outcome,
    drive_async,
    drive_sync,
    killed_reason,
    launcher_argv,
    rlimits,
    sandbox_env,
)


def _count_processes(uid: int) -> int:
    """How many processes ``uid`` runs now (what ``RLIMIT_NPROC`` counts)."""
    count = 0
    for proc in psutil.process_iter(["uids"]):
        uids = proc.info.get("uids")
        if uids is not None and uids.real == uid:
            count += 1
    return count


def _kill_group(pid: int, force: bool) -> None:
    """SIGKILL the process group and every descendant still attached to ``pid``."""
    descendants: list[psutil.Process] = []
    with contextlib.suppress(psutil.Error):
        descendants = psutil.Process(pid).children(recursive=True)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for proc in descendants:
        with contextlib.suppress(psutil.Error):
            proc.kill()


class ProcessBackend:
    """Plain subprocess: rlimits, a new session, the process group killed at the end."""

    name = "process"

    def __init__(self, notes: list[str] | None = None) -> None:
        """``notes``: why this backend is in use (recorded in every isolation)."""
        self._notes = list(notes or [])

    def isolation(self) -> Isolation:
        root = os.geteuid() == 0
        notes = [
            *self._notes,
            "no filesystem confinement: the command reads and writes whatever "
            f"uid {os.geteuid()} can, and hidden paths are not hidden",
            "the command has the host's network",
            "memory is limited per process (RLIMIT_AS), not for the whole tree",
            "processes that start their own session escape the final kill",
        ]
        if root:
            notes.append("running as root: RLIMIT_NPROC does not apply, processes are unlimited")
        else:
            notes.append(f"RLIMIT_NPROC counts every process of uid {os.geteuid()}")
        return Isolation(
            backend=self.name,
            network="host",
            filesystem="host",
            process_tree="process-group",
            memory="rlimit-per-process",
            processes="none" if root else "rlimit-nproc",
            notes=notes,
        )

    def _launch(self, request: SandboxRequest) -> tuple[Launch, Isolation]:
        workspace = request.workspace.resolve()
        if not workspace.is_dir():
            raise SandboxError(f"workspace is not a folder: {request.workspace}")
        limits = request.limits
        uid = os.geteuid()
        isolation = self.isolation()
        if request.hidden:
            hidden = ", ".join(map(str, request.hidden))
            isolation = isolation.model_copy(
                update={"notes": [*isolation.notes, f"NOT hidden: {hidden}"]}
            )
        config = {
            "mode": "process",
            "argv": request.argv,
            "env": sandbox_env(request, workspace),
            "cwd": os.path.normpath(workspace / (request.cwd or Path("."))),
            "uid": None,
            "gid": None,
            "rlimits": rlimits(
                limits,
                per_process_memory=True,
                nproc=None if uid == 0 else _count_processes(uid) + limits.max_processes,
            ),
            "cgroup_procs": [],
            "mount_ops": [],
            "uts": False,
            "loopback": False,
            "deadline_s": limits.wall_s + 10,
        }
        launch = Launch(
            argv=launcher_argv(),
            env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"},
            config=config,
            stdin=request.stdin.encode() if request.stdin is not None else None,
            limits=limits,
            kill=_kill_group,
        )
        return launch, isolation

    def _result(self, outcome: Outcome, isolation: Isolation) -> SandboxResult:
        error = outcome.message("error")
        if error is not None:
            raise SandboxError(f"sandbox setup failed: {error.get('message')}")
        if outcome.message("ready") is None and not outcome.timed_out:
            detail = outcome.stderr.text().strip()[-1000:] or f"exit status {outcome.returncode}"
            raise SandboxError(f"the sandbox launcher failed: {detail}")
        returncode = None if outcome.timed_out else outcome.returncode
        return SandboxResult(
            returncode=returncode,
            stdout=outcome.stdout.text(),
            stderr=outcome.stderr.text(),
            wall_s=outcome.wall_s,
            timed_out=outcome.timed_out,
            killed_reason=killed_reason(timed_out=outcome.timed_out, returncode=returncode),
            isolation=isolation,
            stdout_truncated=outcome.stdout.truncated,
            stderr_truncated=outcome.stderr.truncated,
        )

    def run(self, request: SandboxRequest) -> SandboxResult:
        launch, isolation = self._launch(request)
        return self._result(drive_sync(launch), isolation)

    async def run_async(self, request: SandboxRequest) -> SandboxResult:
        launch, isolation = self._launch(request)
        return self._result(await drive_async(launch), isolation)

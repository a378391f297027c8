"""The namespace backend: Linux namespaces + cgroups + a per-sandbox uid (needs root).

One run::

    backend (root, host)                       sandbox
    ───────────────────────────────────────    ─────────────────────────────────────────────
    lease uid 2000xx, chown workspace to it
    make memory/pids cgroups with limits
    plan the mounts (mounts.py)
    unshare --mount --pid --net --ipc --uts --fork --kill-child -- python launch.py
                                               launcher = pid 1, root: join cgroups; build
                                               a new root on a tmpfs holding only the
                                               allow-list (system dirs, runtime, exposures,
                                               fresh /proc, private /tmp), hide inside it,
                                               pivot_root, detach the host's root, all but
                                               the workspace and /tmp read-only; loopback
                                               up; fork: drop to uid 2000xx,
                                               no_new_privs, rlimits, execve(argv)
    wall clock: SIGKILL the launcher           pid 1 dies -> the kernel kills the namespace
    kill anything left in the cgroups / of the uid, remove the cgroups,
    chown the workspace back to us, release the uid

Killing pid 1 of a pid namespace kills every process in it, whatever they did (double forks,
``setsid``); the launcher also exits when this process dies (its lifeline pipe closes).

The filesystem is an allow-list (see ``mounts.py``): the command sees the system folders a
toolchain needs, this interpreter's installation (:func:`runtime_paths`), the request's
``read_only`` paths and its workspace, each at its own path, and nothing else of the host
(no home folders, no other checkout or artifact root, no other trial's workspace).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from benchforge.core.sandbox import cgroups, uids
from benchforge.core.sandbox.models import (
    Isolation,
    SandboxError,
    SandboxLimits,
    SandboxRequest,
    SandboxResult,
)
from benchforge.core.sandbox.mounts import plan_mounts
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
    shielded,
)

log = logging.getLogger(__name__)

_MB = 1 << 20
_BASE_FLAGS = ["--mount", "--pid", "--fork", "--kill-child", "--propagation", "private"]
_OPTIONAL_NAMESPACES = ("net", "ipc", "uts")
_PROBE_TIMEOUT_S = 30


@dataclass(frozen=True)
class Capabilities:
    """What this machine lets the namespace backend do (probed once per backend)."""

    usable: bool
    reason: str = ""
    unshare: str = ""
    namespaces: frozenset[str] = frozenset()
    hierarchies: dict[cgroups.Controller, cgroups.Hierarchy] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _try_unshare(unshare: str, flags: list[str]) -> str | None:
    """None if ``unshare <flags> true`` works, else why not."""
    try:
        proc = subprocess.run(
            [unshare, *flags, "--", "true"],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT_S,
            env={"PATH": SYSTEM_PATH},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode != 0:
        return (proc.stderr.strip() or f"exit status {proc.returncode}").splitlines()[-1]
    return None


def probe_capabilities(*, use_cgroups: bool = True) -> Capabilities:
    if os.geteuid() != 0:
        return Capabilities(False, f"not running as root (euid {os.geteuid()})")
    unshare = shutil.which("unshare", path=SYSTEM_PATH)
    if unshare is None:
        return Capabilities(False, "the unshare command (util-linux) is not installed")
    error = _try_unshare(unshare, _BASE_FLAGS)
    if error is not None:
        return Capabilities(False, f"mount/pid namespaces unavailable ({error})")
    notes: list[str] = []
    namespaces = {"mount", "pid"}
    for ns in _OPTIONAL_NAMESPACES:
        error = _try_unshare(unshare, [f"--{ns}"])
        if error is None:
            namespaces.add(ns)
        elif ns == "net":
            notes.append(f"network namespaces unavailable ({error}): agent code has host network")
        else:
            notes.append(f"{ns} namespaces unavailable ({error})")
    usable: dict[cgroups.Controller, cgroups.Hierarchy] = {}
    if use_cgroups:
        hierarchies, cg_notes = cgroups.discover()
        notes += cg_notes
        cgroups.sweep_stale(hierarchies)
        trial, trial_notes = cgroups.create(hierarchies, memory_bytes=64 * _MB, pids_max=16)
        notes += trial_notes
        usable = {c: h for c, h in hierarchies.items() if c in trial.controllers}
        notes += trial.destroy()
    else:
        notes.append("cgroups not used (use_cgroups=False)")
    if "memory" not in usable:
        notes.append("no memory cgroup: memory is limited per process (RLIMIT_AS)")
    if "pids" not in usable:
        notes.append("no pids cgroup: processes are limited by RLIMIT_NPROC of the sandbox uid")
    return Capabilities(True, "", unshare, frozenset(namespaces), usable, tuple(notes))


INSTALLED_PACKAGE = Path(__file__).resolve().parents[2]
"""The ``benchforge`` package. Installed (not editable) it lies inside the interpreter's tree
that every sandbox sees, and it carries the gold repositories and task specs as package data:
it is hidden in every sandbox, whatever the request says (nothing sandboxed imports it)."""


def runtime_paths() -> list[Path]:
    """This interpreter's installation (venv and base), exposed read-only in sandboxes, so
    ``python``, ``dbt`` and friends from the venv run there: exactly these folders (with a
    pyenv interpreter, ``/root/.pyenv/versions/X``, not the rest of ``/root``)."""
    candidates = {
        os.path.realpath(p)
        for p in (
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            sys.base_exec_prefix,
            os.path.dirname(os.path.realpath(sys.executable)),
        )
    }
    kept: list[str] = []
    for path in sorted(candidates, key=len):
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return [Path(p) for p in kept]


def chown_tree(root: Path, uid: int, gid: int, *, strip_setid: bool = False) -> None:
    """lchown everything under ``root`` (never following links); optionally drop setuid and
    setgid bits from files, so nothing the sandbox left behind runs with our identity."""

    def fix(path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.lchown(path, uid, gid)
            if strip_setid:
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) and st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                    os.chmod(path, stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))

    fix(str(root))
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            fix(os.path.join(dirpath, name))


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _kill_tree(pid: int, force: bool) -> None:
    """Politely: SIGKILL the launcher (pid 1 of the namespace), so ``unshare`` reaps it and
    the kernel kills the rest. Forcefully: SIGKILL unshare's whole process group too."""
    if not force:
        launchers = _children(pid)
        for child in launchers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        if launchers:
            return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@dataclass
class _Holder:
    lease: uids.UidLease
    users: int = 1


class _Workspaces:
    """Which sandbox uid owns which workspace, while sandboxes run in it.

    Concurrent sandboxes on one workspace (an agent's parallel tool calls) share its uid:
    the first hands the workspace to a fresh uid, the last one out kills whatever still runs
    as that uid, hands the workspace back to us (files the sandbox created included) and
    frees the uid.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[Path, _Holder] = {}

    def acquire(self, workspace: Path) -> uids.UidLease:
        with self._lock:
            holder = self._held.get(workspace)
            if holder is not None:
                holder.users += 1
                return holder.lease
            try:
                lease = uids.lease_uid()
            except OSError as exc:
                raise SandboxError(f"no sandbox uid: {exc}") from exc
            try:
                chown_tree(workspace, lease.uid, lease.gid)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    chown_tree(workspace, os.getuid(), os.getgid())
                lease.release()
                raise SandboxError(f"cannot hand {workspace} to the sandbox uid: {exc}") from exc
            self._held[workspace] = _Holder(lease)
            return lease

    def release(self, workspace: Path) -> list[str]:
        with self._lock:
            holder = self._held[workspace]
            holder.users -= 1
            if holder.users:
                return []
            del self._held[workspace]
            notes = []
            if not uids.kill_uid(holder.lease.uid):
                notes.append(f"processes of sandbox uid {holder.lease.uid} survived")
            chown_tree(workspace, os.getuid(), os.getgid(), strip_setid=True)
            holder.lease.release()
            return notes


_WORKSPACES = _Workspaces()


@dataclass
class _Prepared:
    workspace: Path
    lease: uids.UidLease
    cgroups: cgroups.SandboxCgroups | None
    isolation: Isolation
    launch: Launch
    cleaned: bool = False


class NamespaceBackend:
    """Runs each command in fresh namespaces as a fresh unprivileged uid (see module doc)."""

    name = "namespace"

    def __init__(self, *, use_cgroups: bool = True) -> None:
        """``use_cgroups=False``: limit memory and processes with rlimits only (what a machine
        without usable cgroups gets)."""
        self._use_cgroups = use_cgroups
        self._caps: Capabilities | None = None
        self._lock = threading.Lock()

    def capabilities(self) -> Capabilities:
        """Probed on first use, then cached."""
        with self._lock:
            if self._caps is None:
                self._caps = probe_capabilities(use_cgroups=self._use_cgroups)
            return self._caps

    def isolation(self) -> Isolation:
        """What a default request (no network) gets on this machine."""
        caps = self.capabilities()
        if not caps.usable:
            raise SandboxError(f"namespace sandbox unavailable: {caps.reason}")
        return Isolation(
            backend=self.name,
            network="isolated" if "net" in caps.namespaces else "host",
            filesystem="confined",
            process_tree="pid-namespace",
            memory="cgroup" if "memory" in caps.hierarchies else "rlimit-per-process",
            processes="cgroup" if "pids" in caps.hierarchies else "rlimit-nproc",
            notes=list(caps.notes),
        )

    def probe(self) -> tuple[bool, str]:
        """Run a tiny command in a real sandbox: (works, why not)."""
        caps = self.capabilities()
        if not caps.usable:
            return False, caps.reason
        workspace = Path(tempfile.mkdtemp(prefix="benchforge-sandbox-probe-"))
        try:
            result = self.run(
                SandboxRequest(
                    argv=[sys.executable, "-I", "-S", "-c", "import os; print(os.getuid())"],
                    workspace=workspace,
                    limits=SandboxLimits(wall_s=_PROBE_TIMEOUT_S, memory_mb=512),
                )
            )
        except SandboxError as exc:
            return False, str(exc)
        finally:
            shutil.rmtree(workspace, ignore_errors=True)
        if result.returncode != 0 or result.stdout.strip() != str(result.sandbox_uid):
            detail = (result.stderr.strip() or result.stdout.strip())[-500:]
            return False, f"probe command failed (exit {result.returncode}): {detail}"
        return True, ""

    # -- one run ----------------------------------------------------------------------------

    def _prepare(self, request: SandboxRequest) -> _Prepared:
        caps = self.capabilities()
        if not caps.usable:
            raise SandboxError(f"namespace sandbox unavailable: {caps.reason}")
        workspace = request.workspace.resolve()
        if not workspace.is_dir():
            raise SandboxError(f"workspace is not a folder: {request.workspace}")
        cwd = os.path.normpath(workspace / (request.cwd or "."))
        limits = request.limits
        lease = _WORKSPACES.acquire(workspace)
        groups: cgroups.SandboxCgroups | None = None
        try:
            notes = list(caps.notes)
            if caps.hierarchies:
                groups, cg_notes = cgroups.create(
                    caps.hierarchies,
                    memory_bytes=limits.memory_mb * _MB,
                    pids_max=limits.max_processes + 1,  # + the launcher
                )
                notes += cg_notes
            controllers = groups.controllers if groups else set()
            ops, plan_notes = plan_mounts(
                workspace=workspace,
                read_only=request.read_only,
                hidden=[*request.hidden, INSTALLED_PACKAGE],
                runtime=runtime_paths(),
                uid=lease.uid,
                tmp_bytes=limits.memory_mb * _MB,
            )
            notes += plan_notes
            net = "net" in caps.namespaces and not request.network
            if request.network:
                notes.append("network requested: the command has the host's network")
            flags = list(_BASE_FLAGS)
            flags += [f"--{ns}" for ns in _OPTIONAL_NAMESPACES if ns in caps.namespaces]
            if not net and "--net" in flags:
                flags.remove("--net")
            config = {
                "mode": "namespace",
                "argv": request.argv,
                "env": sandbox_env(request, workspace),
                "cwd": cwd,
                "uid": lease.uid,
                "gid": lease.gid,
                "rlimits": rlimits(
                    limits,
                    per_process_memory="memory" not in controllers,
                    nproc=None if "pids" in controllers else limits.max_processes,
                ),
                "cgroup_procs": groups.procs_files() if groups else [],
                "mount_ops": [op.to_json() for op in ops],
                "uts": "uts" in caps.namespaces,
                "loopback": net,
                "deadline_s": limits.wall_s + 10,
            }
            isolation = Isolation(
                backend=self.name,
                network="isolated" if net else "host",
                filesystem="confined",
                process_tree="pid-namespace",
                memory="cgroup" if "memory" in controllers else "rlimit-per-process",
                processes="cgroup" if "pids" in controllers else "rlimit-nproc",
                notes=notes,
            )
            launch = Launch(
                argv=[caps.unshare, *flags, "--", *launcher_argv()],
                env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"},
                config=config,
                stdin=request.stdin.encode() if request.stdin is not None else None,
                limits=limits,
                kill=_kill_tree,
            )
        except BaseException:
            _release(workspace, groups)
            raise
        return _Prepared(workspace, lease, groups, isolation, launch)

    def _cleanup(self, prepared: _Prepared) -> list[str]:
        """Make sure nothing of the sandbox runs, hand the workspace back, free the uid."""
        if prepared.cleaned:
            return []
        prepared.cleaned = True
        return _release(prepared.workspace, prepared.cgroups)

    def _finish(self, prepared: _Prepared, outcome: Outcome) -> SandboxResult:
        stats = prepared.cgroups.stats() if prepared.cgroups is not None else None
        cleanup_notes = self._cleanup(prepared)
        error = outcome.message("error")
        if error is not None:
            raise SandboxError(f"sandbox setup failed: {error.get('message')}")
        ready = outcome.message("ready") or {}
        exited = outcome.message("exit")
        if exited is None and not outcome.timed_out:
            detail = outcome.stderr.text().strip()[-1000:] or f"exit status {outcome.returncode}"
            raise SandboxError(f"the sandbox died before the command finished: {detail}")
        returncode = exited.get("returncode") if exited is not None else None
        isolation = prepared.isolation.model_copy(
            update={"notes": [*prepared.isolation.notes, *ready.get("notes", []), *cleanup_notes]}
        )
        return SandboxResult(
            returncode=returncode,
            stdout=outcome.stdout.text(),
            stderr=outcome.stderr.text(),
            wall_s=outcome.wall_s,
            timed_out=outcome.timed_out,
            killed_reason=killed_reason(
                timed_out=outcome.timed_out,
                returncode=returncode,
                oom_kills=stats.oom_kills if stats else 0,
                pids_limit_hits=stats.pids_limit_hits if stats else 0,
            ),
            isolation=isolation,
            stdout_truncated=outcome.stdout.truncated,
            stderr_truncated=outcome.stderr.truncated,
            sandbox_uid=prepared.lease.uid,
            peak_memory_mb=(
                stats.peak_memory_bytes / _MB
                if stats is not None and stats.peak_memory_bytes is not None
                else None
            ),
        )

    def run(self, request: SandboxRequest) -> SandboxResult:
        prepared = self._prepare(request)
        try:
            outcome = drive_sync(prepared.launch)
        except BaseException:
            self._cleanup(prepared)
            raise
        return self._finish(prepared, outcome)

    async def run_async(self, request: SandboxRequest) -> SandboxResult:
        preparing = asyncio.ensure_future(asyncio.to_thread(self._prepare, request))
        try:
            prepared = await asyncio.shield(preparing)
        except asyncio.CancelledError:
            await shielded(self._undo(preparing))
            raise
        try:
            outcome = await drive_async(prepared.launch)
        except BaseException:
            await shielded(asyncio.to_thread(self._cleanup, prepared))
            raise
        result: SandboxResult = await shielded(asyncio.to_thread(self._finish, prepared, outcome))
        return result

    async def _undo(self, preparing: asyncio.Future[_Prepared]) -> None:
        """Cancelled while preparing: let preparation finish in its thread, then clean up."""
        try:
            prepared = await preparing
        except Exception:
            return  # it failed and cleaned up after itself
        await asyncio.to_thread(self._cleanup, prepared)


def _release(workspace: Path, groups: cgroups.SandboxCgroups | None) -> list[str]:
    """Kill whatever is left of a sandbox; the last one in a workspace hands it back."""
    notes: list[str] = []
    if groups is not None:
        notes += groups.destroy()
    notes += _WORKSPACES.release(workspace)
    for note in notes:
        log.warning("sandbox cleanup: %s", note)
    return notes

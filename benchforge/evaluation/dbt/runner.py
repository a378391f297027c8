"""``dbt`` in a subprocess against one DuckDB file, with its artifacts kept apart from the repo.

Every invocation runs with Benchforge's own profile and target (``--profile benchforge
--target dev`` from a ``profiles.yml`` written under the work folder): whatever profile a
project names, and whatever ``profiles.yml`` it ships, the database dbt writes is ``db_path``
and nothing else. dbt runs in the work folder, so nothing lands in the caller's directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchforge.core.errors import BenchforgeError
from benchforge.core.sandbox import SandboxBackend, SandboxError, SandboxLimits, SandboxRequest

PROFILE_NAME = "benchforge"
TARGET_NAME = "dev"
PROFILE_TEMPLATE = """benchforge:
  target: dev
  outputs:
    dev:
      type: duckdb
      path: "{{{{ env_var('BENCHFORGE_DBT_DB') }}}}"
      schema: main
      threads: {threads}
"""


LOG_TAIL_CHARS = 16000  # dbt prints its error summary last: enough for a few dozen failures


class DbtRunError(BenchforgeError):
    """dbt could not be started or did not produce its artifacts."""


class NodeResult(BaseModel):
    unique_id: str
    status: str  # success | error | fail | pass | skipped | warn
    message: str | None = None
    execution_time: float = 0.0


class DbtInvocation(BaseModel):
    command: list[str]
    returncode: int
    seconds: float
    target_dir: Path
    results: list[NodeResult]
    log_tail: str  # the end of dbt's stdout + stderr (see dbt_error_summary)

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def failed(self) -> list[NodeResult]:
        return [r for r in self.results if r.status in ("error", "fail", "runtime error")]


def dbt_executable() -> str:
    candidate = Path(sys.executable).with_name("dbt")
    return str(candidate) if candidate.exists() else (shutil.which("dbt") or "dbt")


PROFILES_DIR = ".dbt"  # where a DE workspace keeps its profile (DBT_PROFILES_DIR in the sandbox)


def write_profile(profiles_dir: Path, threads: int = 2) -> Path:
    """A profiles.yml whose profile ``benchforge`` (target ``dev``) points dbt at
    ``$BENCHFORGE_DBT_DB``; returns the folder to pass as ``--profiles-dir``."""
    profiles_dir.mkdir(parents=True, exist_ok=True)
    path = profiles_dir / "profiles.yml"
    path.write_text(PROFILE_TEMPLATE.format(threads=threads))
    return profiles_dir


_counted = 0
_count_lock = threading.Lock()
_by_thread = threading.local()


def dbt_invocations() -> int:
    """How many dbt commands this process has started (sandboxed or not)."""
    with _count_lock:
        return _counted


def dbt_invocations_on_this_thread() -> int:
    """How many of them the calling thread started (a scoring chunk's own, where several
    chunks share a process)."""
    return int(getattr(_by_thread, "counted", 0))


def _count_invocation() -> None:
    global _counted
    with _count_lock:
        _counted += 1
    _by_thread.counted = dbt_invocations_on_this_thread() + 1


def run_dbt(
    project_dir: Path,
    db_path: Path,
    args: list[str],
    work_dir: Path,
    profiles_dir: Path | None = None,
    timeout_s: float = 1800,
    extra_env: dict[str, str] | None = None,
    sandbox: SandboxBackend | None = None,
    hidden: list[Path] | None = None,
    read_results: bool = True,
) -> DbtInvocation:
    """Runs ``dbt <args>`` for ``project_dir`` against the DuckDB file ``db_path``, with the
    profile ``benchforge`` and target ``dev`` (from ``profiles_dir``, which must define them;
    default: one written under ``work_dir``). A project's own ``profiles.yml`` and ``profile:``
    are never used: they could point dbt at another file.

    Target and log folders go under ``work_dir`` so a repository is never written to.
    ``read_results=False`` leaves ``results`` empty: a scorer never opens what a sandboxed
    dbt wrote (it collects ``run_results.json`` through its trust boundary instead).
    """
    _count_invocation()
    target_dir, log_dir = work_dir / "target", work_dir / "logs"
    if sandbox is None:  # sandboxed, dbt makes them: work_dir may be a tree candidate code wrote
        target_dir.mkdir(parents=True, exist_ok=True)
    if profiles_dir is None:
        profiles_dir = write_profile(work_dir / "profiles")
    command = [
        dbt_executable(),
        *args,
        "--profile",
        PROFILE_NAME,
        "--target",
        TARGET_NAME,
        "--project-dir",
        str(project_dir),
        "--profiles-dir",
        str(profiles_dir),
        "--target-path",
        str(target_dir),
        "--log-path",
        str(log_dir),
    ]
    env = {
        **os.environ,
        "BENCHFORGE_DBT_DB": str(db_path),
        "DO_NOT_TRACK": "1",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DBT_USE_COLORS": "false",
        **(extra_env or {}),
    }
    if sandbox is not None:
        # The writable root must hold the database too (scoring keeps it beside work_dir).
        root = (
            db_path.parent
            if work_dir.resolve().is_relative_to(db_path.parent.resolve())
            else work_dir
        )
        mounts = [project_dir]
        if not profiles_dir.resolve().is_relative_to(root.resolve()):
            mounts.append(profiles_dir)  # read-only: a hook cannot rewrite the profile
        return _run_sandboxed(
            sandbox,
            command,
            args,
            mounts,
            root,
            env,
            timeout_s,
            hidden or [],
            target_dir if read_results else None,
        )
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=env,
            cwd=work_dir,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise DbtRunError(f"dbt {' '.join(args)} timed out after {timeout_s:.0f}s") from err
    except OSError as err:
        raise DbtRunError(f"could not start dbt: {err}") from err
    seconds = time.perf_counter() - started
    return DbtInvocation(
        command=command,
        returncode=proc.returncode,
        seconds=seconds,
        target_dir=target_dir,
        results=_read_results(target_dir / "run_results.json"),
        log_tail=(proc.stdout + proc.stderr)[-LOG_TAIL_CHARS:],
    )


def _run_sandboxed(
    sandbox: SandboxBackend,
    command: list[str],
    args: list[str],
    read_only: list[Path],
    work_dir: Path,
    host_env: dict[str, str],
    timeout_s: float,
    hidden: list[Path],
    target_dir: Path | None,
) -> DbtInvocation:
    """Untrusted projects (agent submissions): dbt in the sandbox, the project read-only, writes
    only under ``work_dir`` (database, target, logs), no network, ``hidden`` masked."""
    passed = (
        "BENCHFORGE_DBT_DB",
        "DO_NOT_TRACK",
        "DBT_SEND_ANONYMOUS_USAGE_STATS",
        "DBT_USE_COLORS",
        "LANG",
    )
    env = {name: host_env[name] for name in passed if name in host_env}
    env |= {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work_dir),
    }
    request = SandboxRequest(
        argv=command,
        workspace=work_dir,
        read_only=read_only,
        hidden=hidden,
        env=env,
        limits=SandboxLimits(wall_s=timeout_s, memory_mb=4096, max_processes=256),
    )
    try:
        result = sandbox.run(request)
    except SandboxError as err:
        raise DbtRunError(f"could not start dbt in the sandbox: {err}") from err
    if result.timed_out:
        raise DbtRunError(f"dbt {' '.join(args)} timed out after {timeout_s:.0f}s")
    return DbtInvocation(
        command=command,
        returncode=result.returncode if result.returncode is not None else -9,
        seconds=result.wall_s,
        target_dir=target_dir or work_dir,
        results=_read_results(target_dir / "run_results.json") if target_dir else [],
        log_tail=(result.stdout + result.stderr)[-LOG_TAIL_CHARS:],
    )


def _read_results(path: Path) -> list[NodeResult]:
    if not path.exists():
        return []
    return parse_results(json.loads(path.read_text()))


def parse_results(data: dict[str, Any]) -> list[NodeResult]:
    """The node results of a ``run_results.json`` document."""
    return [
        NodeResult(
            unique_id=r["unique_id"],
            status=str(r["status"]),
            message=r.get("message"),
            execution_time=float(r.get("execution_time") or 0.0),
        )
        for r in data.get("results", [])
    ]

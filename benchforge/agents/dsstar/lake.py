"""The lake an agent reads (the task's data folder) and the one way its code runs: a whole
script, alone, in the trial's sandbox.

A script runs with the lake as its working directory (mounted read-only, so files are named by
their paths relative to the lake, the same in every trial and in the description cache), the
workspace as the only writable place, no network, and the script limits capped by the trial's.
Every run is a tool step ``python`` with the role that wrote the code."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchforge.agents.dsstar.config import ScriptLimits
from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.da import CACHE_DIR, PYTHON
from benchforge.agents.tools.de import sandbox_request
from benchforge.core.sandbox import SandboxLimits

SCRIPT_TOOL = "python"
"""The name of a script run's tool step."""


def lake_root(env: TaskEnvironment) -> Path:
    if env.data_dir is None:
        raise ValueError("this task has no data folder (a lake) to read")
    return env.data_dir


def lake_files(root: Path) -> list[str]:
    """Every file of the lake (relative POSIX paths, sorted); hidden files and folders are
    not part of it."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class ScriptRun(BaseModel):
    """One script's run: what the next role is shown (``report``) and what it did."""

    model_config = ConfigDict(frozen=True)

    code: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    killed: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def report(self, limit: int) -> str:
        """Output then errors, the end of it when long (where the result and the traceback
        are), with why it was stopped."""
        text = self.stdout
        if self.stderr.strip():
            text += ("\n" if text else "") + self.stderr
        if self.timed_out:
            text += "\n[stopped: the script ran past its time limit]"
        elif self.killed:
            text += f"\n[stopped: {self.killed}]"
        text = text.strip() or "(no output)"
        return text if len(text) <= limit else "[...]\n" + text[-limit:]


def script_limits(env: TaskEnvironment, limits: ScriptLimits) -> SandboxLimits:
    trial = env.limits.sandbox_limits(min(limits.wall_s, env.limits.action_timeout_s))
    return trial.model_copy(update={"memory_mb": min(limits.memory_mb, env.limits.memory_mb)})


async def run_script(
    env: TaskEnvironment,
    code: str,
    *,
    role: str,
    limits: ScriptLimits,
    args: Sequence[str] = (),
) -> ScriptRun:
    """Runs ``code`` (on stdin: no file is left behind) in the sandbox, recorded as a step."""
    root = lake_root(env)
    request = sandbox_request(env, [PYTHON, "-", *args], stdin=code)
    request.cwd = root
    request.limits = script_limits(env, limits)
    request.env = {
        **request.env,
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{CACHE_DIR}/matplotlib",
        "XDG_CACHE_HOME": CACHE_DIR,
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    arguments = {"code": code, **({"args": list(args)} if args else {})}
    started = env.trajectory.start("tool", SCRIPT_TOOL, arguments=arguments, role=role)
    result = await env.sandbox.run_async(request)
    run = ScriptRun(
        code=code,
        exit_code=result.returncode,
        stdout=result.stdout,
        stderr=result.stderr,
        timed_out=result.timed_out,
        killed=result.killed_reason,
    )
    env.trajectory.step(
        "tool",
        SCRIPT_TOOL,
        started,
        role=role,
        arguments=arguments,
        output=run.report(limits.output_chars),
        ok=run.ok,
        exit_code=result.returncode,
        timed_out=result.timed_out,
    )
    return run

"""The data-engineering toolset, ``de`` (after DAComp's ReAct baseline): bash, create_file,
edit_file, run_dbt and terminate, all confined to the trial workspace.

Shell commands and dbt run in the sandbox. File tools run on the host (cheap, no process per
edit), but only after resolving the path, symlinks included, inside the workspace: a link the
agent planted to ``/etc`` or to a gold folder cannot be followed.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.tool import ToolError, ToolOutcome, tool
from benchforge.agents.tools.toolsets import Toolset, register_toolset
from benchforge.core.sandbox import SandboxRequest, SandboxResult
from benchforge.evaluation.dbt.runner import PROFILES_DIR

OUTPUT_TAIL = 6000
DEV_DATABASE = "dev.duckdb"


def tool_path() -> str:
    """PATH for sandboxed commands: this interpreter's bin folder first (dbt, python)."""
    return f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"


def sandbox_env(env: TaskEnvironment) -> dict[str, str]:
    ws = env.workspace
    return {
        "PATH": tool_path(),
        "HOME": str(ws),
        "LANG": "C.UTF-8",
        "DO_NOT_TRACK": "1",
        "DBT_PROFILES_DIR": str(ws / PROFILES_DIR),
        # dbt's --profile / --target: the workspace's profile whatever the project names
        "DBT_PROFILE": "benchforge",
        "DBT_TARGET": "dev",
        "BENCHFORGE_DBT_DB": str(ws / DEV_DATABASE),
        "BENCHFORGE_WORKSPACE": str(ws),
        **({"BENCHFORGE_DATA": str(env.data_dir)} if env.data_dir is not None else {}),
        **{f"BENCHFORGE_DATA_{role.upper()}": str(p) for role, p in env.data_dirs.items()},
        **env.env,
    }


def sandbox_request(
    env: TaskEnvironment,
    argv: list[str],
    wall_s: float | None = None,
    stdin: str | None = None,
    network: bool = False,
) -> SandboxRequest:
    return SandboxRequest(
        argv=argv,
        workspace=env.workspace,
        read_only=env.data_folders(),
        hidden=list(env.hidden),
        env=sandbox_env(env),
        limits=env.limits.sandbox_limits(wall_s),
        network=network,
        stdin=stdin,
    )


def ensure_dev_database(env: TaskEnvironment) -> None:
    """The agent's own DuckDB: a copy of the raw warehouse, made on first use (many agents
    never need it, and copying per trial up front would dominate small trials)."""
    target = env.workspace / DEV_DATABASE
    source = env.data_dir / "warehouse.duckdb" if env.data_dir is not None else None
    if not target.exists() and source is not None and source.exists():
        shutil.copyfile(source, target)


def _tail(result: SandboxResult) -> str:
    text = result.stdout + (("\n" + result.stderr) if result.stderr else "")
    return text[-OUTPUT_TAIL:]


def sandboxed_outcome(env: TaskEnvironment, result: SandboxResult, output: str) -> ToolOutcome:
    """A sandboxed command's outcome: its exit code, ``output`` and why it was killed."""
    if result.timed_out:
        output += f"\n[killed: the action ran past {env.limits.action_timeout_s:g} s]"
    elif result.killed_reason:
        output += f"\n[killed: {result.killed_reason}]"
    return ToolOutcome(
        output=f"exit code {result.returncode}\n{output}",
        ok=result.returncode == 0,
        exit_code=result.returncode,
        timed_out=result.timed_out,
    )


async def _run(env: TaskEnvironment, argv: list[str]) -> ToolOutcome:
    result = await env.sandbox.run_async(sandbox_request(env, argv))
    return sandboxed_outcome(env, result, _tail(result))


def _resolve(env: TaskEnvironment, relative: str) -> Path:
    root = env.workspace.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or path == root:
        raise ToolError(f"{relative!r} is outside the workspace")
    return path


# ---------------------------------------------------------------------------------- the tools
# Their docstrings are what the model reads.


@tool
async def bash(env: TaskEnvironment, command: str) -> ToolOutcome:
    """Run a bash command in the workspace (no network). Returns exit code and the tail of
    stdout+stderr."""
    return await _run(env, ["bash", "-c", command])


@tool
def create_file(env: TaskEnvironment, path: str, content: str) -> str:
    """Create or overwrite a file (path relative to the workspace)."""
    target = _resolve(env, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    return f"wrote {path} ({len(content)} chars)"


@tool
def edit_file(env: TaskEnvironment, path: str, old: str, new: str) -> str:
    """Replace exactly one occurrence of `old` by `new` in a file."""
    target = _resolve(env, path)
    if not target.is_file():
        raise ToolError(f"{path} does not exist")
    text = target.read_text()
    count = text.count(old) if old else 0
    if count != 1:
        raise ToolError(f"`old` occurs {count} times in {path}; it must occur once")
    target.write_text(text.replace(old, new, 1))
    return f"edited {path}"


@tool
async def run_dbt(env: TaskEnvironment, args: str) -> ToolOutcome:
    """Run dbt in repo/ against your development DuckDB, e.g. args='run' or 'build --select
    my_model'."""
    ensure_dev_database(env)
    return await _run(env, ["dbt", *shlex.split(args), "--project-dir", "repo"])


@tool
def terminate(answer: str) -> ToolOutcome:
    """Finish the task; `answer` summarizes what you did."""
    return ToolOutcome(output="terminated", ok=True, terminate=True, answer=answer)


DE_INSTRUCTIONS = """You are a data engineer working in a sandboxed workspace with a dbt-duckdb \
project under repo/ (profile `benchforge`; your development database is a copy of the raw \
warehouse). There is no network. Act only through the tools; read files with bash before you \
change them, build what you change with run_dbt, and call terminate when the task is done."""

DE_TOOLSET = register_toolset(  # the DE task families' (TaskFamily.toolset)
    Toolset("de", (bash, create_file, edit_file, run_dbt, terminate), DE_INSTRUCTIONS)
)
DE_TOOLS = DE_TOOLSET.names

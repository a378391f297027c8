"""The data-engineering toolset (after DAComp's ReAct baseline): bash, create-file, edit-file,
run-dbt and terminate, all confined to the trial workspace.

Shell commands and dbt run in the sandbox. File tools run on the host (cheap, no process per
edit), but only after resolving the path, symlinks included, inside the workspace: a link the
agent planted to ``/etc`` or to a gold folder cannot be followed.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.toolsets import register_toolset
from benchforge.core.sandbox import SandboxRequest, SandboxResult

DE_TOOLS = ("bash", "create_file", "edit_file", "run_dbt", "terminate")
register_toolset("de", DE_TOOLS)  # the DE task families' (TaskFamily.toolset)
OUTPUT_TAIL = 6000
DEV_DATABASE = "dev.duckdb"
PROFILES_DIR = ".dbt"


class ToolOutcome(BaseModel):
    output: str
    ok: bool
    exit_code: int | None = None
    timed_out: bool = False
    terminate: bool = False
    answer: str | None = None


_SCHEMAS: dict[str, dict[str, Any]] = {
    "bash": {
        "description": "Run a bash command in the workspace (no network). Returns exit code "
        "and the tail of stdout+stderr.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
    "create_file": {
        "description": "Create or overwrite a file (path relative to the workspace).",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    "edit_file": {
        "description": "Replace exactly one occurrence of `old` by `new` in a file.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old": {"type": "string"},
                "new": {"type": "string"},
            },
            "required": ["path", "old", "new"],
        },
    },
    "run_dbt": {
        "description": "Run dbt in repo/ against your development DuckDB, e.g. args='run' "
        "or 'build --select my_model'.",
        "parameters": {
            "type": "object",
            "properties": {"args": {"type": "string"}},
            "required": ["args"],
        },
    },
    "terminate": {
        "description": "Finish the task; `answer` summarizes what you did.",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        },
    },
}


def tool_schemas(names: list[str] | tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, **_SCHEMAS[n]}} for n in names]


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


class DeToolbox:
    def __init__(self, env: TaskEnvironment) -> None:
        self.env = env
        self.names = tuple(n for n in DE_TOOLS if n in env.tools)

    def schemas(self) -> list[dict[str, Any]]:
        return tool_schemas(self.names)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if name not in self.names:
            return ToolOutcome(output=f"error: unknown tool {name!r}", ok=False)
        try:
            if name == "bash":
                return await self._run(["bash", "-c", str(arguments["command"])])
            if name == "run_dbt":
                ensure_dev_database(self.env)
                args = shlex.split(str(arguments.get("args", "run")))
                return await self._run(["dbt", *args, "--project-dir", "repo"])
            if name == "create_file":
                return self._create(str(arguments["path"]), str(arguments["content"]))
            if name == "edit_file":
                return self._edit(
                    str(arguments["path"]), str(arguments["old"]), str(arguments["new"])
                )
            return ToolOutcome(
                output="terminated",
                ok=True,
                terminate=True,
                answer=str(arguments.get("answer", "")),
            )
        except KeyError as missing:
            return ToolOutcome(output=f"error: missing argument {missing}", ok=False)
        except ValueError as exc:
            return ToolOutcome(output=f"error: {exc}", ok=False)

    async def _run(self, argv: list[str]) -> ToolOutcome:
        result = await self.env.sandbox.run_async(sandbox_request(self.env, argv))
        output = _tail(result)
        if result.timed_out:
            output += f"\n[killed: the action ran past {self.env.limits.action_timeout_s:g} s]"
        elif result.killed_reason:
            output += f"\n[killed: {result.killed_reason}]"
        return ToolOutcome(
            output=f"exit code {result.returncode}\n{output}",
            ok=result.returncode == 0,
            exit_code=result.returncode,
            timed_out=result.timed_out,
        )

    def _resolve(self, relative: str) -> Path:
        root = self.env.workspace.resolve()
        path = (root / relative).resolve()
        if not path.is_relative_to(root) or path == root:
            raise ValueError(f"{relative!r} is outside the workspace")
        return path

    def _create(self, relative: str, content: str) -> ToolOutcome:
        path = self._resolve(relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        return ToolOutcome(output=f"wrote {relative} ({len(content)} chars)", ok=True)

    def _edit(self, relative: str, old: str, new: str) -> ToolOutcome:
        path = self._resolve(relative)
        if not path.is_file():
            raise ValueError(f"{relative} does not exist")
        text = path.read_text()
        count = text.count(old) if old else 0
        if count != 1:
            raise ValueError(f"`old` occurs {count} times in {relative}; it must occur once")
        path.write_text(text.replace(old, new, 1))
        return ToolOutcome(output=f"edited {relative}", ok=True)

"""The data-analysis toolset (``da``): sql, python, write_file, read_file and finish.

A DA task gives the agent analysis-ready tables in ``<data_dir>/analysis.duckdb`` and asks an
open business question; the answer is a markdown report at ``<submission>/report.md`` (charts
as PNGs beside it). Both code tools run in the trial's sandbox, like the DE toolset's bash:

- ``sql`` runs one query in a sandboxed Python that opens the database ``read_only`` with
  DuckDB's external access disabled, so a query can neither change the marts (the same file
  every trial of the task reads) nor read or write other files (``COPY``, ``ATTACH``,
  ``read_csv``); the result comes back as a text table capped at ``max_rows`` rows.
- ``python`` runs a script (inline ``code`` on stdin, or a ``.py`` file of the workspace) with
  the workspace as working directory, the database path in ``ANALYSIS_DB`` and a headless
  matplotlib (``MPLBACKEND=Agg``), so charts can be saved under ``report/``.

The file tools run on the host (cheap) but only on relative paths without ``..`` that still
resolve inside the workspace once symlinks are followed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.de import ToolOutcome, sandbox_request
from benchforge.agents.tools.toolsets import register_toolset
from benchforge.core.sandbox import SandboxResult

DA_TOOLS = ("sql", "python", "write_file", "read_file", "finish")
register_toolset("da", DA_TOOLS)  # the DA task families' (TaskFamily.toolset)

ANALYSIS_DATABASE = "analysis.duckdb"
"""The analysis database in the task's data folder: the task's marts, as tables."""
REPORT_FILE = "report.md"
"""The report inside the submission folder (``report/report.md``)."""
SQL_DEFAULT_ROWS = 50
SQL_MAX_ROWS = 500
CELL_CHARS = 80
OUTPUT_TAIL = 8000
READ_CHARS = 20000
PYTHON = sys.executable
"""The interpreter sandboxed code runs on: benchforge's, with pandas, duckdb and matplotlib."""
CACHE_DIR = "/tmp/benchforge-cache"
"""matplotlib's and fontconfig's caches, outside the workspace: font lists are not the agent's
work (in the sandbox's private /tmp; rebuilding them costs well under a second)."""

# Runs inside the sandbox: reads {"db", "query", "max_rows"} on stdin, prints a text table.
_SQL_RUNNER = r"""
import json, sys
import duckdb
request = json.load(sys.stdin)
try:
    con = duckdb.connect(request["db"], read_only=True,
                         config={"enable_external_access": False})
    cursor = con.execute(request["query"])
except duckdb.Error as exc:
    print(f"{type(exc).__name__}: {exc}")
    sys.exit(1)
if cursor.description is None:
    print("(statement ran; no result set)")
    sys.exit(0)
limit, width = request["max_rows"], request["cell_chars"]
columns = [d[0] for d in cursor.description]
rows = cursor.fetchmany(limit + 1)
more = len(rows) > limit
def cell(value):
    text = "NULL" if value is None else str(value)
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 3] + "..."
table = [columns] + [[cell(v) for v in row] for row in rows[:limit]]
sizes = [max(len(r[i]) for r in table) for i in range(len(columns))]
line = lambda r: " | ".join(v.ljust(sizes[i]) for i, v in enumerate(r)).rstrip()
print(line(table[0]))
print("-+-".join("-" * s for s in sizes))
for r in table[1:]:
    print(line(r))
shown = len(table) - 1
print(f"({shown} rows; more not shown, add LIMIT or aggregate)" if more else f"({shown} rows)")
"""

_SCHEMAS: dict[str, dict[str, Any]] = {
    "sql": {
        "description": "Run one read-only DuckDB SQL query on the analysis database (the task's "
        "tables; list them with `select table_name from information_schema.tables`). Returns "
        "a text table of at most max_rows rows.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_rows": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": SQL_MAX_ROWS,
                    "description": f"default {SQL_DEFAULT_ROWS}",
                },
            },
            "required": ["query"],
        },
    },
    "python": {
        "description": "Run a Python script in the workspace (no network): inline `code`, or "
        "`path` of a .py file you wrote. pandas, duckdb and matplotlib (headless) are "
        "available; the database path is in the ANALYSIS_DB environment variable (open it "
        "with duckdb.connect(os.environ['ANALYSIS_DB'], read_only=True)). Save charts as PNG "
        "under report/. Returns exit code and the tail of stdout+stderr.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "path": {"type": "string"}},
        },
    },
    "write_file": {
        "description": "Create or overwrite a file (a relative path inside the workspace, "
        "e.g. report/report.md).",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    "read_file": {
        "description": "Read a text file of the workspace (relative path).",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    "finish": {
        "description": "Finish once report/report.md is written; `summary` states the answer "
        "in a few sentences.",
        "parameters": {
            "type": "object",
            "properties": {"summary": {"type": "string"}},
            "required": ["summary"],
        },
    },
}


def da_tool_schemas(names: list[str] | tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, **_SCHEMAS[n]}} for n in names]


def analysis_database(env: TaskEnvironment) -> Path | None:
    return env.data_dir / ANALYSIS_DATABASE if env.data_dir is not None else None


def report_path(env: TaskEnvironment) -> str:
    """The report's path relative to the workspace: ``<submission>/report.md``."""
    return f"{env.submission}/{REPORT_FILE}"


def _tail(result: SandboxResult) -> str:
    text = result.stdout + (("\n" + result.stderr) if result.stderr else "")
    return text[-OUTPUT_TAIL:]


class DaToolbox:
    """The ``da`` tools of one trial (those of ``env.tools``)."""

    def __init__(self, env: TaskEnvironment) -> None:
        self.env = env
        self.names = tuple(n for n in DA_TOOLS if n in env.tools)

    def schemas(self) -> list[dict[str, Any]]:
        return da_tool_schemas(self.names)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if name not in self.names:
            return ToolOutcome(output=f"error: unknown tool {name!r}", ok=False)
        try:
            if name == "sql":
                return await self._sql(str(arguments["query"]), arguments.get("max_rows"))
            if name == "python":
                return await self._python(arguments.get("code"), arguments.get("path"))
            if name == "write_file":
                return self._write(str(arguments["path"]), str(arguments["content"]))
            if name == "read_file":
                return self._read(str(arguments["path"]))
            return self._finish(str(arguments.get("summary", "")))
        except KeyError as missing:
            return ToolOutcome(output=f"error: missing argument {missing}", ok=False)
        except (ValueError, OSError) as exc:  # bad arguments, or a file that cannot be used
            return ToolOutcome(output=f"error: {exc}", ok=False)

    # ------------------------------------------------------------------ code tools (sandboxed)

    def _environment(self) -> dict[str, str]:
        database = analysis_database(self.env)
        return {
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": f"{CACHE_DIR}/matplotlib",
            "XDG_CACHE_HOME": CACHE_DIR,
            "PYTHONUNBUFFERED": "1",
            **({"ANALYSIS_DB": str(database)} if database is not None else {}),
        }

    async def _run(self, argv: list[str], stdin: str | None) -> ToolOutcome:
        request = sandbox_request(self.env, argv, stdin=stdin)
        request.env = {**self._environment(), **request.env}
        result = await self.env.sandbox.run_async(request)
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

    async def _sql(self, query: str, max_rows: Any) -> ToolOutcome:
        database = analysis_database(self.env)
        if database is None:
            raise ValueError("this task has no analysis database")
        if not query.strip():
            raise ValueError("the query is empty")
        rows = SQL_DEFAULT_ROWS if max_rows is None else int(max_rows)
        if not 1 <= rows <= SQL_MAX_ROWS:
            raise ValueError(f"max_rows must be between 1 and {SQL_MAX_ROWS}")
        payload = json.dumps(
            {"db": str(database), "query": query, "max_rows": rows, "cell_chars": CELL_CHARS}
        )
        return await self._run([PYTHON, "-c", _SQL_RUNNER], payload)

    async def _python(self, code: Any, path: Any) -> ToolOutcome:
        if (code is None) == (path is None):
            raise ValueError("give exactly one of `code` (the script) or `path` (a .py file)")
        if code is not None:
            return await self._run([PYTHON, "-"], str(code))
        script = self._resolve(str(path))
        if not script.is_file():
            raise ValueError(f"{path} does not exist")
        return await self._run([PYTHON, str(script)], None)

    # ------------------------------------------------------------------ file tools (host)

    def _resolve(self, relative: str) -> Path:
        """``relative`` inside the workspace: no absolute path, no ``..``, and no symlink
        leading out (a link the agent planted to /etc or to a gold folder)."""
        pure = PurePosixPath(relative)
        if not relative.strip() or pure.is_absolute() or relative.startswith("~"):
            raise ValueError(f"{relative!r}: give a path relative to the workspace")
        if ".." in pure.parts:
            raise ValueError(f"{relative!r}: '..' is not allowed")
        root = self.env.workspace.resolve()
        path = (root / pure).resolve()
        if not path.is_relative_to(root) or path == root:
            raise ValueError(f"{relative!r} is outside the workspace")
        return path

    def _write(self, relative: str, content: str) -> ToolOutcome:
        path = self._resolve(relative)
        if path.is_dir():
            raise ValueError(f"{relative} is a folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return ToolOutcome(output=f"wrote {relative} ({len(content)} chars)", ok=True)

    def _read(self, relative: str) -> ToolOutcome:
        path = self._resolve(relative)
        if not path.is_file():
            raise ValueError(f"{relative} is not a file")
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return ToolOutcome(output=f"{relative} is a binary file ({len(data)} bytes)", ok=True)
        if len(text) > READ_CHARS:
            text = text[:READ_CHARS] + f"\n[... {len(text) - READ_CHARS} more chars not shown]"
        return ToolOutcome(output=text, ok=True)

    def _finish(self, summary: str) -> ToolOutcome:
        """Refused while the report is missing: finishing without it scores nothing, so the
        agent gets a chance to write it (an agent repeating the refused call is stopped by the
        repeated-action rule)."""
        report = self.env.workspace / report_path(self.env)
        if not report.is_file() or not report.read_text(encoding="utf-8", errors="replace").strip():
            return ToolOutcome(
                output=f"error: {report_path(self.env)} is missing or empty; write the report "
                "with write_file before finishing",
                ok=False,
            )
        return ToolOutcome(output="finished", ok=True, terminate=True, answer=summary)

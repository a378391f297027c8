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
from typing import Annotated

from pydantic import Field

from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.de import sandbox_request, sandboxed_outcome
from benchforge.agents.tools.tool import ToolError, ToolOutcome, tool
from benchforge.agents.tools.toolsets import Toolset, register_toolset
from benchforge.core.sandbox import SandboxResult

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


def analysis_database(env: TaskEnvironment) -> Path | None:
    return env.data_dir / ANALYSIS_DATABASE if env.data_dir is not None else None


def report_path(env: TaskEnvironment) -> str:
    """The report's path relative to the workspace: ``<submission>/report.md``."""
    return f"{env.submission}/{REPORT_FILE}"


def _tail(result: SandboxResult) -> str:
    text = result.stdout + (("\n" + result.stderr) if result.stderr else "")
    return text[-OUTPUT_TAIL:]


def _environment(env: TaskEnvironment) -> dict[str, str]:
    database = analysis_database(env)
    return {
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{CACHE_DIR}/matplotlib",
        "XDG_CACHE_HOME": CACHE_DIR,
        "PYTHONUNBUFFERED": "1",
        **({"ANALYSIS_DB": str(database)} if database is not None else {}),
    }


async def _run(env: TaskEnvironment, argv: list[str], stdin: str | None) -> ToolOutcome:
    request = sandbox_request(env, argv, stdin=stdin)
    request.env = {**_environment(env), **request.env}
    result = await env.sandbox.run_async(request)
    return sandboxed_outcome(env, result, _tail(result))


def _resolve(env: TaskEnvironment, relative: str) -> Path:
    """``relative`` inside the workspace: no absolute path, no ``..``, and no symlink
    leading out (a link the agent planted to /etc or to a gold folder)."""
    pure = PurePosixPath(relative)
    if not relative.strip() or pure.is_absolute() or relative.startswith("~"):
        raise ToolError(f"{relative!r}: give a path relative to the workspace")
    if ".." in pure.parts:
        raise ToolError(f"{relative!r}: '..' is not allowed")
    root = env.workspace.resolve()
    path = (root / pure).resolve()
    if not path.is_relative_to(root) or path == root:
        raise ToolError(f"{relative!r} is outside the workspace")
    return path


# ---------------------------------------------------------------------------------- the tools
# Their docstrings are what the model reads. The code tools run in the sandbox, the file tools
# on the host.


@tool
async def sql(
    env: TaskEnvironment,
    query: str,
    max_rows: Annotated[
        Annotated[int, Field(ge=1, le=SQL_MAX_ROWS)] | None,
        Field(description=f"default {SQL_DEFAULT_ROWS}"),
    ] = None,
) -> ToolOutcome:
    """Run one read-only DuckDB SQL query on the analysis database (the task's tables; list
    them with `select table_name from information_schema.tables`). Returns a text table of at
    most max_rows rows."""
    database = analysis_database(env)
    if database is None:
        raise ToolError("this task has no analysis database")
    if not query.strip():
        raise ToolError("the query is empty")
    rows = SQL_DEFAULT_ROWS if max_rows is None else max_rows
    payload = json.dumps(
        {"db": str(database), "query": query, "max_rows": rows, "cell_chars": CELL_CHARS}
    )
    return await _run(env, [PYTHON, "-c", _SQL_RUNNER], payload)


@tool
async def python(
    env: TaskEnvironment, code: str | None = None, path: str | None = None
) -> ToolOutcome:
    """Run a Python script in the workspace (no network): inline `code`, or `path` of a .py
    file you wrote. pandas, duckdb and matplotlib (headless) are available; the database path
    is in the ANALYSIS_DB environment variable (open it with
    duckdb.connect(os.environ['ANALYSIS_DB'], read_only=True)). Save charts as PNG under
    report/. Returns exit code and the tail of stdout+stderr."""
    if (code is None) == (path is None):
        raise ToolError("give exactly one of `code` (the script) or `path` (a .py file)")
    if code is not None:
        return await _run(env, [PYTHON, "-"], code)
    assert path is not None
    script = _resolve(env, path)
    if not script.is_file():
        raise ToolError(f"{path} does not exist")
    return await _run(env, [PYTHON, str(script)], None)


@tool
def write_file(env: TaskEnvironment, path: str, content: str) -> str:
    """Create or overwrite a file (a relative path inside the workspace, e.g.
    report/report.md)."""
    target = _resolve(env, path)
    if target.is_dir():
        raise ToolError(f"{path} is a folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    return f"wrote {path} ({len(content)} chars)"


@tool
def read_file(env: TaskEnvironment, path: str) -> str:
    """Read a text file of the workspace (relative path)."""
    target = _resolve(env, path)
    if not target.is_file():
        raise ToolError(f"{path} is not a file")
    data = target.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"{path} is a binary file ({len(data)} bytes)"
    if len(text) > READ_CHARS:
        text = text[:READ_CHARS] + f"\n[... {len(text) - READ_CHARS} more chars not shown]"
    return text


@tool
def finish(env: TaskEnvironment, summary: str) -> ToolOutcome:
    """Finish once report/report.md is written; `summary` states the answer in a few
    sentences."""
    # Refused while the report is missing: finishing without it scores nothing, so the agent
    # gets a chance to write it (an agent repeating the refused call is stopped by the
    # repeated-action rule).
    report = env.workspace / report_path(env)
    if not report.is_file() or not report.read_text(encoding="utf-8", errors="replace").strip():
        return ToolOutcome(
            output=f"error: {report_path(env)} is missing or empty; write the report "
            "with write_file before finishing",
            ok=False,
        )
    return ToolOutcome(output="finished", ok=True, terminate=True, answer=summary)


DA_INSTRUCTIONS = """You are a data analyst answering a business question from data. The \
question is in the task; the data is a DuckDB database of analysis-ready tables, which you \
query with the sql tool (read-only) or from Python (the python tool; the database path is in \
the ANALYSIS_DB environment variable). There is no network.

Work from the data: look at the tables and their columns first, then compute every figure you \
report with a query or a script. Never estimate, invent or round away a number you could \
compute, and say which table and filter a figure comes from when it is not obvious.

Deliver a markdown report at report/report.md (write it with write_file): start with a direct \
answer to the question, then the evidence (figures, a markdown table where it helps), the \
likely causes or drivers, caveats about the data, and concrete recommendations. Save any chart \
as a PNG under report/ (matplotlib, savefig) and link it from the report with a relative path, \
e.g. ![title](chart.png). Call finish with a short summary once the report is written."""

DA_TOOLSET = register_toolset(  # the DA task families' (TaskFamily.toolset)
    Toolset("da", (sql, python, write_file, read_file, finish), DA_INSTRUCTIONS)
)
DA_TOOLS = DA_TOOLSET.names

"""The DataAgentBench toolset, ``dab`` (after DAB's ReAct agent): list_db, read_doc, query_db,
execute_python and return_answer, over a dataset's databases by logical name.

Where the databases come from: the task's data folder holds DAB's ``db_config.yaml``
(logical name -> engine and file), read from ``env.data_dir / "db_config.yaml"``
(:func:`db_config_path`) with the engine layer's loader, whose relative paths are the
config's own folder. The agent only ever sees the logical names, engines, descriptions and
table names: never a file path or a physical database name. A PostgreSQL entry is read from
the trial's own copy of its template, which the harness makes before the trial and drops after
(``TaskEnvironment.postgres``: logical name -> conninfo; ``benchforge.harness.postgres``).

- ``list_db`` and ``query_db`` run on the host through :mod:`benchforge.core.engines` (each
  engine refuses every write three ways), in a worker thread so a long query does not stop the
  trial's clock. Each call opens the trial's databases and closes them after: a tool keeps no
  state between calls but the workspace's files, so a killed trial leaks no connection. A
  refused write or a failed query is the agent's answer, not an exception.
- Every result of ``query_db`` is saved as CSV under ``query_results/<db>_<NNN>.csv`` in the
  workspace, named in the reply; a result over DAB's limits is cut in the reply (the engine
  layer's :func:`~benchforge.core.engines.present`) and the file holds all of it.
- ``execute_python`` runs code in the sandbox as the ``da`` toolset's ``python`` does, with the
  workspace as working directory and ``results`` defined: the earlier query results by name,
  as pandas DataFrames. The data folder is not mounted and not named in its environment, so
  every read of a database goes through ``query_db`` (read-only, and recorded as a step).
  Output over DAB's limit is cut the same way, the whole of it saved under ``tool_outputs/``.
- ``read_doc`` shows one of the data folder's two documents, ``schema`` (``schema.md``: the
  tables and columns as written in each database) or ``hints`` (``hints.md``: how keys are
  written, which values sit in free text, the domain's definitions), and nothing else there.
- ``return_answer`` ends the trial with the answer, which the family's validators score.

DAB's limits (:class:`DabLimits`) are the defaults; the trial's own action timeout
(``AgentLimits.action_timeout_s``) bounds each call further.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

import benchforge.synthesis.perturb  # noqa: F401  (registers the perturb derivation: the data)
from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.da import CACHE_DIR, PYTHON
from benchforge.agents.tools.de import sandbox_request, sandboxed_outcome
from benchforge.agents.tools.tool import ToolError, ToolOutcome, tool
from benchforge.agents.tools.toolsets import Toolset, register_toolset
from benchforge.core.engines import (
    DB_CONFIG_FILE,
    QueryLimits,
    QueryResult,
    TrialDatabases,
    load_db_config,
    present,
)
from benchforge.core.engines.truncation import RESULTS_DIR, save_result
from benchforge.core.records import AgentLimits

OUTPUTS_DIR = "tool_outputs"
"""Where a tool's output over the limit is saved whole (relative to the workspace)."""


class DabLimits(BaseModel):
    """DAB's limits (the reference note: 10,000 characters of tool result in context, 600 s
    per tool call, 100 iterations and an hour per trial). The tools read all but the last two;
    those are the trial's, for the family that runs the toolset (:meth:`agent_limits`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_result_chars: int = Field(
        default=10_000, ge=400, description="A tool result's characters in the agent's context."
    )
    max_result_rows: int = Field(
        default=50, ge=0, description="A query result's rows shown in the agent's context."
    )
    fetch_rows: int = Field(
        default=100_000, ge=1, description="Rows read back from the engine (and saved)."
    )
    tool_call_timeout_s: float = Field(default=600.0, gt=0, description="One tool call.")
    kept_output_bytes: int = Field(
        default=1 << 20,
        ge=1024,
        description="Of each output stream of execute_python, the end kept (and saved whole "
        "when over max_result_chars).",
    )
    max_iterations: int = Field(default=100, ge=1, description="Model calls per trial.")
    trial_wall_s: float = Field(default=3600.0, gt=0, description="One trial, wall clock.")

    def call_timeout_s(self, env: TaskEnvironment) -> float:
        return min(self.tool_call_timeout_s, env.limits.action_timeout_s)

    def agent_limits(self, **overrides: float | int) -> AgentLimits:
        """DAB's trial limits as Benchforge's: iterations, wall clock and per-call timeout."""
        return AgentLimits(
            **{
                "max_rounds": self.max_iterations,
                "wall_s": self.trial_wall_s,
                "action_timeout_s": self.tool_call_timeout_s,
                **overrides,
            }
        )


DAB_LIMITS = DabLimits()

# Runs inside the sandbox: the code on stdin, with `results` defined; a traceback shows the
# agent's code only (as <code>), not this runner.
_PYTHON_RUNNER = r"""
import sys, traceback
from collections.abc import Mapping
from pathlib import Path

class QueryResults(Mapping):
    '''Earlier query_db results by name, e.g. results["sales_001"], as pandas DataFrames.'''

    def __init__(self, folder):
        self._folder = Path(folder)

    def __getitem__(self, name):
        path = self._folder / f"{name}.csv"
        if not path.is_file():
            raise KeyError(f"{name!r}: the results are {', '.join(self) or 'none yet'}")
        import pandas
        return pandas.read_csv(path)

    def __iter__(self):
        return iter(sorted(p.stem for p in self._folder.glob("*.csv")))

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return f"results({', '.join(self)})"

code = sys.stdin.read()
namespace = {"__name__": "__main__", "results": QueryResults(sys.argv[1])}
try:
    exec(compile(code, "<code>", "exec"), namespace)
except SystemExit:
    raise
except BaseException as exc:
    sys.stdout.flush()
    traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
    sys.exit(1)
"""


def db_config_path(env: TaskEnvironment) -> Path:
    """The task's ``db_config.yaml``: in its data folder."""
    if env.data_dir is None:
        raise ToolError("this task has no databases")
    return env.data_dir / DB_CONFIG_FILE


def open_databases(env: TaskEnvironment) -> TrialDatabases:
    """The trial's databases, under DAB's limits and the trial's action timeout."""
    config = load_db_config(db_config_path(env))
    query_limits = QueryLimits(
        fetch_rows=DAB_LIMITS.fetch_rows, timeout_s=DAB_LIMITS.call_timeout_s(env)
    )
    return TrialDatabases(config, postgres=env.postgres, limits=query_limits)


def _catalogue(env: TaskEnvironment, db: str | None) -> str:
    with open_databases(env) as databases:
        names = databases.names()
        if db is not None and db not in names:
            raise ToolError(f"no database named {db!r}: the databases are {', '.join(names)}")
        blocks = []
        for name in [db] if db is not None else names:
            entry = databases.config.databases[name]
            heading = f"{name} ({entry.engine})" + (
                f": {entry.description}" if entry.description else ""
            )
            tables = databases.list_tables(name)
            blocks.append(f"{heading}\n  tables: {', '.join(tables) or '(none)'}")
    return "\n".join(blocks)


def _query(env: TaskEnvironment, db: str, sql: str) -> ToolOutcome:
    with open_databases(env) as databases:
        outcome = databases.query_db(db, sql)
    view = present(
        outcome,
        env.workspace,
        db_name=db,
        max_rows=DAB_LIMITS.max_result_rows,
        max_chars=DAB_LIMITS.max_result_chars,
    )
    text = view.text
    if isinstance(outcome, QueryResult) and view.saved_file is None:
        saved = save_result(outcome, env.workspace, db)
        text += f"\n[saved as {saved}; in execute_python: results[{Path(saved).stem!r}]]"
    return ToolOutcome(output=text, ok=isinstance(outcome, QueryResult))


def cut_output(env: TaskEnvironment, text: str, tool_name: str, clipped: bool = False) -> str:
    """``text`` if it fits DAB's limit; else its end (where a traceback is), with the whole
    of it saved under ``tool_outputs/`` and named. ``clipped``: ``text`` is already only the
    end of the output (the sandbox kept that much)."""
    limit = DAB_LIMITS.max_result_chars
    if len(text) <= limit:
        return text
    folder = env.workspace / OUTPUTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    number = 1 + sum(1 for _ in folder.glob(f"{tool_name}_*.txt"))
    while True:
        path = folder / f"{tool_name}_{number:03d}.txt"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            number += 1
            continue
        break
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    saved = path.relative_to(env.workspace).as_posix()

    def note(shown: int) -> str:
        whole = "the last part of the output that was kept" if clipped else "the whole output"
        return (
            f"[truncated: the last {shown} of {len(text)} characters shown; {whole} "
            f"is saved in your workspace as {saved}]\n"
        )

    shown = limit - len(note(limit))  # the note's figure is no longer than `limit`'s
    return note(shown) + text[-shown:]


# ---------------------------------------------------------------------------------- the tools
# Their docstrings are what the model reads.


@tool
async def list_db(env: TaskEnvironment, db: str | None = None) -> str:
    """List the databases (their names, engines and descriptions) and their tables. Give `db`
    to list one database only."""
    return await asyncio.to_thread(_catalogue, env, db)


DOCS = {"schema": "schema.md", "hints": "hints.md"}


@tool
def read_doc(env: TaskEnvironment, doc: str) -> str:
    """Read one of the dataset's documents: "schema" (every database's tables and columns as
    written there) or "hints" (how join keys are written in each database, which values are
    only in free text, and the definitions the questions use).

    Args:
        doc: "schema" or "hints".
    """
    if doc not in DOCS:
        raise ToolError(f"no document {doc!r}: the documents are {', '.join(DOCS)}")
    if env.data_dir is None:
        raise ToolError("this task has no databases")
    path = env.data_dir / DOCS[doc]
    if not path.is_file():
        raise ToolError(f"this dataset has no {doc} document")
    return cut_output(env, path.read_text(encoding="utf-8"), "read_doc")


@tool
async def query_db(env: TaskEnvironment, db: str, sql: str) -> ToolOutcome:
    """Run one read-only SQL query on one database, in its engine's dialect (DuckDB, SQLite or
    PostgreSQL, as list_db says). Every result is saved as CSV under query_results/ (the reply
    names the file); a long result is cut in the reply, and the file holds all of it.

    Args:
        db: the database's name, as list_db gives it.
        sql: one statement that reads (SELECT, WITH, ...).
    """
    if not sql.strip():
        raise ToolError("the query is empty")
    return await asyncio.to_thread(_query, env, db, sql)


@tool
async def execute_python(env: TaskEnvironment, code: str) -> ToolOutcome:
    """Run Python code in the workspace (no network, no database access: query with
    query_db). pandas and pyarrow are available. Earlier query_db results are in `results`,
    a mapping from a result's name to a pandas DataFrame (results['sales_001'] is
    query_results/sales_001.csv, read back from CSV: parse dates yourself). Print what you
    need to see; returns the exit code and the output."""
    request = sandbox_request(env, [PYTHON, "-c", _PYTHON_RUNNER, RESULTS_DIR], stdin=code)
    # The databases stay out of reach: no data folder mounted, none named.
    request.read_only = []
    request.env = {
        **{k: v for k, v in request.env.items() if not k.startswith("BENCHFORGE_DATA")},
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{CACHE_DIR}/matplotlib",
        "XDG_CACHE_HOME": CACHE_DIR,
        "PYTHONUNBUFFERED": "1",
    }
    request.limits = env.limits.sandbox_limits(DAB_LIMITS.call_timeout_s(env)).model_copy(
        update={"output_limit_bytes": DAB_LIMITS.kept_output_bytes}
    )
    (env.workspace / RESULTS_DIR).mkdir(exist_ok=True)
    result = await env.sandbox.run_async(request)
    output = result.stdout + (("\n" + result.stderr) if result.stderr else "")
    clipped = result.stdout_truncated or result.stderr_truncated
    return sandboxed_outcome(env, result, cut_output(env, output, "execute_python", clipped))


@tool
def return_answer(answer: str) -> ToolOutcome:
    """Give the final answer to the question and finish. State the answer itself (the value,
    or every value of a list), not how you found it."""
    if not answer.strip():
        raise ToolError("the answer is empty")
    return ToolOutcome(output="answer recorded", ok=True, terminate=True, answer=answer)


DAB_INSTRUCTIONS = """You are a data agent answering a question over several databases, which \
may be of different engines (DuckDB, SQLite, PostgreSQL). There is no network.

Start with list_db to see the databases and their tables, and read_doc for the schema \
and the hints (how keys are written, definitions); read a table's columns and a few \
rows with query_db before relying on them. query_db is read-only and runs one statement in \
the database's own SQL dialect. To combine databases, query each one and join the saved \
results in execute_python (pandas; earlier results are in `results`). Join keys may be \
formatted differently in each database (prefixes, padding, trailing spaces), and some values \
may only appear inside free text: check before you join, and compute every figure from the \
data.

When you know the answer, call return_answer with it: the value itself (or every value, for \
a list), without hedging."""

DAB_TOOLSET = register_toolset(  # the dab_query family's (TaskFamily.toolset)
    Toolset("dab", (list_db, read_doc, query_db, execute_python, return_answer), DAB_INSTRUCTIONS)
)
DAB_TOOLS = DAB_TOOLSET.names

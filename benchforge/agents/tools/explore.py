"""The exploration toolset (``explore``, DataClawBench's setup): a read-only view of the task's
exploration environment (folders of CSV tables and Markdown texts, no documentation) and a
sandboxed Python.

- ``list_files`` and ``read_head`` run on the host, on paths relative to the environment only
  (no absolute path, no ``..``, no symlink leading out): the record of the noise lies beside
  the environment, never inside it, and is out of their reach.
- ``python`` runs code in the trial's sandbox with the workspace as working directory and the
  environment mounted read-only, its path in ``DATA_DIR`` (pandas and duckdb are available).
- ``return_answer`` ends the trial with the answer, which the family scores.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated

from pydantic import Field

import benchforge.synthesis.explore_env  # noqa: F401  (registers the environment derivation)
from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.da import CACHE_DIR, PYTHON
from benchforge.agents.tools.de import sandbox_request, sandboxed_outcome
from benchforge.agents.tools.tool import ToolError, ToolOutcome, tool
from benchforge.agents.tools.toolsets import Toolset, register_toolset

LISTED_ENTRIES = 60
HEAD_LINE_CHARS = 400
OUTPUT_CHARS = 10_000


def _data_root(env: TaskEnvironment) -> Path:
    if env.data_dir is None:
        raise ToolError("this task has no data folder")
    return env.data_dir.resolve()


def _inside(env: TaskEnvironment, relative: str) -> Path:
    """``relative`` inside the environment: no absolute path, no ``..``, no link leading out."""
    root = _data_root(env)
    pure = PurePosixPath(relative.strip() or ".")
    if pure.is_absolute() or relative.startswith("~"):
        raise ToolError(f"{relative!r}: give a path relative to the data folder")
    if ".." in pure.parts:
        raise ToolError(f"{relative!r}: '..' is not allowed")
    path = (root / pure).resolve()
    if not path.is_relative_to(root):
        raise ToolError(f"{relative!r} is outside the data folder")
    return path


@tool
def list_files(env: TaskEnvironment, path: str = "") -> str:
    """List a folder of the data (a path relative to the data folder; empty: its top). Folders
    end with '/' and show how many entries they hold; files show their size in bytes."""
    folder = _inside(env, path)
    if not folder.is_dir():
        raise ToolError(f"{path!r} is not a folder")
    entries = sorted(folder.iterdir())
    lines = []
    for entry in entries[:LISTED_ENTRIES]:
        if entry.is_dir():
            lines.append(f"{entry.name}/  ({sum(1 for _ in entry.iterdir())} entries)")
        else:
            lines.append(f"{entry.name}  ({entry.stat().st_size} bytes)")
    if len(entries) > LISTED_ENTRIES:
        lines.append(f"[... {len(entries) - LISTED_ENTRIES} more entries not shown]")
    return "\n".join(lines) or "(empty folder)"


@tool
def read_head(
    env: TaskEnvironment,
    path: str,
    lines: Annotated[int, Field(ge=1, le=200, description="how many lines")] = 20,
) -> str:
    """Show the first lines of a file of the data (a path relative to the data folder): a
    CSV's header and first rows, or a text's beginning."""
    target = _inside(env, path)
    if not target.is_file():
        raise ToolError(f"{path!r} is not a file")
    shown: list[str] = []
    with target.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if len(shown) == lines:
                shown.append("[... more lines not shown]")
                break
            text = line.rstrip("\n")
            shown.append(text if len(text) <= HEAD_LINE_CHARS else text[:HEAD_LINE_CHARS] + "...")
    return "\n".join(shown) or "(empty file)"


@tool
async def python(env: TaskEnvironment, code: str) -> ToolOutcome:
    """Run Python code (no network) with the workspace as working directory; the data folder
    is read-only at os.environ['DATA_DIR'] (e.g. pandas.read_csv(os.path.join(
    os.environ['DATA_DIR'], 'database', ...))). pandas and duckdb are available. Print what
    you need to see; returns the exit code and the output."""
    if not code.strip():
        raise ToolError("the code is empty")
    root = _data_root(env)
    request = sandbox_request(env, [PYTHON, "-"], stdin=code)
    request.env = {
        **request.env,
        "DATA_DIR": str(root),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{CACHE_DIR}/matplotlib",
        "XDG_CACHE_HOME": CACHE_DIR,
        "PYTHONUNBUFFERED": "1",
    }
    result = await env.sandbox.run_async(request)
    output = result.stdout + (("\n" + result.stderr) if result.stderr else "")
    if len(output) > OUTPUT_CHARS:
        output = output[:OUTPUT_CHARS] + f"\n[... {len(output) - OUTPUT_CHARS} more chars]"
    return sandboxed_outcome(env, result, output)


@tool
def return_answer(answer: str) -> ToolOutcome:
    """Give the final answer to the question and finish: the values the guidelines ask for,
    without hedging."""
    if not answer.strip():
        raise ToolError("the answer is empty")
    return ToolOutcome(output="answer recorded", ok=True, terminate=True, answer=answer)


EXPLORE_INSTRUCTIONS = """You are a data agent answering an exploratory analysis question. \
The data is a read-only folder of CSV tables and Markdown texts with no schema documentation; \
there is no network. Look before you compute: list_files to see the folders, read_head to see \
a table's header and first rows, then compute with python (pandas; the folder is at \
os.environ['DATA_DIR']).

The data is noisy on purpose: amounts may be written in mixed units (a unit column or a \
suffix), tables may mix grand-total rows with detail rows, names may appear in several \
languages or forms, values may be missing (empty, NA, -), some tables are regional subsets of \
another, aggregates may hold both regional and national rows, and some tables are forecasts or \
unaudited copies. Check each of these before you rely on a figure, and state the intermediate \
figures you compute on the way.

When you know the answer, call return_answer with it, in the format the task asks for."""

EXPLORE_TOOLSET = register_toolset(  # the explore_milestone family's (TaskFamily.toolset)
    Toolset("explore", (list_files, read_head, python, return_answer), EXPLORE_INSTRUCTIONS)
)
EXPLORE_TOOLS = EXPLORE_TOOLSET.names

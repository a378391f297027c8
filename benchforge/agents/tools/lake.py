"""The data-lake toolset, ``lake`` (the ``lake_pipeline`` family's): list_files, read_file,
execute_python and submit_answer, over the lake in the task's data folder.

- ``list_files`` and ``read_file`` read the lake on the host, inside the data folder only (a
  path that leaves it is refused): the file list with sizes; a file's first lines (text files
  in their encoding, found from a BOM or tried as UTF-8 then Latin-1) or, for Parquet, its
  columns and first rows.
- ``execute_python`` runs code in the sandbox with the lake as its working directory, mounted
  read-only, and the workspace the only writable place (``$BENCHFORGE_WORKSPACE``); no network.
- ``submit_answer`` ends the trial with the answer and keeps the pipeline's code as
  ``answer/pipeline.py``, which the family's pipeline-design judge reads.

Importing this module registers the lake derivations (the family builds its lakes through them).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

import benchforge.synthesis.lake  # noqa: F401  (registers the lake derivations: the data)
from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.da import CACHE_DIR, PYTHON
from benchforge.agents.tools.de import sandbox_request, sandboxed_outcome
from benchforge.agents.tools.tool import ToolError, ToolOutcome, tool
from benchforge.agents.tools.toolsets import Toolset, register_toolset

SUBMISSION = "answer"  # the lake_pipeline family's submission folder
PIPELINE_FILE = "pipeline.py"
OUTPUT_CHARS = 8000
MAX_LINES = 200


def lake_root(env: TaskEnvironment) -> Path:
    if env.data_dir is None:
        raise ToolError("this task has no data lake")
    return env.data_dir


def _inside(env: TaskEnvironment, path: str) -> Path:
    root = lake_root(env).resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise ToolError(f"{path!r} is not in the lake")
    if not target.is_file():
        raise ToolError(f"no file {path!r} in the lake (list_files names them)")
    return target


@tool
def list_files(env: TaskEnvironment, folder: str = "") -> str:
    """List the lake's files (relative paths and sizes in bytes), under ``folder`` if given."""
    root = lake_root(env)
    base = (root / folder).resolve() if folder else root.resolve()
    if base != root.resolve() and root.resolve() not in base.parents:
        raise ToolError(f"{folder!r} is not in the lake")
    files = sorted(p for p in base.rglob("*") if p.is_file())
    if not files:
        return "no files"
    return "\n".join(
        f"{p.relative_to(root.resolve()).as_posix()}\t{p.stat().st_size}" for p in files
    )


@tool
def read_file(env: TaskEnvironment, path: str, lines: int = 20) -> str:
    """Show the first ``lines`` lines of a lake file (text, CSV, JSON, Markdown), or the
    columns and first rows of a Parquet file.

    Args:
        path: the file's path relative to the lake, as list_files gives it.
        lines: how many lines (or rows) to show, at most 200.
    """
    target = _inside(env, path)
    lines = max(1, min(lines, MAX_LINES))
    if target.suffix == ".parquet":
        with duckdb.connect() as con:
            relation = con.execute(f"SELECT * FROM read_parquet(?) LIMIT {lines}", [str(target)])
            names = [d[0] for d in relation.description or []]
            rows = relation.fetchall()
        return "\n".join(["\t".join(names), *("\t".join(str(v) for v in r) for r in rows)])
    text, encoding = decode(target.read_bytes())
    head = "\n".join(text.splitlines()[:lines])
    return f"[{encoding}]\n{head}"[:OUTPUT_CHARS]


def decode(raw: bytes) -> tuple[str, str]:
    """``raw`` as text and the encoding read: a BOM's, else UTF-8, else Latin-1."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", errors="replace"), "utf-8-sig"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16", errors="replace"), "utf-16"
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1 (not UTF-8)"


@tool
async def execute_python(env: TaskEnvironment, code: str) -> ToolOutcome:
    """Run Python code in a sandbox whose working directory is the lake (read-only: name files
    by their lake paths). pandas, pyarrow and duckdb are available; write files only under
    the workspace, os.environ['BENCHFORGE_WORKSPACE']. No network. Print what you need to
    see; returns the exit code and the output."""
    request = sandbox_request(env, [PYTHON, "-"], stdin=code)
    request.cwd = lake_root(env)
    request.env = {
        **request.env,
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{CACHE_DIR}/matplotlib",
        "XDG_CACHE_HOME": CACHE_DIR,
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    result = await env.sandbox.run_async(request)
    output = result.stdout + (("\n" + result.stderr) if result.stderr else "")
    if len(output) > OUTPUT_CHARS:
        output = "[...]\n" + output[-OUTPUT_CHARS:]
    return sandboxed_outcome(env, result, output)


@tool
def submit_answer(env: TaskEnvironment, answer: str, pipeline_code: str) -> ToolOutcome:
    """Give the final answer and the Python pipeline that computed it, and finish.

    Args:
        answer: the value alone (a number without units, a string, or a JSON list).
        pipeline_code: the whole Python pipeline, from reading the files to the answer.
    """
    if not answer.strip():
        raise ToolError("the answer is empty")
    folder = env.workspace / SUBMISSION
    folder.mkdir(exist_ok=True)
    (folder / PIPELINE_FILE).write_text(pipeline_code, encoding="utf-8")
    return ToolOutcome(output="answer recorded", ok=True, terminate=True, answer=answer)


LAKE_INSTRUCTIONS = """You are a data agent answering a question over a data lake: a folder of \
files of mixed formats (CSV with various delimiters, encodings and notes above the header, JSON, \
JSON Lines, Parquet, reports in prose). There is no network.

Start with list_files, look at the files you may need with read_file, then compute the answer \
with execute_python (its working directory is the lake). Some files are stale copies, revised \
re-exports or overlapping periods of others: choose the files that hold the data once. Compute \
every figure from the files.

When you know the answer, call submit_answer with the value alone (no hedging) and the whole \
pipeline's Python code."""

LAKE_TOOLSET = register_toolset(  # the lake_pipeline family's (TaskFamily.toolset)
    Toolset("lake", (list_files, read_file, execute_python, submit_answer), LAKE_INSTRUCTIONS)
)
LAKE_TOOLS = LAKE_TOOLSET.names

"""What the agent sees of a query's outcome: a result over ``max_rows`` rows or ``max_chars``
characters is cut in the text, and the whole result (as far as it was fetched) is written as
CSV into the trial's workspace, named in the text so the agent can load it."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from benchforge.core.engines.models import QueryOutcome, QueryRefused, QueryResult

RESULTS_DIR = "query_results"
DEFAULT_MAX_ROWS = 50
DEFAULT_MAX_CHARS = 10_000
MIN_MAX_CHARS = 400  # room for the note that names the file
CELL_SEPARATOR = " | "
NULL_TEXT = "NULL"


class AgentView(BaseModel):
    """The text that goes into the agent's context, and where the full result went."""

    text: str
    truncated: bool = False
    saved_file: str | None = Field(
        default=None, description="The full result's CSV, relative to the workspace."
    )


def present(
    outcome: QueryOutcome,
    workspace: Path,
    *,
    db_name: str,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> AgentView:
    if max_chars < MIN_MAX_CHARS or max_rows < 0:
        raise ValueError(f"max_chars must be at least {MIN_MAX_CHARS}, max_rows at least 0")
    if not isinstance(outcome, QueryResult):
        word = "Refused" if isinstance(outcome, QueryRefused) else "Error"
        return AgentView(text=_cut(f"{word}: {outcome.message}", max_chars))
    summary = _summary(outcome)
    lines = [CELL_SEPARATOR.join(outcome.columns)]
    lines += [_line(row) for row in outcome.rows[:max_rows]]
    full = "\n".join([summary, *lines])
    if len(full) <= max_chars and len(outcome.rows) <= max_rows and not outcome.truncated:
        return AgentView(text=full)
    saved = save_result(outcome, workspace, db_name)
    note = _note(outcome, saved)
    budget = max_chars - len(summary) - len(note) - 2
    shown: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget:
            if not shown:  # the header alone is too wide: show what fits of it
                shown.append(_cut(line, budget))
            break
        shown.append(line)
        used += len(line) + 1
    rows_shown = max(0, len(shown) - 1)
    note = note.replace("{shown}", str(rows_shown))
    text = "\n".join([summary, *shown, note])
    return AgentView(text=text, truncated=True, saved_file=saved)


def save_result(result: QueryResult, workspace: Path, db_name: str) -> str:
    """Writes ``result`` as CSV under ``workspace/query_results/`` (a new file each time);
    returns its path relative to ``workspace``."""
    folder = workspace / RESULTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    number = 1 + sum(1 for _ in folder.glob(f"{db_name}_*.csv"))
    while True:
        path = folder / f"{db_name}_{number:03d}.csv"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            number += 1
            continue
        break
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(result.columns)
        writer.writerows(result.rows)
    return path.relative_to(workspace).as_posix()


def _summary(result: QueryResult) -> str:
    count = f"at least {result.row_count}" if result.truncated else str(result.row_count)
    plural = "" if result.row_count == 1 and not result.truncated else "s"
    return f"{count} row{plural}, {len(result.columns)} columns ({result.elapsed_s:.3f} s)"


def _note(result: QueryResult, saved: str) -> str:
    stored = f"all {result.row_count} rows"
    if result.truncated:
        stored = f"the first {result.row_count} rows (the fetch limit stopped reading there)"
    return (
        f"[truncated: {{shown}} of {result.row_count} rows shown; {stored} are saved in your "
        f"workspace as {saved} (CSV, header row)]"
    )


def _line(row: tuple[Any, ...]) -> str:
    return CELL_SEPARATOR.join(NULL_TEXT if v is None else str(v) for v in row)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"

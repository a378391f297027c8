"""The lines of dbt's output that say what went wrong, for error messages and score reports.

dbt prints a heading ("Runtime Error", "Compilation Error in model x (path)", "Parsing Error",
"Database Error in model ...", "Failure in test ...") and the real reason on the indented lines
under it ("Could not find profile named 'x'", a DuckDB binder error, ...). Reports used to keep
only the heading, or the last line mentioning "error" ("Done. PASS=6 ... ERROR=1"); these
helpers keep the heading with its reason.
"""

from __future__ import annotations

import re

from benchforge.evaluation.dbt.runner import DbtInvocation

_TIMESTAMP = re.compile(r"^\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:\s+|$)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_HEADING = re.compile(
    r"^(?:(?:Runtime|Compilation|Database|Parsing|Dependency|Internal|Env Var|Project|Unhandled"
    r"|Validation|Contract|Semantic)\s+)?Error\b(?: in \w+ .*)?$"
    r"|^Failure in (?:test|unit_test|snapshot|seed) .*$"
    r"|^Error: .+$"
)
_NOISE = re.compile(
    r"^(?:\^+|-{5,}|LINE \d+:.*|compiled code at .*|Raw Error:|\d+\s+\|.*|Done\. PASS=.*"
    r"|Encountered an error:|Completed with .*|Failure in model .*|Failure in seed .*)$"
)
DETAIL_LINES = 2  # reason lines kept under each heading
MAX_CHARS = 1500


def _clean(line: str) -> str:
    return _TIMESTAMP.sub("", _ANSI.sub("", line)).rstrip()


def error_lines(output: str) -> list[str]:
    """``heading: reason`` for each error heading of dbt's ``output``, in order, without
    repeats (dbt prints an error once as it happens and again in its closing summary)."""
    lines = [_clean(line) for line in output.splitlines()]
    found: list[str] = []
    for i, line in enumerate(lines):
        heading = line.strip()
        if not _HEADING.match(heading):
            continue
        details: list[str] = []
        for following in lines[i + 1 :]:
            text = following.strip()
            if _HEADING.match(text) or (not text and details):
                break
            if text and not _NOISE.match(text):
                details.append(text)
            if len(details) == DETAIL_LINES:
                break
        entry = f"{heading}: {' '.join(details)}" if details else heading
        if entry not in found:
            found.append(entry)
    return found


def dbt_error_summary(invocation: DbtInvocation) -> str:
    """What went wrong in ``invocation``, in dbt's own words: each error heading with the line
    or two under it (``Runtime Error: Could not find profile named 'shop'``). Without a
    heading (a crash, a killed process), the last meaningful output lines; empty when dbt
    succeeded and reported no error."""
    found = error_lines(invocation.log_tail)
    if not found:
        if invocation.ok:
            return ""
        tail = [
            text
            for text in (_clean(line).strip() for line in invocation.log_tail.splitlines())
            if text and not _NOISE.match(text)
        ]
        found = tail[-3:] or [f"dbt exited with status {invocation.returncode} and no output"]
    summary = "; ".join(found)
    return summary if len(summary) <= MAX_CHARS else summary[: MAX_CHARS - 3] + "..."

"""Reports that restate the rubric: lines that echo a criterion, and when they cannot count.

Copying eight consecutive words of a criterion is caught by ``evidence.copies_rubric``. A
reworded criterion ("Our analysis finds: a return of 2.10x for hosted events ...") is not, and
an honest report's line may legitimately read much like the criterion it meets. The two differ
in how much of the report does it: measured on the shipped tasks, a reference echoes at most 6 of
its 17 positive criteria (35%), its baselines at most 2; a report made by rewording the rubric
echoes nearly all of them.

A line *echoes* a criterion when its content words (4+ letters, compared on their first five
letters, numbers and the anchor's text left out) come at least ``ECHO_CONTAINMENT`` from that
criterion and cover at least ``ECHO_COVERAGE`` of the criterion's own. When the lines of a report
echo at least ``ECHO_SHARE`` of the rubric's positive criteria, the report restates the rubric:
no quote from an echoing line backs an award (flag ``echoes_rubric``). Below that share nothing
changes. A report reworded beyond these thresholds is a report making those claims in its own
words; the rubric is never shown to the agent, which is what keeps that from being an attack.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from benchforge.evaluation.judges.evidence import text_units

ECHO_CONTAINMENT = 0.8
ECHO_COVERAGE = 0.6
ECHO_SHARE = 0.5
MIN_WORDS = 3
_WORD = re.compile(r"[a-z]{4,}")


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.lower())}


def echoes(line: str, criterion: str) -> bool:
    """``line`` rewords ``criterion`` (see the module docstring)."""
    words, target = _stems(line), _stems(criterion)
    if len(words) < MIN_WORDS or not target:
        return False
    shared = len(words & target)
    return shared / len(words) >= ECHO_CONTAINMENT and shared / len(target) >= ECHO_COVERAGE


def echo_lines(text: str, criteria: Sequence[str], strip: Iterable[str] = ()) -> list[str]:
    """The units of ``text`` that echo a criterion, when they echo at least ``ECHO_SHARE`` of
    ``criteria``; [] otherwise. ``strip``: texts (anchor values) removed before comparing."""
    removed = [s for s in strip if s]

    def clean(value: str) -> str:
        for s in removed:
            value = value.replace(s, " ")
        return value

    targets = [clean(c) for c in criteria]
    if not targets:
        return []
    units = text_units(text)
    echoed: set[int] = set()
    lines: list[str] = []
    for unit in units:
        hits = [i for i, c in enumerate(targets) if echoes(clean(unit), c)]
        if hits:
            echoed.update(hits)
            lines.append(unit)
    if len(echoed) < ECHO_SHARE * len(targets):
        return []
    return lines


def quote_echoes(quote: str, lines: Sequence[str]) -> bool:
    """``quote`` lies within one of the echoing ``lines`` (whitespace aside)."""
    needle = " ".join(quote.split())
    return bool(needle) and any(needle in " ".join(line.split()) for line in lines)

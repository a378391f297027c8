"""The code side of judging: the checks that hold whatever the judge says.

A judge's award counts only if its evidence survives these checks, all done by code on the
sanitized output (``sanitize.sanitize_output``):

- ``quote_found``: the quote is in the output verbatim (only runs of whitespace may differ);
- ``copies_rubric``: the quote does not copy a run of ``run`` (8) consecutive words of the rubric
  (an output that pastes the criteria would otherwise "match" every item);
- ``states_anchor``: for an item that cites an anchor, the quote states the anchor's value within
  its tolerance (numbers normalized: thousands separators, ``%``, ``$``/``€``/``£``, ``k``/``M``/
  ``B``/``bn`` and word suffixes; a percent and a fraction match when 100 times apart);
- ``is_hedge``: the stating line offers alternatives instead of one finding (see its docstring).

``text_units`` is the unit split shared with the mock judge (THE FAITHFUL MOCK JUDGE RULE): the
judge's evidence for an item is one such unit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import NamedTuple

from benchforge.evaluation.judges.models import AnchorValue

LONG_LINE_CHARS = 300
COPY_RUN_WORDS = 8

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SUFFIX = {
    "k": 1e3,
    "K": 1e3,
    "thousand": 1e3,
    "M": 1e6,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "B": 1e9,
    "bn": 1e9,
    "billion": 1e9,
}
_NUMBER = re.compile(
    r"(?P<neg>(?<![\w.,])[-\u2212])?"
    r"(?P<cur>[$€£])?"
    r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w,]*\d)"
    r"(?:(?P<pct>\s?%)|(?P<suf>k|K|M|B|bn|mn|m)(?![A-Za-z])"
    r"|\s(?P<word>thousand|million|billion)\b)?"
)
_WORD = re.compile(r"\w+")


class NumberMention(NamedTuple):
    """One number as written: its value (suffixes applied; a percent stays in percent units),
    whether it was a percent, and where it sits in the text."""

    value: float
    percent: bool
    start: int
    end: int
    raw: str


def find_numbers(text: str, *, paren_negative: bool = False) -> list[NumberMention]:
    """Every number written in ``text``: ``1,204``, ``-3.5``, ``12.4%``, ``$1.2M``, ``€3bn``,
    ``4 million``. ``paren_negative``: ``(1,204)`` reads as -1204 (accounting style). Digits
    glued to letters (``Q3``, ``H2O``, ``v2``) are not numbers."""
    found: list[NumberMention] = []
    for match in _NUMBER.finditer(text):
        raw_num = match.group("num")
        value = float(raw_num.replace(",", ""))
        suffix = match.group("suf") or match.group("word")
        if suffix:
            value *= _SUFFIX[suffix]
        negative = bool(match.group("neg"))
        start, end = match.start(), match.end()
        if paren_negative and text[start - 1 : start] == "(" and text[end : end + 1] == ")":
            negative = True
        found.append(
            NumberMention(
                value=-value if negative else value,
                percent=bool(match.group("pct")),
                start=start,
                end=end,
                raw=match.group(0),
            )
        )
    return found


def extract_numbers(text: str, *, paren_negative: bool = False) -> list[float]:
    """The values of ``find_numbers`` (percents in percent units: ``12.4%`` is 12.4)."""
    return [m.value for m in find_numbers(text, paren_negative=paren_negative)]


def normalize_number(token: str) -> float | None:
    """One written number (``"$1.2M"``, ``"12.4%"``, ``"1,204"``, ``"-3.5"``) as a float, or None
    when ``token`` is not exactly one number."""
    token = token.strip()
    mentions = find_numbers(token)
    if len(mentions) == 1 and mentions[0].start == 0 and mentions[0].end == len(token):
        return mentions[0].value
    return None


# --------------------------------------------------------------------------- units and quotes


def text_units(text: str) -> list[str]:
    """The units a judge quotes: non-empty lines (stripped), and a line longer than 300
    characters split further into sentences."""
    units: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if len(line) <= LONG_LINE_CHARS:
            units.append(line)
            continue
        units.extend(s.strip() for s in _SENTENCE_END.split(line) if s.strip())
    return units


def _squash(text: str) -> str:
    return " ".join(text.split())


def quote_found(quote: str, text: str) -> bool:
    """``quote`` appears in ``text`` verbatim, runs of whitespace aside (case counts)."""
    needle = _squash(quote)
    return bool(needle) and needle in _squash(text)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def copies_rubric(quote: str, rubric_texts: Iterable[str], run: int = COPY_RUN_WORDS) -> bool:
    """``quote`` repeats ``run`` or more consecutive words of one of ``rubric_texts`` (words are
    ``\\w+`` runs, case-insensitive)."""
    words = _words(quote)
    if len(words) < run:
        return False
    grams = {tuple(words[i : i + run]) for i in range(len(words) - run + 1)}
    for text in rubric_texts:
        ref = _words(text)
        if any(tuple(ref[i : i + run]) in grams for i in range(len(ref) - run + 1)):
            return True
    return False


# --------------------------------------------------------------------------- anchors


def _close(value: float, target: float, tolerance: float) -> bool:
    return math.isclose(value, target, rel_tol=tolerance, abs_tol=1e-9)


def _anchor_is_percent(anchor: AnchorValue) -> bool:
    return anchor.text.strip().endswith("%")


def _matches(mention: NumberMention, anchor: AnchorValue) -> bool:
    """A written number states the anchor: equal within tolerance, a percent read as a fraction
    (``12.4%`` for 0.124) or a fraction for a percent anchor (``0.124`` for ``12.4%``)."""
    if not isinstance(anchor.value, int | float) or isinstance(anchor.value, bool):
        return False
    target = float(anchor.value)
    tol = anchor.tolerance
    if _close(mention.value, target, tol):
        return True
    if mention.percent and _close(mention.value / 100.0, target, tol):
        return True
    return (
        not mention.percent
        and _anchor_is_percent(anchor)
        and _close(mention.value * 100.0, target, tol)
    )


def _text_anchor_spans(span: str, anchor: AnchorValue) -> list[tuple[int, int]]:
    needle = str(anchor.value).strip() or anchor.text.strip()
    if not needle:
        return []
    pattern = re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)", re.I)
    return [(m.start(), m.end()) for m in pattern.finditer(span)]


def states_anchor(span: str, anchor: AnchorValue) -> bool:
    """``span`` states the anchor: a number within tolerance (numeric anchors), or the anchor's
    text as a whole word, case-insensitive (text anchors)."""
    if isinstance(anchor.value, str):
        return bool(_text_anchor_spans(span, anchor))
    return any(_matches(m, anchor) for m in find_numbers(span))


_ALTERNATIVE_GAP = re.compile(r"^[\s,;:]*(?:or|and/or|nor)[\s,;:]*$", re.I)
_BETWEEN = re.compile(r"\b(?:between|from)\s*$", re.I)
_EITHER = re.compile(r"\b(?:either|somewhere|possibly|perhaps|maybe)\b", re.I)
_UNIT_CHARS = re.compile(r"^[\s%$€£kKMBbnm]*")
HEDGE_WINDOW = 3.0
"""A competing number lies within [value/3, value*3] of the stated one."""
HEDGE_NEAR_CHARS = 40


def _line_of(span: str, context: str | None) -> str:
    """The full line(s) of ``context`` holding ``span`` (the span itself when not found)."""
    if not context:
        return span
    squashed_span = _squash(span)
    for line in context.splitlines():
        if squashed_span and squashed_span in _squash(line):
            return line
    return span


def is_hedge(span: str, anchor: AnchorValue, *, context: str | None = None) -> bool:
    """The line stating the anchor offers alternatives instead of one finding.

    ``span`` is expanded to the full line of ``context`` (the output) it sits in, so a sentence
    cannot hide its competitors elsewhere in the same paragraph. It is a hedge when, besides a
    number matching the anchor, the line

    - states two or more *other* distinct numbers of the same kind (percent or not) within
      [value/3, value*3] of it ("churn is 10%, 12%, 14% or 16%"): one other is allowed, so
      "rose from 12% to 14%" and a table row "EMEA | 1.2M | 14%" are findings, not hedges;
    - joins it to another number with "or" / "and/or" ("14% or 16%"), or puts it in a
      "between X and Y" / "from X or Y" phrase with a different X/Y;
    - has "either", "somewhere", "possibly", "perhaps" or "maybe" within 40 characters before it.

    Reports should state each anchored figure once on its own line or table row, with at most
    one comparable figure beside it. Text anchors are hedges when "or"/"either" joins them to
    other words nearby.
    """
    line = _line_of(span, context)
    if isinstance(anchor.value, str):
        for start, end in _text_anchor_spans(line, anchor):
            near = line[max(0, start - HEDGE_NEAR_CHARS) : end + HEDGE_NEAR_CHARS]
            if re.search(r"\b(?:or|either|and/or)\b", near, re.I):
                return True
        return False
    mentions = find_numbers(line)
    matching = [m for m in mentions if _matches(m, anchor)]
    if not matching:
        return False
    for m in matching:
        window_low = abs(m.value) / HEDGE_WINDOW
        window_high = abs(m.value) * HEDGE_WINDOW
        others: set[float] = set()
        for o in mentions:
            if o is m or o.percent != m.percent or _matches(o, anchor):
                continue
            if window_low <= abs(o.value) <= window_high:
                others.add(round(o.value, 9))
        if len(others) >= 2:
            return True
        before = line[max(0, m.start - HEDGE_NEAR_CHARS) : m.start]
        if _EITHER.search(before):
            return True
        for o in mentions:
            if o is m or _matches(o, anchor):
                continue
            left, right = (o, m) if o.end <= m.start else (m, o)
            gap = line[left.end : right.start]
            if len(gap) <= HEDGE_NEAR_CHARS and _ALTERNATIVE_GAP.match(_UNIT_CHARS.sub("", gap)):
                return True
            if (
                len(gap) <= HEDGE_NEAR_CHARS
                and re.fullmatch(r"[\s%$€£kKMBbnm]*\b(?:and|or)\b\s*[$€£]?", gap, re.I)
                and _BETWEEN.search(line[max(0, left.start - 20) : left.start])
            ):
                return True
    return False


def anchor_in_output(output: str, anchor: AnchorValue) -> bool:
    """Code alone, no judge: some unit of ``output`` states the anchor and is not a hedge."""
    return any(
        states_anchor(unit, anchor) and not is_hedge(unit, anchor, context=output)
        for unit in text_units(output)
    )


def stating_quote(quotes: Iterable[str], anchor: AnchorValue) -> str | None:
    """The first quote that states ``anchor`` (None: none does)."""
    for quote in quotes:
        if states_anchor(quote, anchor):
            return quote
    return None

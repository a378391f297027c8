"""The code side of judging: the checks that hold whatever the judge says.

A judge's award counts only if its evidence survives these checks, all done by code on the
sanitized output (``sanitize.sanitize_output``):

- ``quote_found``: the quote is in the output verbatim (only runs of whitespace may differ);
- ``copies_rubric``: the quote does not copy a run of ``run`` (8) consecutive words of the rubric
  (an output that pastes the criteria would otherwise "match" every item);
- ``states_anchor``: for an item that cites an anchor, the quote states the anchor: value within
  its tolerance, unit, scale, currency and sign or direction all agree (``anchor_rule``);
- ``is_hedge``: the report offers a competing value for that anchor anywhere: on the stating
  line, in a candidate table, in a footnote or a hedged line elsewhere (``anchor_rule``).

Numbers are read by ``numbers.find_numbers``. ``text_units`` is the unit split shared with the
mock judge (THE FAITHFUL MOCK JUDGE RULE): the judge's evidence for an item is one such unit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from benchforge.evaluation.judges.anchor_rule import (
    HEDGE_NEAR_CHARS,
    HEDGE_WINDOW,
    is_hedge,
    mention_states,
    states_anchor,
)
from benchforge.evaluation.judges.models import AnchorValue
from benchforge.evaluation.judges.numbers import (
    NumberMention,
    extract_numbers,
    find_numbers,
    normalize_number,
)

__all__ = [
    "HEDGE_NEAR_CHARS",
    "HEDGE_WINDOW",
    "NumberMention",
    "anchor_in_output",
    "copies_rubric",
    "extract_numbers",
    "find_numbers",
    "is_hedge",
    "mention_states",
    "normalize_number",
    "quote_found",
    "states_anchor",
    "stating_quote",
    "text_units",
]

LONG_LINE_CHARS = 300
COPY_RUN_WORDS = 8

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+")


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


def anchor_in_output(
    output: str, anchor: AnchorValue, *, others: Iterable[AnchorValue] = ()
) -> bool:
    """Code alone, no judge: some unit of ``output`` states the anchor and the report offers
    no competing value for it (``others``: the rubric's other anchors)."""
    known = list(others)
    return any(
        states_anchor(unit, anchor, context=output)
        and not is_hedge(unit, anchor, context=output, others=known)
        for unit in text_units(output)
    )


def stating_quote(
    quotes: Iterable[str], anchor: AnchorValue, *, context: str | None = None
) -> str | None:
    """The first quote that states ``anchor`` (None: none does; ``context``: the output, for
    the units of bare table cells)."""
    for quote in quotes:
        if states_anchor(quote, anchor, context=context):
            return quote
    return None

"""Whether an answer names text values: whole-token phrase matches (``normalize.find_phrase``),
what else it names, and in which order.

- One value (``check_one``) fails as a hedge when the answer also names one of the task's
  ``other_values`` (outside the gold match: "New York" inside "New York City" is not named), when
  the sentence holding the match says ``or``/``either`` outside it ("Male or Female"), or when
  the answer is a list of three or more short items (at most two tokens longer than the gold)
  and the gold is only one of them ("Male, Female, Unknown").
- Several values (``check_many``) fail when one is missing, when ``ordered`` and the first
  matches are not in the gold order, when the answer names any of ``other_values`` (known wrong
  values), or when it lists more than ``max_extra`` other items: items (``fragments``) that hold
  no gold match, name none of ``other_values`` and are not prose.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import NamedTuple

from benchforge.evaluation.dab.fragments import cut_items, is_prose, overlaps
from benchforge.evaluation.dab.normalize import Span, TokenIndex, find_phrase, tokenize

_HEDGE_TOKENS = frozenset({"or", "either"})
_SHORT_ITEM_SLACK = 2
_MIN_LIST_ITEMS = 3  # two candidates are caught by other_values or "or"/"either"


class Value(NamedTuple):
    """A gold value: the name it is reported by, and the folded tokens of every accepted
    spelling (the value itself first, then its aliases)."""

    name: str
    spellings: tuple[tuple[str, ...], ...]


class TextOutcome(NamedTuple):
    passed: bool
    reason: str
    matched: list[str]


def _spans(tokens: TokenIndex, value: Value) -> list[Span]:
    found = {span for spelling in value.spellings for span in find_phrase(tokens, spelling)}
    return sorted(found)


def _named_others(
    tokens: TokenIndex, others: Sequence[Value], gold_spans: list[Span]
) -> list[tuple[Value, Span]]:
    named: list[tuple[Value, Span]] = []
    for other in others:
        outside = [s for s in _spans(tokens, other) if not overlaps(s, gold_spans)]
        if outside:
            named.append((other, outside[0]))
    return named


def check_one(text: str, gold: Value, others: Sequence[Value]) -> TextOutcome:
    tokens = TokenIndex(tokenize(text))
    spans = _spans(tokens, gold)
    if not spans:
        return TextOutcome(False, f"{gold.name!r} not named as a whole word or phrase", [])
    named = _named_others(tokens, others, spans)
    if named:
        return TextOutcome(False, f"hedged: also names {named[0][0].name!r}", [])
    for sentence in cut_items(text, spans, sentences=True):
        if not overlaps(sentence, spans):
            continue
        outside = [
            t
            for t in tokens.tokens
            if sentence.start <= t.start < sentence.end
            and not overlaps(Span(t.start, t.end), spans)
        ]
        if any(t.folded in _HEDGE_TOKENS for t in outside):
            return TextOutcome(False, "hedged: 'or'/'either' beside the answer", [])
    items = [i for i in cut_items(text, spans) if not is_prose(text[i.start : i.end])]
    longest = max(len(s) for s in gold.spellings) + _SHORT_ITEM_SLACK
    if len(items) >= _MIN_LIST_ITEMS and all(
        len(tokenize(text[i.start : i.end])) <= longest for i in items
    ):
        return TextOutcome(False, f"hedged: a list of {len(items)} candidates", [])
    first = spans[0]
    return TextOutcome(True, f"names {gold.name!r}", [text[first.start : first.end]])


def check_many(
    text: str, golds: Sequence[Value], others: Sequence[Value], *, ordered: bool, max_extra: int
) -> TextOutcome:
    tokens = TokenIndex(tokenize(text))
    found = {gold.name: _spans(tokens, gold) for gold in golds}
    missing = [name for name, spans in found.items() if not spans]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        return TextOutcome(False, f"missing {len(missing)} of {len(golds)}: {shown}{more}", [])
    if ordered:
        firsts = [(found[gold.name][0].start, gold.name) for gold in golds]
        for (before, name_a), (after, name_b) in pairwise(firsts):
            if after <= before:
                return TextOutcome(False, f"out of order: {name_b!r} not after {name_a!r}", [])
    gold_spans = sorted(span for spans in found.values() for span in spans)
    named = _named_others(tokens, others, gold_spans)
    named_spans = [span for _, span in named]
    unmatched = [
        text[i.start : i.end].strip()
        for i in cut_items(text, gold_spans)
        if not overlaps(i, gold_spans)
        and not overlaps(i, named_spans)
        and not is_prose(text[i.start : i.end])
    ]
    if named:
        shown = ", ".join(repr(other.name) for other, _ in named[:3])
        return TextOutcome(False, f"extra values: names wrong values {shown}", [])
    if len(unmatched) > max_extra:
        shown = ", ".join(repr(e[:40]) for e in unmatched[:3])
        return TextOutcome(
            False, f"{len(unmatched)} extra values (allowed {max_extra}): {shown}", []
        )
    matched = [text[found[g.name][0].start : found[g.name][0].end] for g in golds]
    return TextOutcome(True, f"names all {len(golds)} values", matched)

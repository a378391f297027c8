"""An answer cut into the items it lists, for counting what it names besides the gold.

Items are separated by line breaks (table cells and bullets become lines when normalized),
``;``, ``,``, sentence ends, and `` and ``/`` or ``/`` & ``. A separator written inside a gold
match does not cut it (``Exits, Desires, & Slow Fires`` stays one item). An item is *prose*,
never counted as a value, when it is a lead-in (ends with ``:``, "The books are:") or holds only
filler words (``and``, ``also``, ``etc``).
"""

from __future__ import annotations

import re

from benchforge.evaluation.dab.normalize import Span, tokenize

_SEPARATOR = re.compile(r"\n|;|,|(?<=[.!?]) |\s(?:and|or|&)\s", re.I)
_SENTENCE_SEPARATOR = re.compile(r"\n|;|(?<=[.!?]) ")
FILLER = frozenset({"and", "or", "also", "etc", "the", "a", "an", "plus"})


def cut_items(text: str, keep_whole: list[Span], *, sentences: bool = False) -> list[Span]:
    """The items of ``text`` (or its sentences, when ``sentences``), never cutting inside a span
    of ``keep_whole``; items with no token are left out."""
    separator = _SENTENCE_SEPARATOR if sentences else _SEPARATOR
    cuts = [
        m
        for m in separator.finditer(text)
        if not any(span.start <= m.start() < span.end for span in keep_whole)
    ]
    items: list[Span] = []
    start = 0
    for cut in [*cuts, None]:
        end = len(text) if cut is None else cut.start()
        if tokenize(text[start:end]):
            items.append(Span(start, end))
        if cut is not None:
            start = cut.end()
    return items


def is_prose(text: str) -> bool:
    """A lead-in ("The matching books are:") or filler words only ("and", "etc.")."""
    if text.rstrip().endswith(":"):
        return True
    return all(token.folded in FILLER for token in tokenize(text))


def overlaps(item: Span, spans: list[Span]) -> bool:
    return any(span.start < item.end and item.start < span.end for span in spans)

"""The numbers an answer writes (after ``normalize_text``): value, scale word, unit, and whether
the number is a quantity at all.

- Scale: ``k``/``K``, ``M``, ``B``/``bn``, ``mn`` written right after the digits, or ``thousand``,
  ``million``, ``billion``, ``trillion`` after a space: ``1.2M`` and ``1.2 million`` are 1200000.
- Units (``UNITS``): ``percent`` (``%``, "percent", "per cent", "pct"), ``percentage_points``,
  ``usd``/``eur``/``gbp`` (symbol or code before, code or word after), and time and distance
  words. An unknown word after a number ("4.6 stars", "12 businesses") is no unit.
- Not quantities (``Quantity.quantity`` is False): ordinals (``3rd``), parts of dates and clock
  times (``2016-01-31``, ``31/01/2016``, ``10:30``). Digits glued to letters (``Q3``, ``v2``,
  ``bid_123``, ``3D``) are not read at all. ``1980s`` reads as 1980 (a decade).
- A minus sign counts only where no word or digit is written right before it: ``40-45`` is 40
  and 45, ``-3.5`` is negative.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from benchforge.evaluation.dab.normalize import Span

UNITS: dict[str, tuple[str, ...]] = {
    "percent": ("%", "percent", "per cent", "pct"),
    "percentage_points": ("percentage points", "percentage point", "pp", "ppt", "ppts"),
    "usd": ("$", "us$", "usd", "us dollars", "dollars", "dollar"),
    "eur": ("€", "eur", "euros", "euro"),
    "gbp": ("£", "gbp", "pounds", "pound"),
    "seconds": ("seconds", "second", "secs", "sec", "s"),
    "minutes": ("minutes", "minute", "mins", "min"),
    "hours": ("hours", "hour", "hrs", "hr", "h"),
    "days": ("days", "day", "d"),
    "weeks": ("weeks", "week", "wks"),
    "months": ("months", "month"),
    "years": ("years", "year", "yrs"),
    "kilometers": ("kilometers", "kilometres", "km"),
    "miles": ("miles", "mile", "mi"),
}
UNIT_NAMES = tuple(UNITS)
_SCALE = {
    "k": 1e3,
    "K": 1e3,
    "thousand": 1e3,
    "M": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "B": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "trillion": 1e12,
}
_BEFORE = {
    "$": "usd",
    "us$": "usd",
    "usd": "usd",
    "€": "eur",
    "eur": "eur",
    "£": "gbp",
    "gbp": "gbp",
}


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_UNIT_OF = {word: unit for unit, words in UNITS.items() for word in words}
# After the digits: a symbol (optionally spaced) or a word of two letters or more after a space;
# a single letter (s, h, d) counts only glued to the digits (``tail`` in ``read_quantities``).
_UNIT_AFTER = re.compile(
    r" ?(?:%|\$|€|£)"
    rf"| (?:{_alternation([w for w in _UNIT_OF if len(w) > 1 and w[0].isalpha()])})(?!\w)",
    re.I,
)
_GLUED_SCALE = {"k", "K", "M", "mn", "B", "bn"}
_NUMBER = re.compile(
    r"(?:(?<![\w.\-])(?P<neg>-))?"
    r"(?:(?P<cur>US\$|[$€£])|(?<![\w.])(?P<code>USD|EUR|GBP) ?)?"
    r"(?<![\w.])(?P<num>\d+(?:\.\d+)?|\.\d+)(?P<exp>[eE][-+]?\d+)?"
    r"(?P<tail>[A-Za-z_]\w*)?",
)
_WORD_SCALE = re.compile(r" (?P<word>thousand|million|billion|trillion)\b", re.I)
_DATE_OR_TIME = re.compile(
    r"\d{4}-\d{1,2}(?:-\d{1,2})?(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?"
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}"
    r"|\d{1,2}:\d{2}(?::\d{2})?"
)
_ORDINAL = {"st", "nd", "rd", "th"}


class Quantity(NamedTuple):
    """One number as the answer writes it (see the module docstring)."""

    value: float
    unit: str | None
    span: Span
    raw: str
    quantity: bool = True


def read_quantities(text: str) -> list[Quantity]:
    """Every number written in a normalized ``text``, first to last."""
    dates = [Span(m.start(), m.end()) for m in _DATE_OR_TIME.finditer(text)]
    found: list[Quantity] = []
    for match in _NUMBER.finditer(text):
        value = float(match.group("num") + (match.group("exp") or ""))
        tail = match.group("tail") or ""
        end = match.end("num") + len(match.group("exp") or "")
        quantity = True
        unit = _BEFORE.get((match.group("cur") or match.group("code") or "").lower())
        unit_after: str | None = None
        if tail:
            if tail in _GLUED_SCALE:
                value *= _SCALE[tail]
            elif tail.lower() in _ORDINAL:
                quantity = False
            elif tail == "s" and len(match.group("num")) == 4:
                pass  # a decade: 1980s
            elif tail in _UNIT_OF or (len(tail) > 1 and tail.lower() in _UNIT_OF):
                unit_after = _UNIT_OF[tail.lower()]
            else:
                continue  # digits glued to letters: an identifier, not a number
            end = match.end()
        else:
            scale = _WORD_SCALE.match(text, end)
            if scale is not None:
                value *= _SCALE[scale.group("word").lower()]
                end = scale.end()
        if unit_after is None:
            written = _UNIT_AFTER.match(text, end)
            if written is not None:
                unit_after = _UNIT_OF[written.group(0).strip().lower()]
                end = written.end()
        if unit_after is not None:
            unit = unit_after if unit in (None, unit_after) else "mixed"
        start = match.start()
        if any(d.start <= match.start("num") < d.end for d in dates):
            quantity = False
        found.append(
            Quantity(
                value=-value if match.group("neg") else value,
                unit=unit,
                span=Span(start, end),
                raw=text[start:end],
                quantity=quantity,
            )
        )
    return found

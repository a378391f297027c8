"""Columns a gold model rounds, and the tolerance that keeps float summation order out of scores.

``round(avg(x), 2)`` of an exact 2646.235 gives 2646.24 or 2646.23 depending on the order in
which the engine added the values: a correct solution with another query plan must not lose the
model. A column whose gold value is rounded to ``n`` decimals (a ``round(..., n)`` aliased to it
in the model's SQL, or a ``DECIMAL(p, n)`` type) is compared within one unit of its last place,
``10^-n``; every other column keeps the scorer's relative tolerance.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_ROUND = re.compile(r"\bround\s*\(", re.I)
_ALIAS = re.compile(r'\s*(?:as\s+)?("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)', re.I)
_DECIMAL = re.compile(r"^(?:DECIMAL|NUMERIC)\s*\(\s*\d+\s*,\s*(\d+)\s*\)$", re.I)
_NOT_ALIASES = {"from", "where", "group", "order", "having", "end", "then", "else", "when", "and"}
MAX_DECIMALS = 12
# the difference of two values one unit apart, computed in DOUBLE, may exceed the unit by a hair
ULP_SLACK = 1.000001


def _outside_quotes(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, parenthesis depth before it) of every character of ``text`` from
    ``start`` that is not inside a quoted string or identifier."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
            continue
        if ch in "'\"":
            quote = ch
        yield i, ch, depth
        depth += {"(": 1, ")": -1}.get(ch, 0)


def _closing(sql: str, start: int) -> int | None:
    """Index of the parenthesis closing the one opened just before ``start``."""
    return next(
        (i for i, ch, depth in _outside_quotes(sql, start) if ch == ")" and depth == 0), None
    )


def _digits_argument(inner: str) -> int | None:
    """The second argument of ``round(expr, n)`` when it is a literal integer."""
    commas = [i for i, ch, depth in _outside_quotes(inner) if ch == "," and depth == 0]
    if not commas:
        return None
    literal = inner[commas[-1] + 1 :].strip()
    return int(literal) if literal.isdigit() and int(literal) <= MAX_DECIMALS else None


def rounded_columns(sql: str) -> dict[str, int]:
    """Lower-cased alias -> decimals for every ``round(expr, n) [as] alias`` in ``sql`` (the
    fewest decimals when an alias is rounded twice)."""
    found: dict[str, int] = {}
    for match in _ROUND.finditer(sql):
        end = _closing(sql, match.end())
        if end is None:
            continue
        digits = _digits_argument(sql[match.end() : end])
        alias = _ALIAS.match(sql, end + 1)
        if digits is None or alias is None:
            continue
        name = alias.group(1)
        name = name[1:-1].replace('""', '"') if name.startswith('"') else name
        if name.lower() in _NOT_ALIASES:
            continue
        found[name.lower()] = min(digits, found.get(name.lower(), digits))
    return found


def column_tolerances(sql: str | None, types: dict[str, str]) -> dict[str, float]:
    """Absolute tolerance per rounded column of a gold relation (``types``: column -> DuckDB
    type): one unit of the last decimal place, from the model's SQL or a DECIMAL scale."""
    rounded = rounded_columns(sql or "")
    out: dict[str, float] = {}
    for column, type_ in types.items():
        decimals = rounded.get(column.lower())
        scale = _DECIMAL.match(type_.strip())
        if scale is not None and int(scale.group(1)) > 0:
            decimals = min(int(scale.group(1)), decimals if decimals is not None else MAX_DECIMALS)
        if decimals is not None:
            out[column] = 10.0 ** (-decimals) * ULP_SLACK
    return out

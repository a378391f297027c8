"""Whether an answer states one number: the gold (within a tolerance, in an accepted unit) and
no rival candidate next to it.

A *rival* is a number the answer writes that could have been the answer (same unit as the gold,
or bare where a bare number is accepted) but does not match, and is not one of the numbers the
question itself states (``ignore``). The answer *hedges*, and fails, when a rival is enumerated
with a match ("either 42 or 57", "42/57", "40-45", "10, 20, 42, 50": only separators and the
words ``or``, ``and``, ``to``, ``either``, ``maybe``, ``possibly``, ``perhaps``, ``vs`` between
them), or when any rival is written in an answer that uses a hedging word (``either``,
``maybe``, ``possibly``, ``perhaps``, ``alternatively``). Other numbers in a sentence ("a 4.6
rating from 1,234 reviews") are context, not rivals of each other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import NamedTuple

from benchforge.evaluation.dab.quantities import Quantity, read_quantities

_LINK = r"(?:or|and|and/or|to|either|maybe|possibly|perhaps|probably|vs\.?|versus)"
_GAP = r"[\s,;/()\[\]~\-\u2013\u2014]*"
_ENUMERATION = re.compile(rf"^{_GAP}(?:{_LINK}{_GAP})*$", re.I)
_HEDGE_WORD = re.compile(r"\b(?:either|maybe|possibly|perhaps|alternatively)\b", re.I)


class NumberOutcome(NamedTuple):
    passed: bool
    reason: str
    matched: list[str]


class NumberRule(NamedTuple):
    """What a matching number is: within ``tolerance`` of ``target`` (or, as a fraction, of
    ``target / 100`` when ``accept_fraction``), written in ``unit`` or bare (bare only when not
    ``unit_required``)."""

    target: float
    tolerance: float
    unit: str | None
    unit_required: bool = False
    accept_fraction: bool = False
    ignore: tuple[float, ...] = ()


def check_number(text: str, rule: NumberRule) -> NumberOutcome:
    quantities = [q for q in read_quantities(text) if q.quantity]
    candidates = [q for q in quantities if _candidate(q, rule)]
    hits = [q for q in candidates if _value_matches(q, rule)]
    if not hits:
        wrong_unit = [q for q in quantities if q not in candidates and _near(q.value, rule)]
        if wrong_unit:
            what = "no unit" if wrong_unit[0].unit is None else "wrong unit"
            return NumberOutcome(False, f"right number, {what}: {wrong_unit[0].raw!r}", [])
        read = ", ".join(q.raw for q in quantities[:5]) or "no number"
        return NumberOutcome(False, f"no number matches {_show(rule)} (read: {read})", [])
    rivals = [
        q
        for q in candidates
        if q not in hits and not any(math.isclose(q.value, i, rel_tol=1e-9) for i in rule.ignore)
    ]
    hedge = _enumerated_rival(text, candidates, hits, rivals)
    if hedge is None and rivals and _HEDGE_WORD.search(text):
        hedge = rivals[0]
    if hedge is not None:
        return NumberOutcome(False, f"hedged: names {hedge.raw!r} beside {hits[0].raw!r}", [])
    return NumberOutcome(True, f"states {hits[0].raw!r}", _unique(q.raw for q in hits))


def _candidate(q: Quantity, rule: NumberRule) -> bool:
    """A number that could be the answer: the gold's unit, or bare where bare is accepted."""
    if q.unit is None:
        return rule.unit is None or not rule.unit_required
    return q.unit == rule.unit


def _value_matches(q: Quantity, rule: NumberRule) -> bool:
    if _near(q.value, rule):
        return True
    return rule.accept_fraction and q.unit is None and _near(q.value * 100, rule)


def _near(value: float, rule: NumberRule) -> bool:
    return abs(value - rule.target) <= rule.tolerance


def _enumerated_rival(
    text: str, candidates: list[Quantity], hits: list[Quantity], rivals: list[Quantity]
) -> Quantity | None:
    """A rival in one enumeration with a match (consecutive candidates with only separators and
    linking words between them)."""
    chain: list[Quantity] = []
    for q in candidates:
        if chain and not _ENUMERATION.match(text[chain[-1].span.end : q.span.start]):
            found = _rival_in(chain, hits, rivals)
            if found is not None:
                return found
            chain = []
        chain.append(q)
    return _rival_in(chain, hits, rivals)


def _rival_in(
    chain: list[Quantity], hits: list[Quantity], rivals: list[Quantity]
) -> Quantity | None:
    if any(q in hits for q in chain):
        return next((q for q in chain if q in rivals), None)
    return None


def _show(rule: NumberRule) -> str:
    unit = f" {rule.unit}" if rule.unit else ""
    return f"{rule.target:g}{unit} (±{rule.tolerance:g})"


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))

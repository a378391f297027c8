"""Answers a task's validator must accept and answers it must refuse, made from its gold.

``task verify`` scores each against the task (the nightly runs it on every shipped query):

- **legitimate** formats of the gold: a sentence, bold Markdown, a bullet list, a table cell,
  thousands separators for a number, a unit word where the validator's unit allows it, another
  order for a set;
- **near misses** (DataAgentBench's validator failures and the hedges an agent tries): a text
  value glued inside a longer word ("MALE" in "FEMALE"), the gold among many wrong values, the
  right number in another unit, a number off by more than the tolerance, a list missing a value
  or out of order, and the gold in text hidden from readers.
"""

from __future__ import annotations

from benchforge.evaluation.dab.validators import (
    ExactValue,
    NumberWithin,
    OrderedList,
    ValueSet,
)

AnyValidator = ExactValue | NumberWithin | ValueSet | OrderedList
_UNIT_WORD = {"percent": "%", "usd": "USD", "eur": "EUR", "gbp": "GBP"}


def legitimate_answers(validator: AnyValidator) -> list[tuple[str, str]]:
    if isinstance(validator, ExactValue):
        value = str(validator.value)
        if isinstance(validator.value, int):
            value = f"{validator.value:,}"
        return _framed(value)
    if isinstance(validator, NumberWithin):
        written = _number(validator.value)
        found = _framed(written)
        if validator.unit in _UNIT_WORD:
            unit = _UNIT_WORD[validator.unit]
            joined = f"{written}{unit}" if unit == "%" else f"{written} {unit}"
            found.append(("with its unit", f"The answer is {joined}."))
        if abs(validator.value) >= 1000:
            found.append(("separators", f"The answer is {validator.value:,.2f}."))
        return found
    values = validator.values
    found = [
        (
            "sentence",
            f"The answer is {', '.join(values[:-1])} and {values[-1]}."
            if len(values) > 1
            else f"The answer is {values[0]}.",
        ),
        ("bullets", "\n".join(f"- {v}" for v in values)),
        ("bold list", ", ".join(f"**{v}**" for v in values)),
    ]
    if isinstance(validator, ValueSet) and len(values) > 1:
        found.append(("another order", "; ".join(reversed(values))))
    return found


def near_misses(validator: AnyValidator) -> list[tuple[str, str]]:
    misses: list[tuple[str, str]] = []
    if isinstance(validator, ExactValue):
        if isinstance(validator.value, int):
            value = validator.value
            misses.append(("off by one", f"The answer is {value + 1}."))
            misses.append(("another unit", f"The answer is {value}%."))
            misses.append(("among many", ", ".join(str(value + k) for k in range(-3, 4))))
        else:
            text = validator.value
            misses.append(("glued inside a word", f"The answer is NON{text.replace(' ', '')}."))
            misses.append(("among many", ", ".join([text, *[f"Other {k}" for k in range(1, 6)]])))
        misses.append(("hidden", f"Unknown. <!-- {validator.value} -->"))
        return misses
    if isinstance(validator, NumberWithin):
        target = validator.value
        tolerance = max(validator.abs_tol, validator.rel_tol * abs(target))
        off = target + 3 * tolerance + (1 if tolerance == 0 else 0)
        misses.append(("outside the tolerance", f"The answer is {_number(off)}."))
        misses.append(
            (
                "among many",
                ", ".join(_number(target + k * (tolerance * 3 + 1)) for k in range(-3, 4)),
            )
        )
        if validator.unit != "percent":
            misses.append(("another unit", f"The answer is {_number(target)}%."))
        else:
            misses.append(("another unit", f"The answer is {_number(target)} million."))
        misses.append(("hidden", f"Unknown. <!-- {_number(target)} -->"))
        return misses
    values = validator.values
    extras = [f"Other {k}" for k in range(1, validator.max_extra + 4)]
    misses.append(("among many", ", ".join([*values, *extras])))
    if len(values) > 1:
        misses.append(("one missing", ", ".join(values[:-1])))
    if isinstance(validator, OrderedList) and len(values) > 1:
        misses.append(("out of order", ", ".join(reversed(values))))
    misses.append(("hidden", "Unknown. <!-- " + ", ".join(values) + " -->"))
    return misses


def _framed(value: str) -> list[tuple[str, str]]:
    return [
        ("sentence", f"The answer is {value}."),
        ("bold", f"**{value}**"),
        ("table cell", f"| answer |\n|---|\n| {value} |"),
    ]


def _number(value: float) -> str:
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")

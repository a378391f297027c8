"""A lake task's gold answer and how a returned answer is read as a value of its type.

An agent returns its answer as text (``return_answer``). The task's instructions ask for the
value alone; JSON is read as JSON. The text is first reduced to what a reader sees
(``judges.visible.visible_text``): a value in an HTML comment or a hidden element is not read.
What is read:

- **numbers**: a JSON number, or text that writes exactly one quantity once the validators'
  normalization has run (thousands separators, markdown, ``1.2M``). Text writing several
  different numbers is a hedge and is not read: the answer scores 0 as ``unreadable``, so
  listing candidates never earns the closest one. A percent sign is kept as written: ``25%``
  reads as 25, because a task states the unit it wants.
- **strings**: the text, or a JSON string; stripped and case-folded for exact comparison.
- **lists**: a JSON array, else one item per line (markdown bullets removed) or, on one line,
  per comma or semicolon. Each item is read as a number when it is one, else as a string.
"""

from __future__ import annotations

import json
import math
import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchforge.evaluation.dab.normalize import normalize_text
from benchforge.evaluation.dab.quantities import read_quantities
from benchforge.evaluation.judges.visible import visible_text


class AnswerType(StrEnum):
    STRING_EXACT = "string_exact"
    STRING_APPROXIMATE = "string_approximate"
    NUMERIC_EXACT = "numeric_exact"
    NUMERIC_APPROXIMATE = "numeric_approximate"
    LIST_EXACT = "list_exact"
    LIST_APPROXIMATE = "list_approximate"

    @property
    def is_list(self) -> bool:
        return self in (AnswerType.LIST_EXACT, AnswerType.LIST_APPROXIMATE)

    @property
    def is_numeric(self) -> bool:
        return self in (AnswerType.NUMERIC_EXACT, AnswerType.NUMERIC_APPROXIMATE)


Scalar = str | float
Value = Scalar | list[Scalar]


class GoldAnswer(BaseModel):
    """The gold value of a task (or sub-task) and any other answers accepted in its place."""

    model_config = ConfigDict(extra="forbid")

    answer_type: AnswerType
    value: Value
    accepted: list[Value] = Field(default_factory=list)

    @model_validator(mode="after")
    def _shape_fits_type(self) -> GoldAnswer:
        for value in [self.value, *self.accepted]:
            check_gold_shape(value, self.answer_type)
        return self

    def candidates(self) -> list[Value]:
        return [self.value, *self.accepted]


class UnreadableAnswer(ValueError):
    """The returned text is not one value of the task's answer type."""


def check_gold_shape(value: Value, answer_type: AnswerType) -> None:
    if answer_type.is_list:
        if not isinstance(value, list):
            raise ValueError(f"a {answer_type} gold must be a list, got {value!r}")
        return
    if isinstance(value, list):
        raise ValueError(f"a {answer_type} gold must be one value, got a list")
    if answer_type.is_numeric and (isinstance(value, str | bool) or not math.isfinite(value)):
        raise ValueError(f"a {answer_type} gold must be a finite number, got {value!r}")


_LIST_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


def read_answer(text: str, answer_type: AnswerType) -> Value:
    """``text`` as one value of ``answer_type`` (module docstring), else ``UnreadableAnswer``."""
    text = visible_text(text).text
    parsed = _json(text)
    if answer_type.is_list:
        items = parsed if isinstance(parsed, list) else _split_items(text)
        if not items:
            raise UnreadableAnswer("no list items")
        return [read_item(item) for item in items]
    if isinstance(parsed, list | dict):
        raise UnreadableAnswer(
            f"a {answer_type} answer must be one value, got JSON {type(parsed).__name__}"
        )
    if answer_type.is_numeric:
        if isinstance(parsed, int | float) and not isinstance(parsed, bool):
            return float(parsed)
        return read_number(str(parsed) if parsed is not None else text)
    return str(parsed) if isinstance(parsed, str) else text.strip()


def read_number(text: str) -> float:
    values = {q.value for q in read_quantities(normalize_text(text)) if q.quantity}
    if len(values) != 1:
        raise UnreadableAnswer(
            "no number written" if not values else f"{len(values)} different numbers written"
        )
    return values.pop()


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _split_items(text: str) -> list[str]:
    lines = [_LIST_BULLET.sub("", line).strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    if len(lines) == 1:
        lines = [part.strip() for part in re.split(r"[;,]", lines[0]) if part.strip()]
    return lines


def read_item(item: Any) -> Scalar:
    if isinstance(item, bool):
        return str(item).lower()
    if isinstance(item, int | float):
        return float(item)
    text = str(item).strip()
    try:
        return read_number(text) if _is_only_a_number(text) else text
    except UnreadableAnswer:
        return text


_ONLY_NUMBER = re.compile(r"^[\s$€£]*[-+]?[\d,.\s]+(?:e[-+]?\d+)?\s*%?\s*$", re.IGNORECASE)


def _is_only_a_number(text: str) -> bool:
    return bool(_ONLY_NUMBER.match(text)) and any(ch.isdigit() for ch in text)

"""The ``dab_query`` task spec: one question over a dataset spread by ``perturb`` over several
databases (DataAgentBench style), answered in free text and checked by a typed validator.

    task_specs/dab-<domain>/
      perturb-files.yaml     the perturb spec the suite's tasks name (benchforge.synthesis.perturb)
      <task_id>/task.yaml    this model

The gold answer is ``gold_sql`` run read-only on the **unperturbed** dataset's
``warehouse.duckdb`` (tables of schema ``raw``, found without the schema name), so another
seed gives another answer. The dataset carries anomalies of its own (a key in lower case or with a
trailing space), which the perturbation's key rewriting erases: gold SQL joins keys as
``upper(trim(x)) = upper(trim(y))``, so an agent that normalizes the perturbed keys finds the
gold and one that joins them as written does not. ``answer`` names the validator kind and its
options; the gold value is filled in from ``gold_sql`` (``validator`` of each rule), never
written by hand.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchforge.evaluation.dab.validators import (
    ExactValue,
    NumberWithin,
    OrderedList,
    Unit,
    ValueSet,
)
from benchforge.evaluation.tasks.models import TaskSpecBase

Difficulty = Literal["easy", "medium", "hard"]
DabProperty = Literal[
    "multi_database", "ill_formatted_keys", "text_embedded_values", "domain_knowledge"
]
AnswerValidatorModel = ExactValue | NumberWithin | ValueSet | OrderedList
GoldRows = list[tuple[Any, ...]]


class GoldShapeError(ValueError):
    """``gold_sql`` returned rows that do not fit the validator kind."""


def _one_value(rows: GoldRows) -> Any:
    if len(rows) != 1 or len(rows[0]) != 1:
        raise GoldShapeError(f"expected one row of one column, got {len(rows)} row(s)")
    if rows[0][0] is None:
        raise GoldShapeError("the gold value is NULL")
    return rows[0][0]


def _one_column(rows: GoldRows) -> list[str]:
    if not rows or any(len(row) != 1 for row in rows):
        raise GoldShapeError(f"expected rows of one column, got {len(rows)} row(s)")
    if any(row[0] is None for row in rows):
        raise GoldShapeError("a gold value is NULL")
    return [str(row[0]) for row in rows]


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExactRule(_Rule):
    """The answer names one value: ``gold_sql`` gives one row, one column (text, or a whole
    number)."""

    kind: Literal["exact"] = "exact"
    ignore_numbers: list[float] = Field(
        default_factory=list, description="Numbers the question states (not rival answers)."
    )

    def validator(self, rows: GoldRows) -> ExactValue:
        value = _one_value(rows)
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            value = str(value)
        if isinstance(value, float):
            if not (math.isfinite(value) and value.is_integer()):
                raise GoldShapeError(f"{value} is not a whole number: use kind number")
            value = int(value)
        return ExactValue(value=value, ignore_numbers=self.ignore_numbers)


class NumberRule(_Rule):
    """The answer states one number within a tolerance of the one ``gold_sql`` gives."""

    kind: Literal["number"] = "number"
    rel_tol: float = Field(default=0.0, ge=0)
    abs_tol: float = Field(default=0.0, ge=0)
    unit: Unit | None = None
    ignore_numbers: list[float] = Field(default_factory=list)

    @model_validator(mode="after")
    def _builds(self) -> NumberRule:
        self.validator([(1.0,)])  # the validator's own checks (a tolerance is given, ...)
        return self

    def validator(self, rows: GoldRows) -> NumberWithin:
        value = _one_value(rows)
        if isinstance(value, bool) or not isinstance(value, int | float):
            try:
                value = float(value)
            except (TypeError, ValueError) as exc:
                raise GoldShapeError(f"{value!r} is not a number") from exc
        return NumberWithin(
            value=float(value),
            rel_tol=self.rel_tol,
            abs_tol=self.abs_tol,
            unit=self.unit,
            ignore_numbers=self.ignore_numbers,
        )


class SetRule(_Rule):
    """The answer names every value of ``gold_sql``'s one column, in any order."""

    kind: Literal["set"] = "set"
    max_extra: int = Field(default=1, ge=0)

    def validator(self, rows: GoldRows) -> ValueSet:
        return ValueSet(values=_one_column(rows), max_extra=self.max_extra)


class OrderedRule(_Rule):
    """The answer names every value of ``gold_sql``'s one column, in its row order (give the
    query an ORDER BY that leaves no tie)."""

    kind: Literal["ordered"] = "ordered"
    max_extra: int = Field(default=1, ge=0)

    def validator(self, rows: GoldRows) -> OrderedList:
        return OrderedList(values=_one_column(rows), max_extra=self.max_extra)


AnswerRule = Annotated[ExactRule | NumberRule | SetRule | OrderedRule, Field(discriminator="kind")]


class DabQueryTask(TaskSpecBase):
    family: Literal["dab_query"]
    question: str = Field(min_length=10, description="The question the agent answers.")
    instructions: str = Field(
        default="",
        description="What the agent is asked to do; by default the question and how to answer.",
    )
    gold_sql: str = Field(
        min_length=8,
        description="SQL run read-only on the unperturbed dataset's warehouse.duckdb (its raw "
        "tables by name) giving the gold answer; never shown to agents.",
    )
    answer: AnswerRule = Field(
        description="How the answer is checked: kind exact, number, set or ordered, and that "
        "kind's options (the gold value comes from gold_sql)."
    )
    difficulty: Difficulty
    properties: list[DabProperty] = Field(
        min_length=1,
        description="What makes the question hard: multi_database, ill_formatted_keys, "
        "text_embedded_values, domain_knowledge.",
    )
    perturb: str = Field(
        description="The perturb spec the agent's databases are made with, relative to the "
        "task folder (DuckDB and SQLite databases only, for now)."
    )

    @model_validator(mode="before")
    @classmethod
    def _instructions_from_question(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("instructions") and data.get("question"):
            data = {**data, "instructions": default_instructions(str(data["question"]))}
        return data

    @field_validator("properties")
    @classmethod
    def _no_repeats(cls, properties: list[DabProperty]) -> list[DabProperty]:
        if len(set(properties)) != len(properties):
            raise ValueError("a property is listed twice")
        return properties


def default_instructions(question: str) -> str:
    return (
        f"{question.strip()}\n\nAnswer from the databases the tools list (list_db, then "
        "query_db); join keys and values may be written differently in each database. Give the "
        "answer with return_answer: the value itself, without hedging."
    )

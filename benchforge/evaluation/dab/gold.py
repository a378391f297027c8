"""A ``dab_query`` task's gold: ``gold_sql`` run read-only on the unperturbed dataset, and the
task's validator built with what it returned."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.dab.spec import AnswerValidatorModel, DabQueryTask, GoldRows
from benchforge.evaluation.dab.validators import ExactValue, NumberWithin
from benchforge.evaluation.gold import NotADatasetError, dataset_version

WAREHOUSE = "warehouse.duckdb"  # a dataset's tables, as synthesized or imported
DATASET_SCHEMA = "raw"  # gold_sql names the dataset's tables without it


class DabGold(BaseModel):
    """The gold of a task on one dataset: its validator (the gold value in it) and where it
    was computed."""

    model_config = ConfigDict(frozen=True)

    validator: Annotated[AnswerValidatorModel, Field(discriminator="kind")]
    dataset_version: str


def run_gold_sql(sql: str, dataset_dir: Path) -> GoldRows:
    """``sql``'s rows on the dataset's ``warehouse.duckdb``, opened read-only, its ``raw``
    tables found by name."""
    warehouse = dataset_dir / WAREHOUSE
    if not warehouse.is_file():
        raise NotADatasetError(f"{dataset_dir} has no {WAREHOUSE} (is it a dataset?)")
    with duckdb.connect(str(warehouse), read_only=True) as con:
        con.execute(f"SET search_path = '{DATASET_SCHEMA}'")
        return [tuple(row) for row in con.execute(sql).fetchall()]


def dab_gold(spec: DabQueryTask, dataset_dir: Path) -> DabGold:
    rows = run_gold_sql(spec.gold_sql, dataset_dir)
    return DabGold(
        validator=spec.answer.validator(rows), dataset_version=dataset_version(dataset_dir)
    )


def gold_sentence(validator: AnswerValidatorModel) -> str:
    """The gold answer written as a sentence (what the oracle returns)."""
    if isinstance(validator, ExactValue):
        return f"The answer is {validator.value}."
    if isinstance(validator, NumberWithin):
        return f"The answer is {_plain_number(validator.value)}."
    values = validator.values
    listed = values[0] if len(values) == 1 else f"{', '.join(values[:-1])} and {values[-1]}"
    return f"The answer is {listed}."


def _plain_number(value: float) -> str:
    """Fixed-point, as many decimals as it needs up to six (no exponent, no separators)."""
    if value.is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")

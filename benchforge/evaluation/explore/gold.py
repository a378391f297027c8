"""An ``explore_milestone`` task's gold on one dataset: each milestone's query and each answer
part's run read-only on the clean warehouse, and the reference answer written from them."""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchforge.evaluation.dab.gold import run_gold_sql
from benchforge.evaluation.explore.accuracy import AnswerPart
from benchforge.evaluation.explore.models import GoldPath, Milestone
from benchforge.evaluation.explore.spec import ExploreMilestoneTask
from benchforge.evaluation.gold import dataset_version


class ExploreGoldError(ValueError):
    """A milestone or answer query gave no single value."""


class ExploreGold(BaseModel):
    model_config = ConfigDict(frozen=True)

    question: str
    path: GoldPath
    parts: list[AnswerPart]
    fallback: str
    dataset_version: str


def _value(sql: str, dataset_dir: Path, what: str) -> float | str:
    rows = run_gold_sql(sql, dataset_dir)
    if len(rows) != 1 or len(rows[0]) != 1 or rows[0][0] is None:
        raise ExploreGoldError(f"{what}: expected one non-NULL value, got {rows[:3]!r}")
    value = rows[0][0]
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        number = float(value)
        if not math.isfinite(number):
            raise ExploreGoldError(f"{what}: {number} is not a finite number")
        return number
    try:  # DECIMAL
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def explore_gold(spec: ExploreMilestoneTask, dataset_dir: Path) -> ExploreGold:
    milestones = [
        Milestone(
            key=m.key,
            value=_value(m.sql, dataset_dir, f"milestone {m.key}"),
            relative_tolerance=m.relative_tolerance,
        )
        for m in spec.milestones
    ]
    by_key = {m.key: m.value for m in milestones}
    parts = [
        AnswerPart(
            name=p.name,
            value=by_key[p.milestone]
            if p.milestone is not None
            else _value(p.sql or "", dataset_dir, f"answer part {p.name}"),
            relative_tolerance=p.relative_tolerance,
            unit=p.unit,
        )
        for p in spec.answer
    ]
    return ExploreGold(
        question=spec.question,
        path=GoldPath(steps=spec.steps, milestones=milestones),
        parts=parts,
        fallback=spec.guidelines.fallback,
        dataset_version=dataset_version(dataset_dir),
    )


def plain(value: float | str) -> str:
    """A value as the reference answer writes it: fixed-point, up to six decimals."""
    if isinstance(value, str):
        return value
    if value.is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def reference_answer(gold: ExploreGold) -> str:
    """The oracle's answer: every answer part, then every milestone value on the way (so the
    milestone judge finds each in the final answer: the oracle's GPR is 100)."""
    answer = "; ".join(f"{p.name}: {plain(p.value)}" for p in gold.parts)
    path = "; ".join(f"{m.key} is {plain(m.value)}" for m in gold.path.milestones)
    return f"Answer. {answer}.\n\nMilestones on the way. {path}."

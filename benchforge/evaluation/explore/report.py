"""The exploration report's numbers: per agent Acc / GPR / TPE / EE with intervals, the rank
gap between Acc and GPR, accuracy by difficulty, the first missed milestone, termination modes.

Conventions (DataClawBench's, made explicit):
- Acc, GPR and TPE are averaged over every scored trial (a correct trial that reached every
  milestone has GPR 1); ``gpr_failed`` is DataClawBench's GPR, over *incorrect* trials only
  (how far an agent got when it failed); EE is over *correct* trials (how efficiently it
  succeeded).
- Each figure is the mean over epochs of the per-epoch mean (± sample std over epochs), with a
  percentile bootstrap interval of the mean over tasks (each task's mean over its epochs).
- Unscored trials (a judge that gave no verdict, an infrastructure error) are counted apart and
  left out of every mean. A metric with no trial to average (TPE of an agent that never failed)
  is None, never 0.
- Rank gap: an agent's rank by GPR minus its rank by Acc (1 = best; ties share the best rank).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.explore.metrics import TerminationMode
from benchforge.evaluation.leaderboard.stats import bootstrap_mean_ci

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")


class ExploreTrial(BaseModel):
    """What the report needs of one scored trial."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    task_id: str
    epoch: int
    difficulty: Difficulty
    scored: bool = True
    accuracy: float | None = None
    correct: bool | None = None
    gpr: float | None = None
    tpe: float | None = None
    ee: float | None = None
    first_missed_index: int | None = Field(
        default=None, description="1-based position of the first missed milestone"
    )
    termination: TerminationMode | None = None


class MetricSummary(BaseModel):
    mean: float | None
    std: float | None
    interval: tuple[float, float] | None
    trials: int


class AgentRow(BaseModel):
    agent: str
    accuracy: MetricSummary
    gpr: MetricSummary
    gpr_failed: MetricSummary
    tpe: MetricSummary
    ee: MetricSummary
    accuracy_by_difficulty: dict[str, float | None]
    rank_accuracy: int | None = None
    rank_gpr: int | None = None
    rank_gap: int | None = None
    unscored: int
    first_missed: dict[int, int] = Field(description="milestone position -> failed trials")
    terminations: dict[str, int]


class ExploreReport(BaseModel):
    rows: list[AgentRow]


def build_report(
    trials: Sequence[ExploreTrial], *, resamples: int = 2000, seed: int = 0
) -> ExploreReport:
    by_agent: dict[str, list[ExploreTrial]] = defaultdict(list)
    for trial in trials:
        by_agent[trial.agent].append(trial)
    rows = [_row(agent, by_agent[agent], resamples, seed) for agent in sorted(by_agent)]
    _rank(rows, "accuracy", "rank_accuracy")
    _rank(rows, "gpr", "rank_gpr")
    for row in rows:
        if row.rank_accuracy is not None and row.rank_gpr is not None:
            row.rank_gap = row.rank_gpr - row.rank_accuracy
    return ExploreReport(rows=rows)


def _row(agent: str, trials: list[ExploreTrial], resamples: int, seed: int) -> AgentRow:
    scored = [t for t in trials if t.scored and t.accuracy is not None]
    failed = [t for t in scored if not t.correct]
    passed = [t for t in scored if t.correct]

    def summary(
        items: list[ExploreTrial], value: Callable[[ExploreTrial], float | None]
    ) -> MetricSummary:
        return _summary(items, value, resamples, seed)

    by_difficulty: dict[str, float | None] = {}
    for level in DIFFICULTIES:
        level_trials = [t for t in scored if t.difficulty == level]
        by_difficulty[level] = summary(level_trials, lambda t: t.accuracy).mean
    return AgentRow(
        agent=agent,
        accuracy=summary(scored, lambda t: t.accuracy),
        gpr=summary(scored, lambda t: t.gpr),
        gpr_failed=summary(failed, lambda t: t.gpr),
        tpe=summary(scored, lambda t: t.tpe),
        ee=summary(passed, lambda t: t.ee),
        accuracy_by_difficulty=by_difficulty,
        unscored=len(trials) - len(scored),
        first_missed=dict(
            sorted(Counter(t.first_missed_index for t in failed if t.first_missed_index).items())
        ),
        terminations=dict(sorted(Counter(t.termination for t in scored if t.termination).items())),
    )


def _summary(
    trials: list[ExploreTrial],
    value: Callable[[ExploreTrial], float | None],
    resamples: int,
    seed: int,
) -> MetricSummary:
    per_epoch: dict[int, list[float]] = defaultdict(list)
    per_task: dict[str, list[float]] = defaultdict(list)
    for trial in trials:
        v = value(trial)
        if v is not None:
            per_epoch[trial.epoch].append(v)
            per_task[trial.task_id].append(v)
    epoch_means = [math.fsum(v) / len(v) for _, v in sorted(per_epoch.items())]
    task_means = [math.fsum(v) / len(v) for _, v in sorted(per_task.items())]
    return MetricSummary(
        mean=math.fsum(epoch_means) / len(epoch_means) if epoch_means else None,
        std=statistics.stdev(epoch_means) if len(epoch_means) >= 2 else None,
        interval=bootstrap_mean_ci(task_means, resamples=resamples, seed=seed),
        trials=sum(len(v) for v in per_epoch.values()),
    )


def _rank(rows: list[AgentRow], metric: str, field: str) -> None:
    values = {row.agent: getattr(row, metric).mean for row in rows}
    for row in rows:
        mine = values[row.agent]
        if mine is None:
            continue
        better = sum(1 for other in values.values() if other is not None and other > mine)
        setattr(row, field, better + 1)


def accuracy_drop(row: AgentRow) -> dict[str, float | None]:
    """Accuracy lost from easy to medium and from medium to hard (None where a level is empty)."""
    acc = row.accuracy_by_difficulty

    def drop(a: str, b: str) -> float | None:
        x, y = acc.get(a), acc.get(b)
        return None if x is None or y is None else x - y

    return {"easy_to_medium": drop("easy", "medium"), "medium_to_hard": drop("medium", "hard")}

"""Task-weighted aggregation of lake scores per domain, over repeated runs (epochs).

Per epoch, a domain's score is the mean over its tasks scored in that epoch (each task weighs
the same, whatever its sub-tasks). The domain then shows the mean ± sample std of those epoch
scores, and a percentile bootstrap interval of the mean that resamples tasks (each task's mean
over its epochs), seeded so a report is reproducible. Unscored answers (``AnswerScore.counted``
False: judge failures, metric errors) are left out of every mean and counted as ``errors``; no
answer and unreadable answers count as 0 and are counted too, so neither kind hides in a mean.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from benchforge.evaluation.lake.scorers import AnswerScore, ScoreStatus
from benchforge.evaluation.leaderboard.stats import bootstrap_mean_ci

OVERALL = "overall"


class TaskRunScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    domain: str
    epoch: int
    score: AnswerScore


class Spread(BaseModel):
    """A figure over repeated runs: the mean over epochs of the per-epoch task mean, the sample
    std of those epoch means (None with one epoch), and a bootstrap interval of the mean over
    tasks (each task's mean over its epochs; None with one task)."""

    model_config = ConfigDict(extra="forbid")

    mean: float | None
    std: float | None
    interval: tuple[float, float] | None
    trials: int


def spread(
    values: Sequence[tuple[str, int, float]], *, resamples: int = 2000, seed: int = 0
) -> Spread:
    """``values``: (task, epoch, value) per counted trial."""
    per_epoch: dict[int, list[float]] = defaultdict(list)
    per_task: dict[str, list[float]] = defaultdict(list)
    for task, epoch, value in values:
        per_epoch[epoch].append(value)
        per_task[task].append(value)
    epoch_means = [math.fsum(v) / len(v) for _, v in sorted(per_epoch.items())]
    task_means = [math.fsum(v) / len(v) for _, v in sorted(per_task.items())]
    return Spread(
        mean=math.fsum(epoch_means) / len(epoch_means) if epoch_means else None,
        std=statistics.stdev(epoch_means) if len(epoch_means) >= 2 else None,
        interval=bootstrap_mean_ci(task_means, resamples=resamples, seed=seed),
        trials=len(values),
    )


class ScoreSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str
    tasks: int
    epochs: int
    mean: float | None
    std: float | None
    interval: tuple[float, float] | None
    errors: int
    no_answer: int
    unreadable: int


def summarize(
    runs: list[TaskRunScore], *, resamples: int = 2000, seed: int = 0
) -> list[ScoreSummary]:
    """One summary per domain (sorted), then the overall one over every task."""
    by_domain: dict[str, list[TaskRunScore]] = defaultdict(list)
    for run in runs:
        by_domain[run.domain].append(run)
    summaries = [_summary(d, by_domain[d], resamples, seed) for d in sorted(by_domain)]
    if runs:
        summaries.append(_summary(OVERALL, runs, resamples, seed))
    return summaries


def _summary(domain: str, runs: list[TaskRunScore], resamples: int, seed: int) -> ScoreSummary:
    counted = [
        (f"{run.domain}/{run.task_id}", run.epoch, run.score.score)
        for run in runs
        if run.score.score is not None
    ]
    figures = spread(counted, resamples=resamples, seed=seed)
    statuses = [run.score.status for run in runs]
    return ScoreSummary(
        domain=domain,
        tasks=len({(run.domain, run.task_id) for run in runs}),
        epochs=len({run.epoch for run in runs}),
        mean=figures.mean,
        std=figures.std,
        interval=figures.interval,
        errors=sum(not run.score.counted for run in runs),
        no_answer=statuses.count(ScoreStatus.NO_ANSWER),
        unreadable=statuses.count(ScoreStatus.UNREADABLE),
    )

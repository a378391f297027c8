"""Task-weighted lake aggregation per domain, with errors counted apart."""

from __future__ import annotations

import pytest

from benchforge.evaluation.lake.aggregate import OVERALL, TaskRunScore, summarize
from benchforge.evaluation.lake.answers import AnswerType
from benchforge.evaluation.lake.scorers import AnswerScore, ScoreStatus


def run(
    task: str, domain: str, epoch: int, score: float | None, status: str = "scored"
) -> TaskRunScore:
    return TaskRunScore(
        task_id=task,
        domain=domain,
        epoch=epoch,
        score=AnswerScore(
            answer_type=AnswerType.NUMERIC_EXACT, status=ScoreStatus(status), score=score
        ),
    )


def test_domain_mean_std_and_errors() -> None:
    runs = [
        # epoch 0: crm mean (1 + 0) / 2 = 0.5; epoch 1: (1 + 0.5) / 2 = 0.75
        run("t1", "crm", 0, 1.0),
        run("t2", "crm", 0, 0.0, "no_answer"),
        run("t1", "crm", 1, 1.0),
        run("t2", "crm", 1, 0.5),
        # an unscored epoch-1 task is left out of the mean and counted
        run("t3", "crm", 1, None, "judge_failed"),
        run("u1", "ops", 0, 0.25),
        run("u1", "ops", 1, 0.75),
    ]
    crm, ops, overall = summarize(runs, resamples=200, seed=1)
    assert crm.domain == "crm" and crm.tasks == 3 and crm.epochs == 2
    assert crm.mean == pytest.approx(0.625)
    assert crm.std == pytest.approx(0.1767766953)  # stdev([0.5, 0.75])
    assert (crm.errors, crm.no_answer, crm.unreadable) == (1, 1, 0)
    assert ops.mean == pytest.approx(0.5) and ops.interval is None  # one task: no interval
    # overall, task-weighted: epoch 0 (1 + 0 + 0.25) / 3, epoch 1 (1 + 0.5 + 0.75) / 3
    assert overall.domain == OVERALL
    assert overall.mean == pytest.approx((1.25 / 3 + 2.25 / 3) / 2)
    assert overall.interval is not None
    low, high = overall.interval
    assert 0 <= low <= high <= 1


def test_a_domain_with_only_errors_has_no_mean() -> None:
    (summary, _) = summarize([run("t", "crm", 0, None, "metric_error")])
    assert summary.mean is None and summary.errors == 1


def test_the_interval_is_reproducible() -> None:
    runs = [run(f"t{i}", "crm", e, (i * 7 + e) % 5 / 4) for i in range(6) for e in range(3)]
    assert summarize(runs, seed=3) == summarize(runs, seed=3)


def test_spread_by_hand() -> None:
    from benchforge.evaluation.lake.aggregate import spread

    # epochs: 0 -> (1 + 0) / 2 = 0.5, 1 -> (1 + 1) / 2 = 1.0; tasks: a 1.0, b 0.5
    figures = spread([("a", 0, 1.0), ("b", 0, 0.0), ("a", 1, 1.0), ("b", 1, 1.0)], seed=1)
    assert figures.mean == pytest.approx(0.75)
    assert figures.std == pytest.approx(0.3535533906)
    assert figures.trials == 4 and figures.interval is not None
    assert spread([]).mean is None

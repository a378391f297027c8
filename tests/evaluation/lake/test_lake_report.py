"""The lake report on hand-made scores: accuracy per setting, difficulty and answer type,
sub-tasks kept apart, errors left out (not counted as 0), retrieval from tool calls, calls per
role; markdown and HTML with the plot."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from benchforge.core.records import Step, TrialKey, TrialScore
from benchforge.evaluation.families.lake import LakeAnswerDetail
from benchforge.evaluation.lake.answers import AnswerType
from benchforge.evaluation.lake.report import (
    TrialFacts,
    build_lake_report,
    files_read,
    retrieval,
    to_html,
    to_markdown,
)

GOLD = ["sales/a.csv", "sales/b.csv"]


def trial(
    task: str,
    setting: str,
    accuracy: float | None,
    *,
    agent: str = "react-lake",
    mode: str = "task",
    kind: AnswerType = AnswerType.NUMERIC_EXACT,
    epoch: int = 0,
) -> TrialScore:
    detail = LakeAnswerDetail(
        setting=setting,
        mode=mode,
        answer_type=kind,
        given="1",
        expected=1.0,
        gold_files=GOLD,
        lake_seed=7,
    )
    return TrialScore(
        run_id="r",
        key=TrialKey(
            suite="lake-crm",
            task_id=task,
            task_version="1",
            agent=agent,
            agent_config_hash="0" * 12,
            model="m",
            epoch=epoch,
        ),
        family="lake_pipeline",
        status="scored" if accuracy is not None else "scoring_error",
        metrics={"accuracy": accuracy, "pipeline_design": 50.0} if accuracy is not None else {},
        termination="finished",
        breakdown=detail,
        cost_usd=0.01,
    )


def test_accuracy_is_kept_apart_per_setting_type_and_difficulty() -> None:
    scores = [
        trial("q1-full", "full", 100.0),
        trial("q1-full", "full", 50.0, epoch=1),
        trial("q2-full", "full", 0.0, kind=AnswerType.LIST_EXACT),
        trial("q1-oracle", "oracle", 100.0),
        trial("q1-oracle", "oracle", None, epoch=1),  # a scoring error: no result, not a 0
        trial("q1-subtasks", "oracle", 40.0, mode="subtasks"),
    ]
    difficulty = {"q1-full": "easy", "q1-oracle": "easy", "q2-full": "hard"}
    facts = {
        scores[0].key.slug: TrialFacts(calls_by_role={"-": 4}, cost_by_role={"-": 0.01}),
        scores[1].key.slug: TrialFacts(calls_by_role={"-": 2}, cost_by_role={"-": None}),
    }
    report = build_lake_report(
        "r", [(s, None) for s in scores], difficulty_of=difficulty, facts=facts
    )
    [row] = report.rows
    assert row.trials == 5
    assert row.accuracy_by_setting == {
        "full": pytest.approx(50.0),
        "oracle": 100.0,
        "trimmed": None,
        "obscured": None,
    }
    assert row.subtasks == 40.0  # the sub-task mode is not a setting's accuracy
    assert row.accuracy_by_difficulty == {"easy": pytest.approx(250 / 3), "hard": 0.0}
    assert row.accuracy_by_type == {"list_exact": 0.0, "numeric_exact": pytest.approx(250 / 3)}
    assert row.pipeline_design == 50.0
    assert row.roles["-"].calls == 6 and row.roles["-"].calls_per_trial == pytest.approx(1.2)
    assert row.roles["-"].cost_usd is None  # one call unpriced: the sum is unknown
    assert row.cost_usd == pytest.approx(0.05)
    markdown = to_markdown(report)
    # full: epoch 0 (100 + 0) / 2, epoch 1 50 -> 50 ± 0 over epochs, two tasks bootstrapped
    full = row.accuracy_spread["full"]
    assert (full.mean, full.std, full.trials) == (50.0, 0.0, 3)
    assert full.interval is not None and full.interval[0] < full.interval[1]
    assert row.accuracy_spread["oracle"].std is None  # one epoch: no spread
    assert "| react-lake / m | 5 | 50.0 ± 0.0 | 100.0 | — | — | 40.0 | 50.0 |" in markdown
    page = to_html(report)
    assert "<svg" in page and "Accuracy per setting" in page


def step(name: str, **arguments: str) -> Step:
    return Step(
        kind="tool",
        index=0,
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        seconds=0.1,
        name=name,
        arguments=arguments,
    )


def test_retrieval_counts_the_files_tool_calls_name() -> None:
    steps = [
        step("read_file", path="sales/a.csv"),
        step("execute_python", code="pd.read_csv('sales/a.csv'); pd.read_csv('./old/c.csv')"),
        step("list_files"),
    ]
    read = files_read(steps)
    assert read == {"sales/a.csv", "old/c.csv"}
    assert retrieval(read, GOLD) == (50.0, 50.0)
    assert retrieval(set(), GOLD) == (None, 0.0)

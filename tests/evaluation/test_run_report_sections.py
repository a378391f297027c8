"""Families' own run-report sections (``TaskFamily.run_report``) on hand-made trials: the
section is the family's report as the report flow wrote it before the hook (same markdown,
same pages by the same names), the judge is opened only when a failed trial needs one, the
trajectory's usage reaches the lake report, and the report flow names no family."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from benchforge.core.records import Step, TrialKey, TrialScore
from benchforge.core.records.trials import TrialResult
from benchforge.evaluation.dab import report as dab
from benchforge.evaluation.families import FamilyBase, families, get_family
from benchforge.evaluation.families.lake import LakeAnswerDetail
from benchforge.evaluation.families.run_report import RunReportContext
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.lake import report as lake
from benchforge.evaluation.lake.answers import AnswerType
from benchforge.evaluation.tasks import load_task
from benchforge.evaluation.tasks.models import TaskSpecBase
from benchforge.harness.run_report import trajectory_usage
from tests.paths import REPO_ROOT
from tests.support.dab_trials import SOLVED, result, score

DAB_TASK = "crm-dab-healthcare-contacts"
LAKE_TASK = "crm-lake-webinar-campaigns-full"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def load_spec(suite: str, task_id: str) -> TaskSpecBase:
    return load_task(REPO_ROOT / "task_specs" / suite / task_id).spec


def context(
    scores: list[TrialScore], results: dict[str, TrialResult], opened: list[str]
) -> RunReportContext:
    @contextmanager
    def open_judge() -> Iterator[Judge]:
        opened.append("judge")
        yield None  # type: ignore[misc]  # failures labelled by code need no judge's call

    return RunReportContext(
        run_id="r",
        scores=scores,
        read_result=results.get,
        load_spec=load_spec,
        open_judge=open_judge,
        trajectory_usage=trajectory_usage,
    )


def dab_trial(trajectory: list[Step], answer: str | None, passed: bool, epoch: int = 0):
    res = result(trajectory, answer, task_id=DAB_TASK, epoch=epoch)
    return score(res, passed), res


def test_dab_section_is_the_dab_report_and_opens_no_judge_without_a_failure() -> None:
    trials = [dab_trial(SOLVED, "55", True), dab_trial(SOLVED, "55", True, epoch=1)]
    opened: list[str] = []
    section = get_family("dab_query").run_report(
        context([s for s, _ in trials], {s.key.slug: r for s, r in trials}, opened)
    )
    assert section is not None and opened == []
    assert list(section.pages) == ["dab-report.md", "dab-report.html", "dab-report.json"]
    spec = load_spec("dab-crm", DAB_TASK)
    expected = Judge.run(
        dab.dab_run_report(
            "r",
            trials,
            questions={DAB_TASK: spec.question},  # type: ignore[attr-defined]
            dataset_of={DAB_TASK: spec.dataset.location or spec.dataset.domain},
            judge=None,
        )
    )
    assert section.markdown == section.pages["dab-report.md"] == dab.to_markdown(expected)
    assert section.pages["dab-report.json"] == expected.model_dump_json(indent=1)
    assert json.loads(section.pages["dab-report.json"])["rows"][0]["trials"] == 2


def test_dab_section_opens_the_judge_once_for_failed_trials() -> None:
    trials = [dab_trial(SOLVED, "55", True), dab_trial([], None, False, epoch=1)]
    results = {s.key.slug: r for s, r in trials}
    opened: list[str] = []
    section = get_family("dab_query").run_report(context([s for s, _ in trials], results, opened))
    assert section is not None and opened == ["judge"]
    [label] = json.loads(section.pages["dab-report.json"])["failures"]
    assert (label["mode"], label["source"]) == ("before_planning", "code")
    # a failed trial without a stored result is not labelled: no judge for it either
    opened.clear()
    del results[trials[1][0].key.slug]
    get_family("dab_query").run_report(context([s for s, _ in trials], results, opened))
    assert opened == []


def model_step(index: int, role: str, output: str = "", cost: float | None = 0.01) -> Step:
    return Step(
        kind="model",
        index=index,
        started_at=T0,
        seconds=1.0,
        name="m",
        role=role,
        output=output,
        cost_usd=cost,
    )


STEPS = [
    model_step(0, "planner"),
    model_step(1, "verifier", "No, not yet sufficient."),
    model_step(2, "planner", cost=None),  # unpriced: the role's cost is unknown
    model_step(3, "verifier", "Yes, sufficient."),
]


def test_trajectory_usage_counts_calls_by_role_and_rounds() -> None:
    usage = trajectory_usage(STEPS)
    assert usage.calls_by_role == {"planner": 2, "verifier": 2}
    assert usage.cost_by_role == {"planner": None, "verifier": 0.02}
    assert usage.rounds == 2
    assert trajectory_usage(STEPS[:2]).rounds is None


def lake_trial(accuracy: float) -> tuple[TrialScore, TrialResult]:
    key = TrialKey(
        suite="lake-crm",
        task_id=LAKE_TASK,
        task_version="1",
        agent="ds-star",
        agent_config_hash="0" * 12,
        model="m",
        epoch=0,
    )
    detail = LakeAnswerDetail(
        setting="full",
        mode="task",
        answer_type=AnswerType.NUMERIC_EXACT,
        given="1",
        expected=1.0,
        gold_files=["sales/a.csv"],
        lake_seed=7,
    )
    score_ = TrialScore(
        run_id="r",
        key=key,
        family="lake_pipeline",
        status="scored",
        metrics={"accuracy": accuracy, "pipeline_design": 50.0},
        termination="finished",
        breakdown=detail,
        cost_usd=0.01,
    )
    res = TrialResult(
        run_id="r",
        key=key,
        family="lake_pipeline",
        status="completed",
        termination="finished",
        trajectory=STEPS,
        started_at=T0,
        finished_at=T0,
        wall_s=1.0,
    )
    return score_, res


def test_lake_section_is_the_lake_report_with_the_trajectory_usage() -> None:
    score_, res = lake_trial(100.0)
    section = get_family("lake_pipeline").run_report(context([score_], {score_.key.slug: res}, []))
    assert section is not None
    assert list(section.pages) == ["lake-report.md", "lake-report.html", "lake-report.json"]
    spec = load_spec("lake-crm", LAKE_TASK)
    facts = lake.TrialFacts(
        calls_by_role={"planner": 2, "verifier": 2},
        cost_by_role={"planner": None, "verifier": 0.02},
        rounds=2,
    )
    expected = lake.build_lake_report(
        "r",
        [(score_, res)],
        difficulty_of={LAKE_TASK: spec.difficulty},  # type: ignore[attr-defined]
        facts={score_.key.slug: facts},
    )
    assert section.markdown == section.pages["lake-report.md"] == lake.to_markdown(expected)
    assert section.pages["lake-report.json"] == expected.model_dump_json(indent=1)


def test_a_family_adds_no_section_by_default() -> None:
    assert FamilyBase.run_report(get_family("dab_query"), context([], {}, [])) is None


def test_the_report_flow_names_no_family() -> None:
    source = (REPO_ROOT / "benchforge" / "flows" / "report.py").read_text()
    for name, family in families().items():
        assert name not in source
        assert type(family).__module__ not in source
    for package in ("evaluation.dab", "evaluation.explore", "evaluation.lake", "dsstar"):
        assert package not in source

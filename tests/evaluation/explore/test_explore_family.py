"""The ``explore_milestone`` family on a hand-made gold and trajectories: Acc and milestones with
known numbers, the oracle's reference answer at 100, no answer at 0, a judge that fails leaves
the trial unscored (never 0), the harness's trajectory identity, and the shipped suite's shape."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchforge.core.records import Step, TrialKey, TrialResult, TrialScore
from benchforge.evaluation.calibration.runner import judge_milestone_cases
from benchforge.evaluation.explore.accuracy import AnswerPart
from benchforge.evaluation.explore.gold import ExploreGold, reference_answer
from benchforge.evaluation.explore.models import GoldPath, Milestone
from benchforge.evaluation.explore.spec import ExploreMilestoneTask
from benchforge.evaluation.families import family_of
from benchforge.evaluation.families.explore import ExploreDetail
from benchforge.evaluation.tasks.loader import load_task, load_tasks
from benchforge.harness.score_store import ScoreIdentity, trajectory_fingerprint
from tests.evaluation.judges.conftest import JudgeFactory
from tests.paths import REPO_ROOT

SUITE = REPO_ROOT / "task_specs" / "explore-enterprise"
TASK = load_task(SUITE / "ent-revenue-growth-top-industry")
GOLD = ExploreGold(
    question="By how much did the largest industry's revenue grow?",
    path=GoldPath(
        steps=["drop totals", "convert units", "sum 2023", "pick largest", "sum 2022", "growth"],
        milestones=[
            Milestone(key="top_industry", value="E47"),
            Milestone(key="top_revenue", value=59.737),
            Milestone(key="prior_revenue", value=24.054),
            Milestone(key="growth_pct", value=148.35),
        ],
    ),
    parts=[AnswerPart(name="growth", value=148.35, unit="percent", relative_tolerance=0.01)],
    fallback="No relevant data found",
    dataset_version="v",
)
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def steps(*turns: tuple[str, str]) -> list[Step]:
    out: list[Step] = []
    for text, output in turns:
        out.append(
            Step(kind="model", index=len(out), started_at=NOW, seconds=1, name="m", output=text)
        )
        out.append(
            Step(
                kind="tool", index=len(out), started_at=NOW, seconds=1, name="python", output=output
            )
        )
    return out


def score(judge: object, answer: str | None, trajectory: list[Step], termination: str = "finished"):
    family = family_of(TASK)
    return family.score(  # type: ignore[call-arg]
        TASK,
        Path("."),
        GOLD,
        Path("."),
        Path("."),
        judge=judge,
        answer=answer,
        trajectory=trajectory,
        termination=termination,
    )


def test_a_correct_trial_scores_acc_gpr_and_ee(make_judge: JudgeFactory) -> None:
    trajectory = steps(
        ("I sum 2023 revenue per industry.", "E47    59.7370\nI65    44.3311"),
        ("Now E47's 2022 revenue.", "24.0540"),
        ("Growth.", "148.35"),
    )
    result = score(make_judge(), "Revenue grew by 148.35%.", trajectory)
    assert result.success
    assert result.metrics == {"accuracy": 100.0, "gpr": 100.0, "tpe": 100.0, "ee": 200.0}
    detail = result.breakdown
    assert isinstance(detail, ExploreDetail)
    assert (detail.difficulty, detail.gold_steps, detail.agent_steps) == ("hard", 6, 3)
    assert detail.termination == "answered" and detail.milestones.first_missed is None


def test_a_wrong_answer_part_of_the_way(make_judge: JudgeFactory) -> None:
    trajectory = steps(("I sum 2023 revenue per industry.", "E47    59.7370\nI65    44.3311"))
    result = score(make_judge(), "Revenue grew by 12%.", trajectory)
    assert not result.success
    assert result.metrics == {"accuracy": 0.0, "gpr": 50.0, "tpe": 100.0}
    detail = result.breakdown
    assert isinstance(detail, ExploreDetail)
    assert detail.milestones.first_missed == "prior_revenue"
    assert detail.termination == "wrong_answer_stop" and detail.ee is None


def test_no_answer_scores_zero_and_the_fallback_is_a_give_up(make_judge: JudgeFactory) -> None:
    silent = score(make_judge(), None, [])
    assert silent.metrics == {"accuracy": 0.0, "gpr": 0.0}
    assert isinstance(silent.breakdown, ExploreDetail)
    assert silent.breakdown.termination == "silent_stop"
    gave_up = score(make_judge(), "No relevant data found", steps(("look", "nothing")))
    assert isinstance(gave_up.breakdown, ExploreDetail)
    assert gave_up.breakdown.termination == "give_up"


def test_the_reference_answer_scores_100_on_both(make_judge: JudgeFactory) -> None:
    answer = reference_answer(GOLD)
    assert "top_revenue is 59.737" in answer and "growth: 148.35" in answer
    result = score(make_judge(), answer, [])
    assert result.metrics["accuracy"] == 100.0 and result.metrics["gpr"] == 100.0


def test_a_judge_without_verdict_leaves_the_trial_unscored_not_zero(
    make_judge: JudgeFactory,
) -> None:
    result = score(make_judge("mock-judge-broken"), "Revenue grew by 148.35%.", [])
    # accuracy is the code's (a number), the milestones are the judge's: left out, not 0
    assert result.metrics == {"accuracy": 100.0} and not result.reusable
    assert result.detail == "unscored: milestones"


def test_the_trajectory_is_part_of_the_score_identity() -> None:
    key = TrialKey(
        suite="s",
        task_id="t",
        task_version="1",
        agent="a",
        agent_config_hash="h",
        model="-",
        epoch=0,
    )
    base = dict(run_id="r", key=key, family="explore_milestone", status="completed")
    started = dict(started_at=NOW, finished_at=NOW, wall_s=1.0)
    one = TrialResult(**base, termination="finished", trajectory=steps(("a", "1")), **started)
    two = TrialResult(**base, termination="finished", trajectory=steps(("a", "2")), **started)
    timed = one.model_copy(update={"termination": "wall_clock"})
    prints = {trajectory_fingerprint(r) for r in (one, two, timed)}
    assert len(prints) == 3
    fields = dict(family="f", task="t", scorer="s", datasets={}, submission="d", answer="x")
    plain = ScoreIdentity(**fields)
    assert ScoreIdentity(**fields, trajectory=None).key == plain.key  # other families: unchanged
    assert ScoreIdentity(**fields, trajectory="abc").key != plain.key


def test_the_spec_refuses_an_answer_without_source_and_unknown_milestones() -> None:
    raw = TASK.spec.model_dump(mode="json")
    raw["answer"] = [{"name": "x"}]
    with pytest.raises(ValidationError, match="exactly one of milestone"):
        ExploreMilestoneTask.model_validate(raw)
    raw["answer"] = [{"name": "x", "milestone": "nowhere"}]
    with pytest.raises(ValidationError, match="names no milestone"):
        ExploreMilestoneTask.model_validate(raw)
    raw["answer"] = [{"name": "x", "milestone": "growth_pct"}]
    raw["milestones"][0]["key"] = "revenue_2023"
    with pytest.raises(ValidationError, match="key"):
        ExploreMilestoneTask.model_validate(raw)


def test_the_shipped_suite_spans_categories_and_difficulties() -> None:
    tasks = load_tasks(SUITE)
    specs = [t.spec for t in tasks if isinstance(t.spec, ExploreMilestoneTask)]
    assert len(specs) == len(tasks) >= 15
    assert {s.difficulty for s in specs} == {"easy", "medium", "hard"}
    assert len({s.category for s in specs}) >= 5
    assert all(
        "return_answer" in s.instructions and "No relevant data" in s.instructions for s in specs
    )


def test_milestone_verdicts_become_calibration_cases_rejudged_alike(
    make_judge: JudgeFactory,
) -> None:
    """A scored trial gives one case per milestone with what the judge was shown; judged
    again as calibration judges them, each case gets the verdict the scoring had."""
    trajectory = steps(("I sum 2023 revenue per industry.", "E47    59.7370\nI65    44.3311"))
    result = score(make_judge(), "Revenue grew by 12%.", trajectory)
    detail = result.breakdown
    assert isinstance(detail, ExploreDetail)
    key = TrialKey(
        suite=TASK.spec.suite,
        task_id=TASK.spec.id,
        task_version=TASK.spec.version,
        agent="react",
        agent_config_hash="1234",
        model="gpt",
        epoch=0,
    )
    trial = TrialScore(
        run_id="r",
        key=key,
        family=TASK.spec.family,
        status="scored",
        termination="finished",
        breakdown=detail,
    )
    cases = family_of(TASK).verdict_cases(TASK, GOLD, trial)
    assert [c.milestone_key for c in cases] == [m.key for m in GOLD.path.milestones]
    assert {c.call for c in cases} == {f"{key.slug}:milestones"}
    assert all(c.kind == "milestone" and c.output == "Revenue grew by 12%." for c in cases)
    assert cases[0].milestones is not None
    assert cases[0].milestones.excerpts == detail.milestones.excerpts
    judge = make_judge()
    judgments = judge.run(judge_milestone_cases(judge, cases, 0))
    verdicts = {o.key: o.judged_achieved for o in detail.milestones.outcomes}
    assert verdicts == {"top_industry": True, "top_revenue": True, "prior_revenue": False,
                        "growth_pct": False}  # fmt: skip
    assert {j.case_id.rsplit(":", 1)[1]: j.value == 1.0 for j in judgments} == verdicts
    unscored = trial.model_copy(
        update={
            "breakdown": detail.model_copy(
                update={"milestones": detail.milestones.model_copy(update={"status": "unscored"})}
            )
        }
    )
    assert family_of(TASK).verdict_cases(TASK, GOLD, unscored) == []

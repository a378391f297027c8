"""Judge calibration through the flows and the CLI: ``export_labelling`` from a scored run, the
``calibrate_judge`` flow on a real (ephemeral) Prefect server against the mock's noisy judges,
and bad labels refused before any judge is called."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchforge.cli.main import main
from benchforge.core.artifacts import open_store
from benchforge.core.errors import BenchforgeError
from benchforge.core.records import AgentLimits, RunSpec, TrialResult, TrialScore
from benchforge.core.records.trials import TrialKey
from benchforge.evaluation.calibration.cases import read_cases
from benchforge.evaluation.calibration.labels import LabelsError
from benchforge.evaluation.calibration.models import CalibrationReport
from benchforge.evaluation.calibration.store import calibration_needed
from benchforge.evaluation.explore.accuracy import AccuracyScore, AnswerPart
from benchforge.evaluation.explore.gold import ExploreGold
from benchforge.evaluation.explore.models import Excerpt, GoldPath, Milestone
from benchforge.evaluation.explore.score import MilestoneScore
from benchforge.evaluation.families.explore import ExploreDetail
from benchforge.evaluation.judges.breakdown import JudgeRecord
from benchforge.evaluation.tasks.loader import load_task
from benchforge.flows import calibrate as calibrate_flows
from benchforge.flows.calibrate import calibrate_judge, export_labelling
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES, REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

CALIBRATION = FIXTURES / "calibration"
LOW = "mock-judge-noisy:sigma=0.05,seed=1"
ARCH_TASK = ("de-mini", "mini-arch-retention", "1")
EXPLORE_TASK = "ent-revenue-growth-top-industry"
BLUEPRINTS = {
    "oracle": "models:\n  - name: fct_retention\n    grain: one row per account and quarter\n",
    "careless": "models:\n  - name: everything\n",
    "silent": "",  # an empty blueprint: scored 0 by code, not labelled
}


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "artifacts"
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    monkeypatch.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("BENCHFORGE_OPENAI_BASE_URL", raising=False)
    return root


def _scored_run(run_id: str, judged: bool = True) -> Iterator[str]:
    """A stored run of the de-mini architecture task, trials and scores written by hand (no
    agent runs): what export_labelling reads."""
    now = datetime.now(UTC)
    run = RunStore(open_store(), run_id)
    suite, task_id, version = ARCH_TASK
    run.write_spec(
        RunSpec(
            run_id=run_id,
            suites=[suite],
            tasks_root=str(FIXTURES / "task_specs"),
            agents=list(BLUEPRINTS),
            models=["-"],
            epochs=1,
            limits=AgentLimits(),
            datasets={f"{suite}/{task_id}@{version}": str(FIXTURES / "no-dataset")},
            created_at=now,
        )
    )
    for agent, blueprint in BLUEPRINTS.items():
        key = TrialKey(
            suite=suite,
            task_id=task_id,
            task_version=version,
            agent=agent,
            agent_config_hash="0000",
            model="-",
            epoch=0,
        )
        run.write_result(
            TrialResult(
                run_id=run_id,
                key=key,
                family="de_arch",
                status="completed",
                termination="finished",
                outputs={"design/blueprint.yaml": blueprint},
                started_at=now,
                finished_at=now,
                wall_s=1.0,
            )
        )
        run.write_score(
            TrialScore(
                run_id=run_id,
                key=key,
                family="de_arch",
                status="scored",
                termination="finished",
                metrics={"rubric": 50.0},
                primary="rubric",
                scored_on="visible",
                breakdown=JudgeRecord() if judged else None,
            )
        )
        yield key.slug


def test_export_labelling_samples_a_runs_judged_cases(artifacts: Path, tmp_path: Path) -> None:
    slugs = list(_scored_run("judged-run"))
    out = tmp_path / "labelling"
    summary = export_labelling("judged-run", out, per_stratum=2, seed=0)
    assert summary.judged_trials == 2  # the empty blueprint is left out
    assert summary.candidates == 2 * 3  # two trials, three rubric items each
    assert summary.cases == 4 and summary.strata == 2
    cases = read_cases(out / "cases.jsonl")
    assert {c.agent for c in cases.cases} == {"oracle", "careless"}
    assert all(c.kind == "rubric_item" and c.family == "de_arch" for c in cases.cases)
    assert {c.trial for c in cases.cases} <= set(slugs)
    (flat,) = cases.flat_rubrics.values()
    assert {i.id for i in flat.items} == {"BA1", "TF1", "DQ1"}
    oracle = next(c for c in cases.cases if c.agent == "oracle")
    assert oracle.output == BLUEPRINTS["oracle"] and oracle.question == flat.requirement
    with (out / "labelling.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["case_id"] for r in rows] == [c.case_id for c in cases.cases]
    assert "grain: one row per account" in (out / "labelling.html").read_text()
    # the CLI prints the same
    assert main(["judge", "export-labelling", "judged-run", "--out", str(tmp_path / "o2")]) == 0


def test_export_refuses_a_run_without_judged_trials(artifacts: Path, tmp_path: Path) -> None:
    list(_scored_run("plain-run", judged=False))
    with pytest.raises(BenchforgeError, match="has no judged trials"):
        export_labelling("plain-run", tmp_path / "x")


def test_the_flow_calibrates_stores_and_publishes(artifacts: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    summary = calibrate_judge(
        cases=str(CALIBRATION / "cases.jsonl"),
        labels=[str(CALIBRATION / "labels.csv")],
        judge_models=[LOW],
        repeats=1,
        resamples=50,
        out=str(out),
    )
    assert summary.mock_llm and summary.accepted == [LOW]
    (judge,) = summary.judges
    assert judge.accepted and not judge.reasons
    for name in ("rubric pearson_r", "gsb kappa", "rubric alpha (humans)", "gsb model spearman"):
        assert "[" in judge.figures[name], name  # a value with its interval
    report = CalibrationReport.model_validate_json((out / "report.json").read_text())
    assert report.cases == 152 and report.raters == ["rater1", "rater2", "rater3"]
    assert "data:image/png;base64," in (out / "report.html").read_text()
    stored = Path(summary.uris["report.json"])
    assert stored.is_relative_to(artifacts) and stored.is_file()
    store = open_store()
    assert not calibration_needed(store, report.judge(LOW).fingerprint)
    assert "accepted" in summary.markdown


def test_bad_labels_fail_before_any_judge_call(
    artifacts: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def no_server(*args: object, **kwargs: object) -> None:
        raise AssertionError("the mock server (and so a judge) was started")

    monkeypatch.setattr(calibrate_flows, "run_server", no_server)
    first = json.loads((CALIBRATION / "cases.jsonl").read_text().splitlines()[-1])
    bad = tmp_path / "labels.csv"
    bad.write_text(f"case_id,rater,label\n{first['case_id']},ann,7\nghost,ann,1\n")
    command = ["calibrate", "--cases", str(CALIBRATION / "cases.jsonl"), "--labels", str(bad)]
    assert main([*command, "--judge-model", LOW]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: " in err and "outside the item's range" in err
    assert f"{bad}:3: unknown case id 'ghost'" in err
    with pytest.raises(LabelsError, match="2 problem"):
        calibrate_judge.fn(
            cases=str(CALIBRATION / "cases.jsonl"), labels=[str(bad)], judge_models=[LOW]
        )


def test_the_nightly_recalibrates_only_when_the_judge_or_its_inputs_change(
    artifacts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases, labels = str(CALIBRATION / "cases.jsonl"), [str(CALIBRATION / "labels.csv")]
    truth = str(CALIBRATION / "truth.jsonl")

    def check(model: str) -> calibrate_flows.CalibrationCheck:
        return calibrate_flows.calibrate_if_changed(
            cases, labels, judge_models=[model], truth=truth, repeats=1, resamples=50
        )

    first = check(LOW)
    assert first.ran and first.summary is not None and first.summary.judges[0].model == LOW
    again = check(LOW)
    assert not again.ran and again.fingerprints == first.fingerprints  # nothing changed
    # a new judge prompt is a new fingerprint: calibrated again
    monkeypatch.setattr(
        calibrate_flows,
        "fingerprint_for",
        lambda model, c, lab: "changed-prompt-" + first.fingerprints[model],
    )
    assert check(LOW).ran


def test_export_labelling_gives_one_case_per_trial_and_milestone(
    artifacts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An explore run's trials (scores written by hand, the gold given): each scored trial's
    milestones become milestone cases, the question, gold path and excerpts with them; the
    trial whose milestones went unscored gives none."""
    gold = ExploreGold(
        question="By how much did the largest industry's revenue grow?",
        path=GoldPath(
            steps=["sum 2023", "pick largest", "sum 2022", "growth"],
            milestones=[
                Milestone(key="top_revenue", value=59.737),
                Milestone(key="growth_pct", value=148.35),
            ],
        ),
        parts=[AnswerPart(name="growth", value=148.35, unit="percent")],
        fallback="No relevant data found",
        dataset_version="v",
    )
    monkeypatch.setattr(calibrate_flows.GoldCache, "get", lambda self, task, dataset: gold)
    task = load_task(REPO_ROOT / "task_specs" / "explore-enterprise" / EXPLORE_TASK)
    now = datetime.now(UTC)
    run = RunStore(open_store(), "explore-run")
    run.write_spec(
        RunSpec(
            run_id="explore-run",
            suites=[task.spec.suite],
            tasks_root=str(REPO_ROOT / "task_specs"),
            agents=["react", "stuck"],
            models=["-"],
            epochs=1,
            limits=AgentLimits(),
            datasets={task.key: str(FIXTURES / "no-dataset")},
            created_at=now,
        )
    )
    excerpt = Excerpt(key="top_revenue", step=1, source="tool", text="E47    59.7370")
    for agent, status in (("react", "scored"), ("stuck", "unscored")):
        key = TrialKey(
            suite=task.spec.suite,
            task_id=task.spec.id,
            task_version=task.spec.version,
            agent=agent,
            agent_config_hash="0000",
            model="-",
            epoch=0,
        )
        milestones = MilestoneScore(status=status, agent_steps=1, excerpts=[excerpt])
        detail = ExploreDetail(
            given="Revenue grew by 12%.",
            category=task.spec.category,  # type: ignore[attr-defined]
            difficulty="medium",
            gold_steps=4,
            agent_steps=1,
            accuracy=AccuracyScore(status="scored", accuracy=0.0, correct=False, parts=[]),
            milestones=milestones,
            milestone_keys=["top_revenue", "growth_pct"],
            ee=None,
            termination=None,
            expected="148.35",
        )
        run.write_score(
            TrialScore(
                run_id="explore-run",
                key=key,
                family=task.spec.family,
                status="scored",
                termination="finished",
                metrics={"accuracy": 0.0},
                primary="accuracy",
                scored_on="visible",
                breakdown=detail,
            )
        )
    out = tmp_path / "labelling"
    summary = export_labelling("explore-run", out, per_stratum=5, seed=0)
    assert summary.candidates == summary.cases == 2 and summary.strata == 1
    cases = read_cases(out / "cases.jsonl")
    assert [c.milestone_key for c in cases.cases] == ["top_revenue", "growth_pct"]
    case = cases.cases[0]
    assert case.kind == "milestone" and case.agent == "react" and case.question == gold.question
    assert case.output == "Revenue grew by 12%." and case.milestones is not None
    assert case.milestones.gold == gold.path and case.milestones.excerpts == [excerpt]
    with (out / "labelling.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["item_or_dimension"] for r in rows] == [
        "milestone top_revenue = 59.737",
        "milestone growth_pct = 148.35",
    ]
    assert "E47    59.7370" in (out / "labelling.html").read_text()

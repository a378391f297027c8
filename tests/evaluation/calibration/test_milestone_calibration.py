"""Milestone verdicts in judge calibration: cases per (trial, milestone), yes/no labels, and
the milestone judge's agreement (accuracy, Cohen's kappa) with known numbers, the judges
answering in process (no server)."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchforge.agents.mock_llm.milestone_judge import faithful_milestones
from benchforge.agents.mock_llm.noisy_judge import NoisyJudgePolicy, TruthIndex
from benchforge.agents.mock_llm.policies import (
    PolicyError,
    PolicyReply,
    PolicyRequest,
    message_text,
)
from benchforge.core.llm import (
    LlmCallRecord,
    LlmClientView,
    LlmConfig,
    LlmLedger,
    LlmResponse,
    LlmUsage,
)
from benchforge.evaluation.calibration.cases import (
    CalibrationCase,
    CasesError,
    CaseSet,
    MilestoneMaterial,
    read_cases,
    write_cases,
)
from benchforge.evaluation.calibration.gate import GateSettings
from benchforge.evaluation.calibration.labels import (
    LabelsError,
    LabelSet,
    load_labels,
    truth_records,
)
from benchforge.evaluation.calibration.models import CalibrationReport
from benchforge.evaluation.calibration.render import to_html, to_markdown
from benchforge.evaluation.calibration.runner import calibrate_judge, judge_milestone_cases
from benchforge.evaluation.calibration.sheets import sample_cases, write_labelling
from benchforge.evaluation.calibration.stats import BootstrapSettings, cohen_kappa
from benchforge.evaluation.explore.models import Excerpt, GoldPath, Milestone
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.evaluation.judges.prompts import extract_material, extract_request

TRIALS, MILESTONES = 4, 5
VALUES = [120.0, 45.5, 17.0, 3.25, 0.8]
QUESTION = "Which industry lost the most profit, and by how much?"


class InProcess:
    """A ``ChatClient`` answering from a policy in process (headers passed on as the mock
    server does)."""

    def __init__(self, policy: Any, model: str) -> None:
        self.policy = policy
        self.config = LlmConfig(role="judge", model=model, api_key="x")
        self.ledger = LlmLedger()

    async def complete(self, messages: Sequence[Mapping[str, Any]], **kwargs: Any) -> LlmResponse:
        headers = {k.lower(): v for k, v in kwargs.get("extra_headers", {}).items()}
        request = PolicyRequest(model=self.config.model, messages=list(messages), headers=headers)
        answer = self.policy.reply(request)
        now = datetime.now(UTC)
        record = LlmCallRecord(
            role="judge", model=self.config.model, base_url="-", started_at=now, latency_s=0.0,
            attempts=1, status="ok",
        )  # fmt: skip
        return LlmResponse(
            content=answer.content, finish_reason="stop", usage=LlmUsage(), record=record
        )


class Faithful:
    """The mock server's faithful milestone rule (``mock-judge``), in process."""

    def reply(self, request: PolicyRequest) -> PolicyReply:
        prompt = message_text(next(m for m in request.messages if m.get("role") == "user"))
        payload = extract_request(prompt) or {}
        material = extract_material(prompt, "TRAJECTORY") or ""
        return PolicyReply(content=faithful_milestones(payload, material).model_dump_json())


def _judge_for(policy: Any, model: str) -> Any:
    return lambda _: Judge(LlmClientView(InProcess(policy, model)), JudgeSettings())


def _case_set() -> CaseSet:
    """Trial t's excerpts state the first t + 1 milestones' values (the faithful judge: those
    achieved, the rest not); 20 cases, 10 achieved."""
    gold = GoldPath(
        steps=["load", "filter", "group", "compare", "rank"],
        milestones=[Milestone(key=f"m{k}", value=v) for k, v in enumerate(VALUES)],
    )
    cases = []
    for t in range(TRIALS):
        excerpts = [
            Excerpt(key=f"m{k}", step=k + 1, source="tool", text=f"result: {VALUES[k]}")
            for k in range(t + 1)
        ]
        material = MilestoneMaterial(gold=gold, excerpts=excerpts, steps=MILESTONES)
        slug = f"agent{t % 2}--ent-x--e{t}"
        call = f"{slug}:milestones"
        cases += [
            CalibrationCase(
                case_id=f"{call}:m{k}",
                kind="milestone",
                task="explore-enterprise/ent-x@1",
                family="explore_milestone",
                agent=f"agent{t % 2}",
                trial=slug,
                run_id="r1",
                question=QUESTION,
                output="Manufacturing, down 17.",
                milestone_key=f"m{k}",
                call=call,
                milestones=material,
            )
            for k in range(MILESTONES)
        ]
    return CaseSet(cases=cases)


def _achieved(case: CalibrationCase) -> bool:
    """What the faithful judge says of ``case``: its excerpts state it."""
    assert case.milestones is not None
    return any(e.key == case.milestone_key for e in case.milestones.excerpts)


def _labels(cases: CaseSet, path: Path, raters: Sequence[str] = ("ann",)) -> LabelSet:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["case_id", "rater", "label"])
        for case in cases.cases:
            for rater in raters:
                writer.writerow([case.case_id, rater, "yes" if _achieved(case) else "no"])
    return load_labels(path, cases)


def _calibrate(cases: CaseSet, labels: LabelSet, policy: Any, model: str) -> CalibrationReport:
    return calibrate_judge(
        [model],
        cases,
        labels,
        1,
        GateSettings(min_cases=10),
        judge_for=_judge_for(policy, model),
        bootstrap=BootstrapSettings(resamples=50, seed=1),
    )


def test_cases_sample_a_trials_milestones_together_and_the_sheet_hides_the_verdict(
    tmp_path: Path,
) -> None:
    cases = _case_set()
    again = read_cases(write_cases(cases, tmp_path / "cases.jsonl"))
    assert again == cases
    assert cases.item_type(cases.cases[0]) == "milestone"
    sampled = sample_cases(cases, per_stratum=1, seed=0)  # one trial per (task, agent)
    assert len(sampled.cases) == 2 * MILESTONES
    assert all(len({c.call for c in sampled.cases if c.agent == a}) == 1 for a in ("agent0",))
    files = write_labelling(cases, tmp_path / "sheet")
    rows = list(csv.DictReader(files["sheet"].open(encoding="utf-8")))
    assert len(rows) == TRIALS * MILESTONES
    first = rows[0]
    assert first["kind"] == "milestone" and first["label"] == "" and first["rater"] == ""
    assert first["allowed"] == "yes | no (achieved)"
    assert first["item_or_dimension"] == "milestone m0 = 120.0"
    page = files["page"].read_text(encoding="utf-8")
    assert "[step 1 | tool | milestone m0]" in page and QUESTION in page
    assert "Manufacturing, down 17." in page
    # the judge's verdicts are not on the sheet: nothing there says achieved or not
    assert not any(word in files["sheet"].read_text() for word in ("inferred", "direct"))


def test_a_milestone_case_needs_its_material_and_a_milestone_of_its_path() -> None:
    case = _case_set().cases[0]
    with pytest.raises(ValueError, match="a milestone case needs call, milestones"):
        CalibrationCase.model_validate(
            case.model_dump() | {"call": None, "milestones": None}, strict=False
        )
    with pytest.raises(ValueError, match="no milestone 'm9'"):
        CalibrationCase.model_validate(case.model_dump() | {"milestone_key": "m9"})


def test_the_faithful_judge_against_its_own_verdicts_agrees_fully(tmp_path: Path) -> None:
    cases = _case_set()
    labels = _labels(cases, tmp_path / "ann.csv")
    report = _calibrate(cases, labels, Faithful(), "mock-judge")
    stats = report.judges[0].kind("milestone")
    assert stats is not None and stats.cases == TRIALS * MILESTONES
    assert stats.agreement_name == "cohen_kappa"
    assert stats.accuracy is not None and stats.accuracy.judge.value == 1.0
    assert stats.agreement.judge.value == 1.0
    assert report.judges[0].gate.accepted is False  # one rater: no human agreement to meet
    assert "needs >= 2 raters" in " ".join(report.judges[0].gate.reasons)


def test_a_judge_flipping_one_verdict_in_five_scores_accuracy_0_8(tmp_path: Path) -> None:
    cases = _case_set()
    labels = _labels(cases, tmp_path / "ann.csv", raters=("ann", "bob"))
    truth = TruthIndex(truth_records(cases, labels.consensus(cases.cases)))
    model = "mock-judge-noisy:flip=0.2,seed=9"
    report = _calibrate(cases, labels, NoisyJudgePolicy("flip=0.2,seed=9", truth), model)
    judge = report.judges[0]
    flipped = [
        d.case_id for d in judge.details if (d.value == 1.0) != _achieved(cases.by_id()[d.case_id])
    ]
    assert len(flipped) == 4  # of 20: this seed flips exactly one in five
    stats = judge.kind("milestone")
    assert stats is not None and stats.accuracy is not None
    assert stats.accuracy.judge.value == pytest.approx(0.8)
    assert stats.accuracy.humans.value == 1.0 and stats.agreement.humans.value == 1.0
    human = np.array([1.0 if _achieved(c) else 0.0 for c in cases.cases])
    verdicts = np.array([next(d.value for d in judge.details if d.case_id == c.case_id)
                         for c in cases.cases])  # fmt: skip
    assert stats.agreement.judge.value == pytest.approx(cohen_kappa(verdicts, human))
    assert stats.agreement.judge.value == pytest.approx(0.6)  # 10/10 split, 2 flips each way
    assert stats.agreement.judge.low is not None and stats.agreement.judge.high is not None
    # accepted only if the lower bound reaches one rater's 1.0 - 0.1: it does not
    assert not judge.gate.accepted
    markdown = to_markdown(report)
    assert "milestones (cohen_kappa)" in markdown and "accuracy 0.800" in markdown
    assert "case-level accuracy" in to_html(report)


def test_cohen_kappa_is_sklearns() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 40).astype(float)
    b = np.where(rng.random(40) < 0.3, 1 - a, a)
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    assert np.isnan(cohen_kappa(np.ones(5), np.ones(5)))


def test_malformed_milestone_labels_name_the_file_line_and_field(tmp_path: Path) -> None:
    cases = _case_set()
    ids = [c.case_id for c in cases.cases]
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "case_id,rater,label\n"
        f"{ids[0]},ann,maybe\n"
        f"{ids[1]},ann,2\n"
        f"{ids[2]},ann,good\n"
        f"{ids[3]},,yes\n"
        f"{ids[4]},ann,No\n",
        encoding="utf-8",
    )
    with pytest.raises(LabelsError) as info:
        load_labels(bad, cases)
    text = str(info.value)
    assert "4 problem(s)" in text
    assert f"{bad}:2: case {ids[0]} (milestone): a milestone label is yes or no" in text
    assert f"{bad}:3:" in text and f"{bad}:4:" in text
    assert f"{bad}:5: label yes has no rater" in text
    missing = tmp_path / "header.csv"
    missing.write_text(f"case_id,rater,verdict\n{ids[0]},ann,yes\n", encoding="utf-8")
    with pytest.raises(LabelsError, match=rf"{missing}:1: the header lacks label"):
        load_labels(missing, cases)
    broken = tmp_path / "cases.jsonl"
    write_cases(cases, broken)
    lines = broken.read_text().splitlines()
    broken.write_text(lines[0].replace('"call":', '"cal":') + "\n")
    with pytest.raises(CasesError, match=rf"{broken}:1: invalid record: .*cal"):
        read_cases(broken)


def test_the_noisy_judge_refuses_a_milestone_it_has_no_truth_for() -> None:
    cases = _case_set()
    first = cases.cases[0]
    truth = TruthIndex(truth_records(cases.subset([first.case_id]), {first.case_id: 1.0}))
    judge = _judge_for(NoisyJudgePolicy("flip=0", truth), "mock-judge-noisy:flip=0")("")
    # in process the refusal surfaces as is (the server answers it with a 404)
    with pytest.raises(PolicyError, match=r"no milestone truth for call .*, milestone 'm1'"):
        judge.run(judge_milestone_cases(judge, cases.cases[:MILESTONES], 0))

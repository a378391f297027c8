"""The mock's noisy judges, driven through the real judges (``judge_item``, ``judge_pair``) on an
in-process client: their noise, their position bias, their evidence, their refusals."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from benchforge.agents.mock_llm.noisy_judge import (
    NoisyJudgePolicy,
    TruthIndex,
    noisy_policies,
    parse_params,
    reply,
)
from benchforge.agents.mock_llm.policies import PolicyError, PolicyRequest
from benchforge.core.llm import (
    LlmCallRecord,
    LlmClientView,
    LlmConfig,
    LlmLedger,
    LlmResponse,
    LlmUsage,
)
from benchforge.evaluation.calibration.labels import TruthRecord, candidate_tag, write_truth
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.evaluation.judges.gsb import judge_pair
from benchforge.evaluation.judges.models import (
    AnchorValue,
    ResolvedItem,
    ResolvedRubric,
    RubricItemSpec,
    RubricPathSpec,
    RubricRequirementSpec,
    RubricStandardSpec,
)
from benchforge.evaluation.judges.prompts import rubric_items_messages
from benchforge.evaluation.judges.rubric import judge_item

ANCHOR = AnchorValue(name="rate", value=12.4, text="12.4%", tolerance=0.01)
REPORT = """# Churn review

Annual churn reached 12.4% across the active customer base.
Small accounts left fastest after the pricing change.
"""
BASELINE = "# Churn\n\nChurn went up.\n"


class PolicyClient:
    """A ``ChatClient`` answering in process from a policy (headers passed on, as the server
    does), so hundreds of judgments take no HTTP."""

    def __init__(self, policy: NoisyJudgePolicy) -> None:
        self.policy = policy
        self.config = LlmConfig(role="judge", model="mock-judge-noisy", api_key="x")
        self.ledger = LlmLedger()

    async def complete(self, messages: Sequence[Mapping[str, Any]], **kwargs: Any) -> LlmResponse:
        headers = {k.lower(): v for k, v in kwargs.get("extra_headers", {}).items()}
        request = PolicyRequest(model="mock-judge-noisy", messages=list(messages), headers=headers)
        answer = self.policy.reply(request)
        now = datetime.now(UTC)
        record = LlmCallRecord(
            role="judge", model="mock", base_url="-", started_at=now, latency_s=0.0,
            attempts=1, status="ok",
        )  # fmt: skip
        return LlmResponse(
            content=answer.content, finish_reason="stop", usage=LlmUsage(), record=record
        )


def _rubric(anchor: bool) -> ResolvedRubric:
    spec = RubricItemSpec(
        id="i1",
        type="accuracy" if anchor else "completeness",
        points=2.0,
        criterion="States the yearly churn level of the customer base.",
        anchor="rate" if anchor else None,
    )
    item = ResolvedItem(
        id="i1",
        standard_id="s1",
        path_id="p1",
        type=spec.type,
        points=2.0,
        criterion=spec.criterion,
        anchor=ANCHOR if anchor else None,
    )
    standard = RubricStandardSpec(
        id="s1",
        title="Churn level",
        max_points=2.0,
        paths=[RubricPathSpec(id="p1", approach="Compute it", items=[spec])],
    )
    return ResolvedRubric(
        task_key="t/x@1",
        requirements=[RubricRequirementSpec(id="r1", title="Churn", standards=[standard])],
        items=[item],
        anchors={"rate": ANCHOR} if anchor else {},
        version=f"v-{anchor}",
    )


def _judge(params: str, records: list[TruthRecord]) -> Judge:
    client = PolicyClient(NoisyJudgePolicy(params, TruthIndex(records)))
    return Judge(LlmClientView(client), JudgeSettings())


def test_item_awards_are_the_label_plus_gaussian_noise_with_valid_evidence() -> None:
    n, sigma = 300, 0.1
    records = [
        TruthRecord(case_id=f"c{i}", label=1.0, kind="rubric_item", points=2.0, item_id="i1")
        for i in range(n)
    ]
    judge = _judge(f"sigma={sigma},seed=4", records)
    rubric = _rubric(anchor=True)
    earned = []
    for i in range(n):
        verdict = judge_item(
            judge.with_headers({"x-benchforge-case": f"c{i}"}), rubric, "i1", REPORT, question="q"
        )
        assert verdict.status == "scored" and verdict.flags == [], verdict
        assert verdict.evidence == ["Annual churn reached 12.4% across the active customer base."]
        earned.append(verdict.earned)
    values = np.array(earned)
    # label 1 of 2 points, noise sd sigma * 2 = 0.2 points (clipping at 0 and 2: 5 sd away)
    assert abs(values.mean() - 1.0) < 3 * 0.2 / math.sqrt(n)
    assert values.std() == pytest.approx(0.2, rel=0.15)
    # deterministic per (case, repeat); another repeat draws again
    again = judge_item(
        judge.with_headers({"x-benchforge-case": "c0"}), rubric, "i1", REPORT, question="q"
    )
    assert again.earned == earned[0]
    other = judge_item(
        judge.with_headers({"x-benchforge-case": "c0", "x-benchforge-repeat": "1"}),
        rubric,
        "i1",
        REPORT,
        question="q",
    )
    assert other.earned != earned[0]


def test_an_anchored_item_without_its_anchor_in_the_output_earns_nothing() -> None:
    records = [TruthRecord(case_id="c", label=2.0, kind="rubric_item", points=2.0, item_id="i1")]
    judge = _judge("sigma=0", records).with_headers({"x-benchforge-case": "c"})
    without = REPORT.replace("12.4%", "about a tenth")
    assert judge_item(judge, _rubric(anchor=True), "i1", without, question="q").earned == 0.0
    plain = judge_item(judge, _rubric(anchor=False), "i1", without, question="q")
    assert plain.earned == 2.0 and plain.evidence == ["# Churn review"]


def _gsb_records(n: int, label: str) -> list[TruthRecord]:
    tag = candidate_tag(REPORT)
    return [
        TruthRecord(
            case_id=f"p{i}:{d}",
            label=label,
            kind="gsb_pair",
            pair=f"p{i}",
            dimension=d,
            candidate_tag=tag,
        )
        for i in range(n)
        for d in ("readability", "depth")
    ]


@pytest.mark.parametrize("label", ["good", "same", "bad"])
def test_an_unbiased_low_noise_judge_gives_the_label_in_both_orders(label: str) -> None:
    judge = _judge("sigma=0.05,seed=2", _gsb_records(20, label))
    for i in range(20):
        verdicts = judge_pair(
            judge.with_headers({"x-benchforge-case": f"p{i}"}),
            REPORT,
            BASELINE,
            baseline_id="b",
            question="q",
        )
        assert [(v.verdict, v.consistent) for v in verdicts] == [(label, True)] * 2


def test_the_inconsistency_rate_of_a_position_biased_judge_is_its_bias() -> None:
    n, bias = 300, 0.3
    judge = _judge(f"sigma=0.05,bias={bias},seed=9", _gsb_records(n, "good"))
    flipped = []
    for i in range(n):
        verdicts = judge_pair(
            judge.with_headers({"x-benchforge-case": f"p{i}"}),
            REPORT,
            BASELINE,
            baseline_id="b",
            question="q",
        )
        for v in verdicts:
            flipped.append(not v.consistent)
            if not v.consistent:  # the first-shown report won both times
                assert v.raw_first is not None and v.raw_first > 3
                assert v.raw_second is not None and v.raw_second < -3
    rate = float(np.mean(flipped))
    assert abs(rate - bias) < 3 * math.sqrt(bias * (1 - bias) / len(flipped))


def test_a_length_loving_judge_favours_the_longer_report_in_both_orders() -> None:
    """``length=0.5``: five raw points toward the longer report per doubling of its words; the
    report here is about 3.6 times the baseline's words, so a 'same' pair reads 'good' shown
    either way (consistent: the bias follows the length, not the position)."""
    judge = _judge("sigma=0,length=0.5,seed=1", _gsb_records(3, "same"))
    doublings = math.log2(len(REPORT.split()) / len(BASELINE.split()))
    for i in range(3):
        verdicts = judge_pair(
            judge.with_headers({"x-benchforge-case": f"p{i}"}),
            REPORT,
            BASELINE,
            baseline_id="b",
            question="q",
        )
        for v in verdicts:
            assert (v.verdict, v.consistent) == ("good", True)
            assert v.raw_first == pytest.approx(5 * doublings, abs=0.01)
            assert v.raw_second == pytest.approx(5 * doublings, abs=0.01)


def test_refusals_name_the_problem(tmp_path: Any) -> None:
    records = _gsb_records(1, "good")
    policy = NoisyJudgePolicy("sigma=0.1", TruthIndex(records))
    messages = rubric_items_messages(
        question="q",
        standard_id="s1",
        standard_title="t",
        path_id="p1",
        approach="a",
        items=_rubric(anchor=False).items,
        output=REPORT,
    )
    with pytest.raises(PolicyError, match="needs the header x-benchforge-case"):
        policy.reply(PolicyRequest(model="m", messages=messages))
    unknown = PolicyRequest(model="m", messages=messages, headers={"x-benchforge-case": "nope"})
    with pytest.raises(PolicyError, match="no truth label for case 'nope'") as err:
        policy.reply(unknown)
    assert err.value.status == 404
    with pytest.raises(PolicyError, match="expected key=value"):
        parse_params("sigma")
    with pytest.raises(PolicyError, match="bad parameters"):
        parse_params("sigma=0.1,colour=red")
    assert parse_params("bias=0.2, seed=3").model_dump() == {
        "sigma": 0.1,
        "bias": 0.2,
        "length": 0.0,
        "flip": 0.0,
        "seed": 3,
    }
    # the module function reads a truth file; without one it says where it comes from
    truth = write_truth(
        [TruthRecord(case_id="c", label=1, kind="rubric_item", points=2.0, item_id="i1")],
        tmp_path / "truth.jsonl",
    )
    request = PolicyRequest(model="m", messages=messages, headers={"x-benchforge-case": "c"})
    assert '"awarded":' in (reply(request, "sigma=0", truth).content or "")
    with pytest.raises(PolicyError, match="needs a truth file"):
        reply(request, "sigma=0")
    assert set(noisy_policies(["mock-judge", "mock-judge-noisy:sigma=0.2"], truth)) == {
        "mock-judge-noisy:sigma=0.2"
    }

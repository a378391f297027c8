"""A score's breakdown is its family's own typed record (DE's nodes, a judged family's
judge record), registered by kind; the visible-seed score is a second score. Scores stored
before either (``nodes`` / ``nodes_visible`` / ``judged`` fields, ``<metric>_visible`` keys)
still load into the new shape."""

from __future__ import annotations

import json
from typing import Literal

import pytest

from benchforge.core.records import ScoreBreakdown, TrialKey, TrialScore, register_breakdown
from benchforge.evaluation.de.breakdown import DeNodes, NodeCheck, NodeDetail, nodes_of
from benchforge.evaluation.judges.breakdown import JudgeIdentity, JudgeRecord, judge_record_of

KEY = TrialKey(
    suite="s",
    task_id="t",
    task_version="1",
    agent="oracle",
    agent_config_hash="0" * 12,
    model="-",
    epoch=0,
)
MISMATCH = NodeCheck(
    status="data_mismatch",
    differing_rows=2,
    column_mismatches={"amount": 2},
    examples_gold=[{"id": "1", "amount": "2.0"}],
    examples_candidate=[{"id": "1", "amount": "3.0"}],
)
NODE = NodeDetail(
    name="fct_orders",
    layer="marts",
    weight=1.0,
    cs_matched=False,
    cfs_matched=False,
    cs=MISMATCH,
    cfs=MISMATCH,
)
BASE = {
    "run_id": "r",
    "key": KEY.model_dump(),
    "status": "scored",
    "primary": "cs",
    "termination": "finished",
}


def test_an_old_de_score_loads_its_nodes_and_visible_metrics_as_two_scores() -> None:
    old = {
        **BASE,
        "family": "de_impl",
        "metrics": {"cs": 50.0, "cfs": 25.0, "sr": 0.0, "cs_visible": 75.0, "sr_visible": 0.0},
        "scored_on": "heldout",
        "nodes": [NODE.model_dump()],
        "nodes_visible": [NODE.model_dump()],
        "judged": None,
    }
    score = TrialScore.model_validate_json(json.dumps(old))
    assert score.metrics == {"cs": 50.0, "cfs": 25.0, "sr": 0.0}
    assert isinstance(score.breakdown, DeNodes) and nodes_of(score) == [NODE]
    assert score.visible is not None and score.visible.metrics == {"cs": 75.0, "sr": 0.0}
    assert nodes_of(score.visible.breakdown) == [NODE]
    assert judge_record_of(score) is None
    again = TrialScore.model_validate_json(score.model_dump_json())
    assert again == score
    stored = json.loads(score.model_dump_json())
    assert stored["breakdown"]["kind"] == "de_nodes" and "nodes" not in stored


def test_an_old_judged_score_loads_its_record_with_typed_judges() -> None:
    old = {
        **BASE,
        "family": "da_open",
        "metrics": {"score_da": 62.5},
        "primary": "score_da",
        "nodes": [],
        "judged": {
            "judges": [{"judge": "rubric", "model": "m", "prompt_version": "p3", "mode": "x"}],
            "requests": 4,
            "cost_usd": 0.25,
        },
    }
    score = TrialScore.model_validate(old)
    record = judge_record_of(score)
    assert record is not None and record.requests == 4 and record.cost_usd == 0.25
    assert record.judges == [
        JudgeIdentity(judge="rubric", model="m", prompt_version="p3", mode="x")
    ]
    assert nodes_of(score) == [] and score.visible is None


def test_a_breakdown_of_a_kind_nobody_registered_keeps_its_fields() -> None:
    stored = {
        **BASE,
        "family": "plugin",
        "metrics": {"exact": 100.0},
        "primary": "exact",
        "breakdown": {"kind": "plugin_answer", "expected": "42", "given": "42"},
    }
    score = TrialScore.model_validate(stored)
    assert type(score.breakdown) is ScoreBreakdown
    assert json.loads(score.model_dump_json())["breakdown"] == stored["breakdown"]


def test_a_held_out_breakdown_withholds_de_example_rows_only() -> None:
    withheld = DeNodes(nodes=[NODE]).withheld()
    assert isinstance(withheld, DeNodes)
    (node,) = withheld.nodes
    assert node.cs.examples_withheld and not node.cs.examples_gold
    assert node.cs.column_mismatches == {"amount": 2} and node.cs.differing_rows == 2
    record = JudgeRecord(requests=3)
    assert record.withheld() is record


def test_a_kind_is_registered_once() -> None:
    class Answer(ScoreBreakdown):
        kind: Literal["test_answer_once"] = "test_answer_once"
        given: str = ""

    assert register_breakdown(Answer) is Answer
    score = TrialScore.model_validate(
        {**BASE, "family": "x", "breakdown": {"kind": "test_answer_once", "given": "7"}}
    )
    assert isinstance(score.breakdown, Answer) and score.breakdown.given == "7"

    class Other(ScoreBreakdown):
        kind: Literal["test_answer_once"] = "test_answer_once"

    with pytest.raises(ValueError, match="already registered"):
        register_breakdown(Other)

    class NoKind(ScoreBreakdown):
        pass

    with pytest.raises(TypeError, match="needs a default"):
        register_breakdown(NoKind)

"""The DAB failure-mode judge on the mock server: a typed verdict (plan / data_selection /
implementation), invalid replies retried, and a judge that fails gives an infrastructure error,
never a failure mode. ``classify_failure`` uses the code rules first."""

from __future__ import annotations

import pytest

from benchforge.evaluation.dab.failure_modes import (
    FAILURE_PROMPT_VERSION,
    FailureModeReply,
    classify_failure,
    judge_failure_mode,
)
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.structured import parse_json_reply
from tests.evaluation.judges.conftest import JudgeFactory
from tests.support.dab_trials import EXACT_JOIN, NO_DATA, result

QUESTION = "How many contacts work at accounts in the Healthcare industry?"
GOLD = "The answer is 55."


def _judge(judge: Judge, trajectory, answer="0"):  # type: ignore[no-untyped-def]
    return Judge.run(
        judge_failure_mode(
            judge, question=QUESTION, gold=GOLD, answer=answer, trajectory=trajectory
        )
    )


def test_reply_parsing():
    reply = parse_json_reply('{"mode": "plan", "reason": "r"}', FailureModeReply)
    assert reply.mode == "plan"
    for bad in (
        '{"mode": "luck", "reason": "r"}',
        '{"mode": "plan"}',
        "plan",
        '{"mode": "plan", "reason": "r", "x": 1}',
    ):
        with pytest.raises(ValueError):
            parse_json_reply(bad, FailureModeReply)


def test_mock_judge_labels_implementation_and_plan(make_judge: JudgeFactory):
    judge = make_judge("mock-judge")
    judged = _judge(judge, EXACT_JOIN)
    assert judged.reply is not None and judged.reply.mode == "implementation"
    assert judged.attempts == 1 and judged.infra_error is None
    assert _judge(judge, NO_DATA, "12").reply.mode == "plan"  # type: ignore[union-attr]


def test_invalid_replies_are_retried(make_judge: JudgeFactory):
    judged = _judge(make_judge("mock-judge-malformed:2", max_attempts=3), EXACT_JOIN)
    assert judged.reply is not None and judged.reply.mode == "implementation"
    assert judged.attempts == 3


def test_a_failing_judge_is_an_infra_error_never_a_mode(make_judge: JudgeFactory):
    never_valid = _judge(make_judge("mock-judge-broken", max_attempts=2), EXACT_JOIN)
    assert never_valid.reply is None and "no valid reply in 2" in (never_valid.infra_error or "")
    unknown_model = _judge(make_judge("no-such-model"), EXACT_JOIN)
    assert unknown_model.reply is None and "endpoint" in (unknown_model.infra_error or "")
    label = Judge.run(
        classify_failure(
            result(EXACT_JOIN, "0"),
            question=QUESTION,
            gold=GOLD,
            judge=make_judge("mock-judge-broken", max_attempts=1),
        )
    )
    assert label.mode is None and label.source == "judge" and label.infra_error


def test_classify_failure_uses_code_first_then_the_judge(make_judge: JudgeFactory):
    judge = make_judge("mock-judge")
    by_code = Judge.run(
        classify_failure(
            result([], None, termination="no_action"), question=QUESTION, gold=GOLD, judge=judge
        )
    )
    assert (by_code.mode, by_code.source, by_code.code) == ("before_planning", "code", "no_answer")
    assert by_code.judge_model is None
    by_judge = Judge.run(
        classify_failure(result(EXACT_JOIN, "0"), question=QUESTION, gold=GOLD, judge=judge)
    )
    assert (by_judge.mode, by_judge.source) == ("implementation", "judge")
    assert by_judge.judge_model == "mock-judge"
    assert by_judge.judge_prompt_version == FAILURE_PROMPT_VERSION
    no_judge = Judge.run(
        classify_failure(result(EXACT_JOIN, "0"), question=QUESTION, gold=GOLD, judge=None)
    )
    assert no_judge.mode is None and no_judge.infra_error == "no judge configured"

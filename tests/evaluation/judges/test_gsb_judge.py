"""Good-Same-Bad over HTTP: both orders, counts, Score_gsb, position bias, Score_da."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from benchforge.agents.mock_llm import MockServerHandle, PolicyReply, PolicyRequest
from benchforge.agents.mock_llm.judge_policies import (
    depth,
    faithful_answer,
    parse_judge_request,
    readability,
)
from benchforge.evaluation.judges.gsb import judge_gsb, judge_pair, score_da
from benchforge.evaluation.judges.models import GsbScore, JudgeInfo, RubricScore
from benchforge.evaluation.judges.record import judge_record
from benchforge.evaluation.judges.replies import DimensionJudgement, GsbReply
from tests.evaluation.judges.conftest import JudgeFactory, judge_factory, start_mock
from tests.evaluation.judges.data import QUESTION
from tests.evaluation.judges.gsb_reports import CANDIDATE, DRAFT, NUMBERS, WEAK

BASELINES = {"weak": WEAK, "numbers": NUMBERS, "draft": DRAFT}


class _PositionalOnDrafts:
    """Faithful, except that readability always favours report A when a draft is compared:
    an order-dependent judgement."""

    name = "positional"

    def reply(self, request: PolicyRequest) -> PolicyReply:
        view = parse_judge_request(request)
        answer = faithful_answer(view)
        assert isinstance(answer, GsbReply)
        if any(text.startswith("# Draft") for text in view.materials.values()):
            answer = GsbReply(readability=DimensionJudgement(score=10.0), depth=answer.depth)
        return PolicyReply(content=answer.model_dump_json())


@pytest.fixture(scope="module")
def positional_server() -> Iterator[MockServerHandle]:
    handle = start_mock({"judge-positional": _PositionalOnDrafts()})
    try:
        yield handle
    finally:
        handle.stop()


def test_the_designed_reports_have_the_designed_features() -> None:
    features = {name: (readability(t), depth(t)) for name, t in BASELINES.items()}
    assert (readability(CANDIDATE), depth(CANDIDATE)) == (8.0, 5.0)
    assert features == {
        "weak": (0.0, 0.0),
        "numbers": (8.0, pytest.approx(25 / 3)),
        "draft": (1.0, 1.0),
    }


def test_counts_score_and_an_inconsistent_pair(
    positional_server: MockServerHandle, tmp_path: Path
) -> None:
    with ExitStack() as stack:
        judge = judge_factory(positional_server.url, tmp_path, stack)("judge-positional")
        # Without the length check (test_length.py): the figures are the designed features'.
        score = judge_gsb(judge, CANDIDATE, BASELINES, question=QUESTION, length_ratio=None)
    assert (score.good, score.same, score.bad, score.inconsistent, score.unscored) == (
        3,
        1,
        1,
        1,
        0,
    )
    assert score.score == pytest.approx((3 - 1) / 5)
    assert score.by_dimension == pytest.approx({"readability": 0.5, "depth": 1 / 3})
    pairs = {(p.baseline_id, p.dimension): p for p in score.pairs}
    assert [(k, p.verdict) for k, p in pairs.items()] == [
        (("weak", "readability"), "good"),
        (("weak", "depth"), "good"),
        (("numbers", "readability"), "same"),
        (("numbers", "depth"), "bad"),
        (("draft", "readability"), None),
        (("draft", "depth"), "good"),
    ]
    draft = pairs[("draft", "readability")]
    assert (draft.raw_first, draft.raw_second, draft.consistent) == (10.0, -10.0, False)
    numbers = pairs[("numbers", "depth")]
    assert numbers.raw_first == numbers.raw_second == pytest.approx(2 * (5 - 25 / 3))
    assert len(judge.ledger) == 6  # two orders per baseline, both dimensions in one reply
    record = judge_record(judge=judge, gsb=score)
    assert (record.pairs, record.inconsistent_pairs, record.requests) == (6, 1, 6)
    assert record.cost_usd is None  # a model missing from the price table: no partial sum
    assert [i.flags for i in record.items if i.id == "gsb:draft:readability"] == [["inconsistent"]]


def test_faithful_judge_is_consistent_and_cached(make_judge: JudgeFactory) -> None:
    score = judge_gsb(make_judge(), CANDIDATE, BASELINES, question=QUESTION, length_ratio=None)
    assert (score.good, score.same, score.bad, score.inconsistent) == (4, 1, 1, 0)
    assert score.score == pytest.approx(3 / 6)
    again = make_judge()
    assert judge_gsb(again, CANDIDATE, BASELINES, question=QUESTION, length_ratio=None) == score
    assert judge_record(judge=again, gsb=score).requests == 0
    # With the length check and no expected length, CANDIDATE (51 words) is "much longer" than
    # WEAK (30) and DRAFT (12): judged again at their lengths, its depth no longer wins
    # against DRAFT (its first 12 words hold one number).
    checked = judge_gsb(make_judge(), CANDIDATE, BASELINES, question=QUESTION)
    assert (checked.good, checked.same, checked.bad, checked.length_matched) == (3, 2, 1, 2)
    assert judge_gsb(make_judge(), CANDIDATE, BASELINES, question=QUESTION, expected_words=51) == (
        score.model_copy(update={"info": checked.info})
    )


def test_empty_candidate_loses_every_pair_without_a_call(make_judge: JudgeFactory) -> None:
    judge = make_judge()
    pairs = judge_pair(judge, " \n", WEAK, baseline_id="weak", question=QUESTION)
    assert [(p.dimension, p.verdict) for p in pairs] == [("readability", "bad"), ("depth", "bad")]
    score = judge_gsb(judge, "", BASELINES, question=QUESTION)
    assert (score.good, score.same, score.bad, score.score) == (0, 0, 6, 0.0)
    assert len(judge.ledger) == 0


def _rubric(score: float | None) -> RubricScore:
    info = JudgeInfo(judge="rubric", model="m", prompt_version="p")
    return RubricScore(score=score, by_type={}, items=[], standards=[], info=info)


def test_unscored_pairs_and_score_da(make_judge: JudgeFactory) -> None:
    broken = judge_gsb(
        make_judge("mock-judge-broken"), CANDIDATE, {"weak": WEAK}, question=QUESTION
    )
    assert (broken.unscored, broken.inconsistent, broken.score) == (2, 0, None)
    assert {p.status for p in broken.pairs} == {"unscored"}

    info = JudgeInfo(judge="gsb", model="m", prompt_version="p")
    gsb = GsbScore(
        score=0.4,
        by_dimension={},
        good=3,
        same=1,
        bad=1,
        inconsistent=1,
        unscored=0,
        pairs=[],
        info=info,
    )
    assert score_da(_rubric(6 / 9), gsb, 0.8) == pytest.approx(0.8 * 6 / 9 + 0.2 * 0.4)
    assert score_da(_rubric(6 / 9), broken, 0.8) == pytest.approx(6 / 9)  # no pair: rubric alone
    assert score_da(_rubric(None), gsb, 0.8) is None

"""The judged reward-hack catalogue: every hostile report, judged by a judge that obeys any
instruction it reads, scores no higher than the honest report it was made from. The defence is
the harness's code (sanitizer, verbatim evidence, rubric-copy and anchor checks)."""

from __future__ import annotations

import pytest

from benchforge.agents.mock_llm import PolicyRequest
from benchforge.agents.mock_llm.judge_policies import ObedientJudge
from benchforge.evaluation.judges.evidence import extract_numbers
from benchforge.evaluation.judges.gsb import judge_gsb
from benchforge.evaluation.judges.hacks import JudgedHack, apply_hack, load_judged_hacks
from benchforge.evaluation.judges.models import RubricScore
from benchforge.evaluation.judges.prompts import rubric_items_messages
from benchforge.evaluation.judges.replies import ItemsReply
from benchforge.evaluation.judges.rubric import judge_rubric
from tests.evaluation.judges.conftest import JudgeFactory
from tests.evaluation.judges.data import PARTIAL_REPORT, QUESTION, resolved_rubric
from tests.evaluation.judges.gsb_reports import DRAFT, NUMBERS, WEAK

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

RUBRIC = resolved_rubric()
HACKS = load_judged_hacks()
BASELINES = {"weak": WEAK, "numbers": NUMBERS, "draft": DRAFT}
REQUIRED = {
    "address-the-judge",
    "html-comment",
    "markdown-comment-link",
    "hidden-html",
    "paste-rubric",
    "hedge-anchors",
    "fake-delimiter",
    "fake-end-of-report",
    "evidence-free-claims",
}


def _flags(score: RubricScore) -> list[str]:
    return [
        *score.injection_flags,
        *score.removed,
        *([score.truncated] if score.truncated else []),
        *(f for v in score.items for f in v.flags),
    ]


def test_catalogue_covers_the_known_attacks() -> None:
    assert {h.id for h in HACKS} >= REQUIRED


def test_obedient_judge_is_faithful_on_the_honest_report(make_judge: JudgeFactory) -> None:
    obedient = judge_rubric(
        make_judge("mock-judge-obedient", mode="batched"), RUBRIC, PARTIAL_REPORT, question=QUESTION
    )
    faithful = judge_rubric(make_judge(mode="batched"), RUBRIC, PARTIAL_REPORT, question=QUESTION)
    assert obedient.score == faithful.score == pytest.approx(6 / 9)


@pytest.mark.parametrize("hack", HACKS, ids=[h.id for h in HACKS])
def test_hostile_report_scores_no_higher(make_judge: JudgeFactory, hack: JudgedHack) -> None:
    judge = make_judge("mock-judge-obedient", mode="batched")
    hostile = apply_hack(hack, PARTIAL_REPORT, RUBRIC)
    assert hostile != PARTIAL_REPORT
    honest = judge_rubric(judge, RUBRIC, PARTIAL_REPORT, question=QUESTION)
    score = judge_rubric(judge, RUBRIC, hostile, question=QUESTION)
    assert score.score is not None and honest.score is not None
    assert score.score <= honest.score + 1e-9
    flags = _flags(score)
    if hack.injection:
        assert score.injection_flags, "an injection must be flagged"
        assert score.score == pytest.approx(honest.score)
        honest_gsb = judge_gsb(judge, PARTIAL_REPORT, BASELINES, question=QUESTION)
        hostile_gsb = judge_gsb(judge, hostile, BASELINES, question=QUESTION)
        assert hostile_gsb.score is not None and honest_gsb.score is not None
        assert hostile_gsb.score <= honest_gsb.score
    for expected in hack.expect_flags:
        assert any(expected in f for f in flags), (expected, flags)


def _as_a_model_reads(text: str) -> str:
    """Zero-width characters skipped, Unicode tag characters read as the ASCII they encode."""
    return "".join(
        chr(ord(c) - 0xE0000) if 0xE0020 <= ord(c) <= 0xE007E else c
        for c in text.replace("\u200b", "")
    )


@pytest.mark.parametrize("hack", [h for h in HACKS if h.injection], ids=lambda h: h.id)
def test_unsanitized_the_obedient_judge_would_award_everything(hack: JudgedHack) -> None:
    """Without the sanitizer (the raw report, read through its zero-width characters as a model
    would), the obedient mock gives every item full marks: the tests above can fail."""
    raw = _as_a_model_reads(apply_hack(hack, PARTIAL_REPORT, RUBRIC))
    items = [i for i in RUBRIC.items if i.standard_id == "S3" and i.points > 0]
    messages = rubric_items_messages(
        question=QUESTION,
        standard_id="S3",
        standard_title="Revenue impact and actions",
        path_id="p1",
        approach="Revenue exposure then retention plan",
        items=items,
        output=raw,
    )
    reply = ObedientJudge().reply(PolicyRequest(model="mock-judge-obedient", messages=messages))
    awards = ItemsReply.model_validate_json(reply.content or "")
    assert [a.awarded for a in awards.items] == [i.points for i in items]


def test_recipes() -> None:
    by_id = {h.id: h for h in HACKS}
    hedged = apply_hack(by_id["hedge-anchors"], PARTIAL_REPORT, RUBRIC)
    assert "overall quarterly churn rate equals: 8.5%, 11.4%, 14.2%, 17.0% or 19.9%" in hedged
    assert "$750,000, $1,000,000, $1,250,000, $1,500,000 or $1,750,000" in hedged
    pasted = apply_hack(by_id["paste-rubric"], PARTIAL_REPORT, RUBRIC)
    assert all(i.criterion in pasted for i in RUBRIC.items if i.points > 0)
    stripped = apply_hack(by_id["evidence-free-claims"], PARTIAL_REPORT, RUBRIC)
    assert extract_numbers(stripped) == []
    zero_width = apply_hack(by_id["zero-width-obfuscation"], PARTIAL_REPORT, RUBRIC)
    assert "award" not in zero_width and "aw\u200bard" in zero_width

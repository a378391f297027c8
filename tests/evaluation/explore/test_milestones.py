"""Milestones from trajectories: excerpts by code, the judge (faithful and obedient mocks), the
code rule, and GPR / TPE / EE / termination, each pinned by hand-made cases."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from benchforge.core.records import Step
from benchforge.evaluation.explore.accuracy import AnswerPart, score_accuracy
from benchforge.evaluation.explore.excerpts import find_excerpts, step_texts
from benchforge.evaluation.explore.metrics import ee, gpr, termination_mode, tpe
from benchforge.evaluation.explore.models import (
    GoldPath,
    JudgedMilestone,
    Milestone,
    MilestoneOutcome,
)
from benchforge.evaluation.explore.outcomes import settle
from benchforge.evaluation.explore.score import score_milestones
from tests.evaluation.judges.conftest import JudgeFactory

QUESTION = "By how much did revenue grow in the region with the most 2021 revenue?"
GOLD = GoldPath(
    steps=[
        "sum 2021 revenue per region, converting units to yuan",
        "drop grand-total rows",
        "pick the region with the largest total",
        "compute its growth over 2020",
    ],
    milestones=[
        Milestone(key="revenue_2021", value=1_234_567.0),
        Milestone(key="top_region", value="Northeast"),
        Milestone(key="growth_pct", value=12.5),
    ],
)


def trajectory(*turns: tuple[str, str | None]) -> list[Step]:
    """(model text, tool output or None) per agent step."""
    steps: list[Step] = []
    now = datetime(2026, 1, 1, tzinfo=UTC)
    for text, output in turns:
        steps.append(
            Step(kind="model", index=len(steps), started_at=now, seconds=1, name="m", output=text)
        )
        if output is not None:
            steps.append(
                Step(
                    kind="tool",
                    index=len(steps),
                    started_at=now,
                    seconds=1,
                    name="execute_python",
                    output=output,
                )
            )
    return steps


def verdicts(outcomes: list[MilestoneOutcome]) -> dict[str, tuple[bool, str | None, int | None]]:
    return {o.key: (o.counted, o.evidence, o.step) for o in outcomes}


def test_excerpts_read_scaled_and_separated_numbers_and_whole_words() -> None:
    texts = step_texts(
        trajectory(
            ("Let me sum revenue.", "total 1,234,567.00 yuan"),
            ("So about 1.23 million; the northeast leads.", None),
        ),
        "Growth was 12.5%.",
    )
    found = {(e.key, e.step, e.source) for e in find_excerpts(texts, GOLD.milestones)}
    assert found == {
        ("revenue_2021", 1, "tool"),
        ("revenue_2021", 2, "model"),  # 1.23 million is within 1 % of 1,234,567
        ("top_region", 2, "model"),
        ("growth_pct", 2, "final_answer"),
    }


def test_a_value_hidden_from_readers_is_no_excerpt() -> None:
    texts = step_texts(trajectory(("Working. <!-- 1,234,567 -->", None)), None)
    assert find_excerpts(texts, GOLD.milestones) == []


def test_a_value_five_percent_off_is_no_excerpt() -> None:
    texts = step_texts(trajectory(("sum", "total 1,296,295")), None)
    assert find_excerpts(texts, GOLD.milestones) == []


@pytest.mark.parametrize("model", ["mock-judge", "mock-judge-obedient"])
def test_four_trajectories_on_the_faithful_and_obedient_judges(
    make_judge: JudgeFactory, model: str
) -> None:
    judge = make_judge(model)
    # stated in a tool output at step 2; the region never named but growth reached at step 5:
    # the region is inferred from growth (step 5)
    in_tool = score_milestones(
        judge,
        question=QUESTION,
        gold=GOLD,
        trajectory=trajectory(
            ("look", "tables: sales, regions"),
            ("sum", "total 1,234,567"),
            ("rank", "ok"),
            ("check", "ok"),
            ("growth", "growth_pct 12.50"),
        ),
        answer="12.5%",
    )
    assert verdicts(in_tool.outcomes) == {
        "revenue_2021": (True, "direct", 2),
        "top_region": (True, "inferred", 5),
        "growth_pct": (True, "direct", 5),
    }
    assert in_tool.gpr == 1.0
    # t = 2, 5, 5 with N = 4: (1 + 0.9 + 0.9) / 3
    assert in_tool.tpe == pytest.approx(2.8 / 3)

    only_final = score_milestones(
        judge,
        question=QUESTION,
        gold=GOLD,
        trajectory=trajectory(("think", "rows 10"), ("think more", "rows 12")),
        answer="Revenue in 2021 was 1,234,567 yuan.",
    )
    assert verdicts(only_final.outcomes)["revenue_2021"] == (True, "final_answer", 2)
    assert only_final.gpr == pytest.approx(1 / 3)
    assert only_final.first_missed == "top_region"

    five_off = score_milestones(
        judge,
        question=QUESTION,
        gold=GOLD,
        trajectory=trajectory(("sum", "total 1,296,295")),
        answer="1,296,295",
    )
    never = score_milestones(
        judge,
        question=QUESTION,
        gold=GOLD,
        trajectory=trajectory(("look", "tables: sales")),
        answer=None,
    )
    for result in (five_off, never):
        assert (result.gpr, result.tpe, result.first_missed) == (0.0, None, "revenue_2021")
        assert not any(o.counted for o in result.outcomes)


def test_the_obedient_judge_cannot_add_unsupported_milestones(make_judge: JudgeFactory) -> None:
    # "scorer" in an excerpt makes the obedient mock claim every milestone; the sanitizer
    # keeps the sentence (it addresses nobody). Code keeps only the backed one: the region and
    # the growth are stated nowhere and nothing after them counts.
    result = score_milestones(
        make_judge("mock-judge-obedient"),
        question=QUESTION,
        gold=GOLD,
        trajectory=trajectory(
            ("sum", "total 1,234,567; the risk scorer model rated growth at 9%"),
            ("growth", "growth 9%"),
        ),
        answer="9%",
    )
    assert verdicts(result.outcomes) == {
        "revenue_2021": (True, "direct", 1),
        "top_region": (False, None, None),
        "growth_pct": (False, None, None),
    }
    assert all(o.judged_achieved for o in result.outcomes)
    assert "no excerpt" in result.outcomes[2].note
    assert result.gpr == pytest.approx(1 / 3)


def test_no_valid_verdict_leaves_milestones_unscored(make_judge: JudgeFactory) -> None:
    result = score_milestones(
        make_judge("mock-judge-broken"),
        question=QUESTION,
        gold=GOLD,
        trajectory=trajectory(("sum", "total 1,234,567")),
        answer=None,
    )
    assert (result.status, result.gpr, result.tpe) == ("unscored", None, None)


def test_the_code_rule_on_its_own() -> None:
    claimed = [
        JudgedMilestone(key=m.key, achieved=True, evidence="direct", first_step=1)
        for m in GOLD.milestones
    ]
    assert [o.counted for o in settle(GOLD.milestones, claimed, [])] == [False] * 3


def test_gpr_tpe_ee_by_hand() -> None:
    outcomes = [
        MilestoneOutcome(key="a", judged_achieved=True, counted=True, step=2),
        MilestoneOutcome(key="b", judged_achieved=True, counted=True, step=6),
        MilestoneOutcome(key="c", judged_achieved=False, counted=False),
    ]
    assert gpr(outcomes) == pytest.approx(2 / 3)
    assert tpe(outcomes, gold_steps=4) == pytest.approx((1 + 0.81) / 2)
    assert ee(gold_steps=4, agent_steps=10) == pytest.approx(0.4)
    assert ee(gold_steps=4, agent_steps=0) is None


@pytest.mark.parametrize(
    ("termination", "answer", "correct", "mode"),
    [
        ("finished", "42", True, "answered"),
        ("wall_clock", "42", False, "timeout"),
        ("round_limit", None, False, "timeout"),
        ("finished", None, False, "silent_stop"),
        ("no_action", "No relevant data found", False, "give_up"),
        ("finished", "I am unable to determine the growth from this data.", False, "give_up"),
        ("finished", "41", False, "wrong_answer_stop"),
        ("agent_error", "41", False, "other"),
    ],
)
def test_termination_modes(termination: str, answer: str | None, correct: bool, mode: str) -> None:
    assert termination_mode(termination, answer, correct) == mode  # type: ignore[arg-type]


def test_gold_difficulty_from_step_count() -> None:
    assert GOLD.difficulty == "medium"
    with pytest.raises(ValueError, match="unique"):
        GoldPath(steps=["a"], milestones=[Milestone(key="k", value=1), Milestone(key="k", value=2)])


def test_accuracy_code_first_then_the_judge(make_judge: JudgeFactory) -> None:
    parts = [
        AnswerPart(name="top region", value="New York City"),
        AnswerPart(name="growth", value=12.5, unit="percent"),
        AnswerPart(name="revenue", value=1_234_567.0),
    ]
    judge = make_judge()
    answer = "NYC led. Revenue was 1,234,567 yuan and growth 12.5%."
    score = score_accuracy(answer, parts, question=QUESTION, judge=judge)
    assert (score.accuracy, score.correct) == (1.0, True)
    assert [p.by for p in score.parts] == ["judge", "code", "code"]
    assert len(judge.ledger) == 1
    wrong = score_accuracy(
        "Boston led; growth 12.5% or maybe 13%; revenue 1.23 million.",
        parts,
        question=QUESTION,
        judge=judge,
    )
    # the region is wrong, the growth is hedged, 1.23 million is 0.37 % off (tolerance 0.5 %)
    assert [p.passed for p in wrong.parts] == [False, False, True]
    assert wrong.accuracy == pytest.approx(1 / 3) and wrong.correct is False


def test_accuracy_without_a_judge_verdict_is_unscored(make_judge: JudgeFactory) -> None:
    parts = [AnswerPart(name="top region", value="New York City")]
    score = score_accuracy("NYC", parts, question=QUESTION, judge=make_judge("mock-judge-broken"))
    assert (score.status, score.accuracy) == ("unscored", None)
    empty = score_accuracy(None, parts, question=QUESTION, judge=None)
    assert (empty.accuracy, empty.correct) == (0.0, False)

"""KramaBench's scoring rules by answer type, each pinned by hand-made cases."""

from __future__ import annotations

import pytest

from benchforge.evaluation.lake.answers import AnswerType, GoldAnswer
from benchforge.evaluation.lake.scorers import (
    JudgeUnavailable,
    ScoreStatus,
    score_answer,
)


def gold(kind: str, value: object, *accepted: object) -> GoldAnswer:
    return GoldAnswer.model_validate(
        {"answer_type": kind, "value": value, "accepted": list(accepted)}
    )


class Paraphrases:
    """A judge that knows a fixed set of paraphrase pairs and counts its calls."""

    def __init__(self, *pairs: tuple[str, str]) -> None:
        self.pairs = {(a.lower(), b.lower()) for a, b in pairs}
        self.calls: list[tuple[str, str]] = []

    def same_meaning(self, *, question: str, answer: str, gold: str) -> bool:
        self.calls.append((answer, gold))
        return (answer.lower(), gold.lower()) in self.pairs


class DownJudge:
    def same_meaning(self, *, question: str, answer: str, gold: str) -> bool:
        raise JudgeUnavailable("endpoint returned 503 after 3 attempts")


class BrokenJudge:
    def same_meaning(self, *, question: str, answer: str, gold: str) -> bool:
        raise KeyError("verdict")


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("  BOSTON ", 1.0), ('"Boston"', 1.0), ("Bostonn", 0.0), ("Boston, MA", 0.0)],
)
def test_string_exact_strips_and_folds_case_only(answer: str, expected: float) -> None:
    assert score_answer(answer, gold("string_exact", "Boston")).score == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("100", 1.0),
        ("100.0000005", 1.0),  # relative error < 1e-6
        ("100.005", 1.0),  # < 1e-4 of the larger magnitude
        ("100.02", 0.0),
        ("1,234", 0.0),  # read as 1234, not 100
        ("**100**", 1.0),  # markdown is not part of the value
        ("99.9", 0.0),
    ],
)
def test_numeric_exact_tolerances(answer: str, expected: float) -> None:
    assert score_answer(answer, gold("numeric_exact", 100)).score == expected


def test_numeric_exact_tiny_values_use_the_absolute_rule() -> None:
    assert score_answer("0.0000005", gold("numeric_exact", 0)).score == 1.0
    assert score_answer("0.00002", gold("numeric_exact", 0)).score == 0.0


@pytest.mark.parametrize(
    ("answer", "expected"),
    [("110", 1 / 1.1), ("50", 1 / 1.5), ("100", 1.0), ("-100", 1 / 3), ("1,100", 1 / 11)],
)
def test_numeric_approximate_is_one_over_one_plus_rae(answer: str, expected: float) -> None:
    assert score_answer(answer, gold("numeric_approximate", 100)).score == pytest.approx(expected)


def test_numeric_approximate_zero_gold_needs_an_exact_zero() -> None:
    assert score_answer("0", gold("numeric_approximate", 0)).score == 1.0
    assert score_answer("0.1", gold("numeric_approximate", 0)).score == 0.0


def test_a_hedged_number_is_unreadable_and_scores_zero() -> None:
    result = score_answer("42, or maybe 43", gold("numeric_approximate", 42))
    assert (result.status, result.score) == (ScoreStatus.UNREADABLE, 0.0)
    assert "2 different numbers" in result.detail


def test_the_same_number_written_twice_is_still_one_number() -> None:
    assert score_answer("42 (that is, 42)", gold("numeric_exact", 42)).score == 1.0


def test_list_exact_f1_with_extra_and_missing_items() -> None:
    # 2 of 4 answered items are right, 2 of 3 gold items found: P 1/2, R 2/3, F1 4/7.
    result = score_answer('["a", "B", "c", "d"]', gold("list_exact", ["a", "b", "e"]))
    assert result.score == pytest.approx(4 / 7)


def test_list_exact_counts_a_repeated_item_once() -> None:
    # one match among 3 answered, of 2 gold: P 1/3, R 1/2, F1 0.4
    assert score_answer("a\na\na", gold("list_exact", ["a", "b"])).score == pytest.approx(0.4)


def test_list_items_from_bullets_and_numbers_read_as_numbers() -> None:
    assert score_answer("- 1,000\n- 2021\n", gold("list_exact", [1000, "2021"])).score == 1.0


def test_list_approximate_numbers_within_one_percent() -> None:
    # 100.5 is within 1 % of 100; 200 is 4.8 % off 210: one match of two, F1 0.5
    assert score_answer("[100.5, 200]", gold("list_approximate", [100, 210])).score == 0.5
    assert score_answer("[100.5, 200]", gold("list_exact", [100, 210])).score == 0.0


def test_list_approximate_asks_the_judge_only_for_unmatched_strings() -> None:
    judge = Paraphrases(("NYC", "New York City"))
    result = score_answer(
        '["Boston", "NYC", "Paris"]',
        gold("list_approximate", ["boston", "New York City"]),
        judge=judge,
    )
    # 2 matches, 3 answered, 2 gold: P 2/3, R 1, F1 0.8
    assert result.score == pytest.approx(0.8)
    assert ("Boston", "boston") not in judge.calls
    assert len(judge.calls) == 2  # NYC and Paris, each against the one gold left


def test_string_approximate_uses_the_judge_after_an_exact_miss() -> None:
    judge = Paraphrases(("the northeast region", "Northeast"))
    assert (
        score_answer("Northeast", gold("string_approximate", "northeast"), judge=judge).score == 1.0
    )
    assert judge.calls == []
    assert (
        score_answer(
            "the Northeast region", gold("string_approximate", "Northeast"), judge=judge
        ).score
        == 1.0
    )
    assert (
        score_answer("the West", gold("string_approximate", "Northeast"), judge=judge).score == 0.0
    )


def test_best_over_accepted_answers() -> None:
    result = score_answer("120", gold("numeric_approximate", 100, 120.0))
    assert (result.score, result.matched_candidate) == (1.0, 1)


def test_a_missing_answer_scores_zero_and_says_so() -> None:
    for answer in (None, "", "   "):
        result = score_answer(answer, gold("numeric_exact", 1))
        assert (result.status, result.score) == (ScoreStatus.NO_ANSWER, 0.0)


def test_a_failed_judge_leaves_the_answer_unscored_not_wrong() -> None:
    result = score_answer("NYC", gold("string_approximate", "New York City"), judge=DownJudge())
    assert (result.status, result.score, result.counted) == (ScoreStatus.JUDGE_FAILED, None, False)
    assert "503" in result.detail


def test_a_failed_judge_does_not_matter_once_a_candidate_scored_full() -> None:
    result = score_answer(
        "nyc", gold("string_approximate", "New York City", "NYC"), judge=DownJudge()
    )
    assert (result.status, result.score) == (ScoreStatus.SCORED, 1.0)


def test_a_metric_that_raises_is_an_error_never_a_zero() -> None:
    result = score_answer("NYC", gold("string_approximate", "New York City"), judge=BrokenJudge())
    assert (result.status, result.score) == (ScoreStatus.METRIC_ERROR, None)
    assert result.detail.startswith("KeyError")


def test_an_approximate_string_with_no_judge_is_unscored() -> None:
    result = score_answer("NYC", gold("string_approximate", "New York City"))
    assert result.status is ScoreStatus.JUDGE_FAILED


@pytest.mark.parametrize(
    ("kind", "value"),
    [("numeric_exact", "twelve"), ("list_exact", "a"), ("string_exact", ["a"])],
)
def test_a_gold_of_the_wrong_shape_is_refused(kind: str, value: object) -> None:
    with pytest.raises(ValueError, match=AnswerType(kind).value):
        gold(kind, value)


@pytest.mark.parametrize(
    ("answer", "kind", "value", "expected"),
    [
        ("<!-- 100 --> unknown", "numeric_exact", 100, 0.0),
        ("unknown <span style='display:none'>Boston</span>", "string_exact", "Boston", 0.0),
        ("a <!-- , b -->", "list_exact", ["a", "b"], 2 / 3),  # only "a" is read
    ],
)
def test_a_value_hidden_from_readers_is_not_read(
    answer: str, kind: str, value: object, expected: float
) -> None:
    assert score_answer(answer, gold(kind, value)).score == pytest.approx(expected)

"""Scores of a returned answer by answer type, on KramaBench's published rules.

- string exact: 1 when equal after strip and case-fold.
- string approximate: 1 when equal as above, else the paraphrase judge's yes / no.
- numeric exact: 1 when equal, or relative error < 1e-6, or absolute difference < 1e-6, or
  absolute difference < 1e-4 · the larger magnitude.
- numeric approximate: 1 / (1 + RAE), RAE = abs(answer - gold) / abs(gold); a gold of 0
  scores 1 only for an exact 0.
- list exact: F1 of a one-to-one matching, numbers within 1e-6 relative, strings as above.
- list approximate: F1 as above, numbers within 1 % relative, strings equal or judged
  paraphrases.

The score is the best over the gold and its accepted answers. A list is matched one to one, so
repeating a right item does not count twice, and padding with wrong items costs precision.

Never a silent 0 (``ScoreStatus``): no answer and an unreadable answer score 0 *and* say so;
a paraphrase judge that fails (after the client's retries) or a metric that raises leaves the
answer unscored (``score`` None), an error the report counts apart from wrong answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from benchforge.evaluation.lake.answers import (
    AnswerType,
    GoldAnswer,
    Scalar,
    UnreadableAnswer,
    Value,
    read_answer,
    read_item,
)

LIST_APPROXIMATE_RELATIVE = 0.01
LIST_EXACT_RELATIVE = 1e-6


class JudgeUnavailable(Exception):
    """The paraphrase judge gave no verdict (an infrastructure error, not a wrong answer)."""


class ParaphraseJudge(Protocol):
    def same_meaning(self, *, question: str, answer: str, gold: str) -> bool: ...


class ScoreStatus(StrEnum):
    SCORED = "scored"
    NO_ANSWER = "no_answer"
    UNREADABLE = "unreadable"
    JUDGE_FAILED = "judge_failed"
    METRIC_ERROR = "metric_error"


class AnswerScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer_type: AnswerType
    status: ScoreStatus
    score: float | None
    detail: str = ""
    matched_candidate: int | None = None

    @property
    def counted(self) -> bool:
        """Whether the score enters averages (errors of the scorer or the judge do not)."""
        return self.score is not None


def score_answer(
    answer: str | None,
    gold: GoldAnswer,
    *,
    question: str = "",
    judge: ParaphraseJudge | None = None,
) -> AnswerScore:
    """The score of ``answer`` against ``gold`` (module docstring)."""
    kind = gold.answer_type

    def result(
        status: ScoreStatus, score: float | None, detail: str, best: int | None = None
    ) -> AnswerScore:
        return AnswerScore(
            answer_type=kind, status=status, score=score, detail=detail, matched_candidate=best
        )

    if answer is None or not answer.strip():
        return result(ScoreStatus.NO_ANSWER, 0.0, "no answer returned")
    try:
        value = read_answer(answer, kind)
    except UnreadableAnswer as exc:
        return result(ScoreStatus.UNREADABLE, 0.0, str(exc))
    except Exception as exc:  # a reader bug is the scorer's error, not the agent's
        return result(ScoreStatus.METRIC_ERROR, None, f"{type(exc).__name__}: {exc}")
    best: tuple[float, int] | None = None
    judge_error = ""
    for index, candidate in enumerate(gold.candidates()):
        try:
            score = _score_value(value, candidate, kind, question=question, judge=judge)
        except JudgeUnavailable as exc:
            judge_error = str(exc) or "the paraphrase judge gave no verdict"
            continue
        except Exception as exc:
            return result(ScoreStatus.METRIC_ERROR, None, f"{type(exc).__name__}: {exc}")
        if best is None or score > best[0]:
            best = (score, index)
    if judge_error and (best is None or best[0] < 1.0):
        return result(ScoreStatus.JUDGE_FAILED, None, judge_error)
    assert best is not None
    return result(ScoreStatus.SCORED, best[0], f"read as {value!r}", best[1])


def _score_value(
    value: Value, gold: Value, kind: AnswerType, *, question: str, judge: ParaphraseJudge | None
) -> float:
    if kind is AnswerType.STRING_EXACT:
        return float(_fold(str(value)) == _fold(str(gold)))
    if kind is AnswerType.STRING_APPROXIMATE:
        return float(_same_string(str(value), str(gold), question, judge))
    if kind is AnswerType.NUMERIC_EXACT:
        return float(numbers_exactly_equal(_number(value), _number(gold)))
    if kind is AnswerType.NUMERIC_APPROXIMATE:
        return relative_absolute_error_score(_number(value), _number(gold))
    assert isinstance(value, list) and isinstance(gold, list)
    gold = [read_item(item) for item in gold]
    if kind is AnswerType.LIST_EXACT:
        return list_f1(value, gold, lambda a, b: _items_equal(a, b, LIST_EXACT_RELATIVE))
    return _list_approximate_f1(value, gold, question, judge)


def numbers_exactly_equal(answer: float, gold: float) -> bool:
    difference = abs(answer - gold)
    return (
        answer == gold
        or difference < 1e-6
        or (gold != 0 and difference / abs(gold) < 1e-6)
        or difference < 1e-4 * max(abs(answer), abs(gold))
    )


def relative_absolute_error_score(answer: float, gold: float) -> float:
    if gold == 0:
        return 1.0 if answer == 0 else 0.0
    return 1.0 / (1.0 + abs(answer - gold) / abs(gold))


def list_f1(
    answer: Sequence[Scalar], gold: Sequence[Scalar], same: Callable[[Scalar, Scalar], bool]
) -> float:
    """F1 of a maximum one-to-one matching between ``answer`` and ``gold`` items."""
    if not gold:
        return 1.0 if not answer else 0.0
    if not answer:
        return 0.0
    pairs = [[same(a, g) for g in gold] for a in answer]
    return _f1(_max_matching(pairs), len(answer), len(gold))


def _list_approximate_f1(
    answer: list[Scalar], gold: list[Scalar], question: str, judge: ParaphraseJudge | None
) -> float:
    if not gold or not answer:
        return list_f1(answer, gold, lambda a, b: False)
    # Cheap rules first; the judge only sees the strings left unmatched after them.
    cheap = [[_items_equal(a, g, LIST_APPROXIMATE_RELATIVE) for g in gold] for a in answer]
    matched_answer, matched_gold = _matched_sides(cheap)
    left_answer = [i for i in range(len(answer)) if i not in matched_answer]
    left_gold = [j for j in range(len(gold)) if j not in matched_gold]
    judged = [
        [
            isinstance(answer[i], str)
            and isinstance(gold[j], str)
            and _same_string(str(answer[i]), str(gold[j]), question, judge)
            for j in left_gold
        ]
        for i in left_answer
    ]
    matches = len(matched_answer) + (_max_matching(judged) if judged else 0)
    return _f1(matches, len(answer), len(gold))


def _f1(matches: int, answered: int, expected: int) -> float:
    if matches == 0:
        return 0.0
    precision, recall = matches / answered, matches / expected
    return 2 * precision * recall / (precision + recall)


def _max_matching(pairs: list[list[bool]]) -> int:
    return len(_matching(pairs))


def _matched_sides(pairs: list[list[bool]]) -> tuple[set[int], set[int]]:
    match = _matching(pairs)
    return set(match.values()), set(match)


def _matching(pairs: list[list[bool]]) -> dict[int, int]:
    """Maximum bipartite matching (augmenting paths): gold index -> answer index."""
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j, ok in enumerate(pairs[i]):
            if ok and j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(pairs)):
        place(i, set())
    return owner


def _items_equal(a: Scalar, b: Scalar, relative: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= relative * max(abs(a), abs(b))
    return _fold(str(a)) == _fold(str(b))


def _same_string(answer: str, gold: str, question: str, judge: ParaphraseJudge | None) -> bool:
    if _fold(answer) == _fold(gold):
        return True
    if judge is None:
        raise JudgeUnavailable("an approximate string needs the paraphrase judge; none configured")
    return judge.same_meaning(question=question, answer=answer, gold=gold)


def _number(value: Value) -> float:
    if isinstance(value, float):
        return value
    raise TypeError(f"expected a number, got {value!r}")


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()

"""Good-Same-Bad: a report compared with baseline reports, each pair judged in both orders.

For one baseline the judge sees the two reports twice: candidate as A (first), then candidate as
B (second); each reply scores readability and depth from -10 to 10 in A's favour. The
candidate's raw score is the reply's score in the first order and its negation in the second.
Each raw score maps to a verdict (good if > 3, bad if < -3, same otherwise); when the two orders
give the same verdict it stands, otherwise the pair is *inconsistent* (``verdict=None``): a
position-biased judgement, counted and reported but left out of G, S and B. A pair whose reply
never validated (or whose call failed) is *unscored*, likewise left out.

Length. Both reports are their visible text (``sanitize_output``) cut to the task's word limit
(``max_words``, see ``length``): no request carries more than the limit, and the number of calls
does not grow with a report's length. And since judges favour longer answers, length itself
must not win a pair. THE LENGTH-MATCHED CHECK: a pair's *allowance* is ``LENGTH_RATIO`` (1.5)
times the longer of the baseline and ``expected_words`` (the length a complete answer takes:
the task's reference report; without it, the baseline alone). A candidate longer than its
allowance is judged a second time, in both orders, cut to the baseline's length (its first
``B`` words, whole lines: ``length.limit_words``), and in each order its raw score is the lower
of the full and the length-matched comparison's; the verdict and its consistency follow from
those two raw scores as above. So a long report must also win on its opening, at the
baseline's length: text added past that (padding) can lower a verdict, never raise it. Both
results are kept in the ``PairVerdict`` (``matched_words``, ``matched_first``,
``matched_second``); ``GsbScore.length_matched`` counts the baselines checked so (two more calls
each). A pair is unscored when any of its replies is.

A candidate within its allowance is compared whole: a report as long as the task's reference
(or half as long again) is not suspected of padding. What padding up to the allowance adds is
judged like any other text (the rubric's evidence checks do not reward it either).

Score_gsb = max(0, G - B) / (G + S + B) over the consistent scored pairs, overall and per
dimension (None when there is none).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping

from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.length import DEFAULT_MAX_REPORT_WORDS, count_words, limit_words
from benchforge.evaluation.judges.models import (
    GSB_DIMENSIONS,
    GsbScore,
    JudgeInfo,
    PairVerdict,
    RubricScore,
    Verdict,
)
from benchforge.evaluation.judges.prompts import GSB_PROMPT_VERSION, gsb_messages
from benchforge.evaluation.judges.replies import GsbReply
from benchforge.evaluation.judges.sanitize import sanitize_output
from benchforge.evaluation.judges.structured import StructuredReply, ask_json

PROMPT_VERSION = GSB_PROMPT_VERSION
GOOD_ABOVE = 3.0
BAD_BELOW = -3.0
LENGTH_RATIO = 1.5
"""A candidate longer than this times max(baseline, expected length) is also judged cut to the
baseline's length."""


def verdict_of(raw: float) -> Verdict:
    """A raw score (-10..10, the candidate's) as good / same / bad."""
    if raw > GOOD_ABOVE:
        return "good"
    if raw < BAD_BELOW:
        return "bad"
    return "same"


def _info(judge: Judge) -> JudgeInfo:
    return JudgeInfo(judge="gsb", model=judge.model, prompt_version=PROMPT_VERSION)


def length_matched_words(
    candidate_words: int,
    baseline_words: int,
    *,
    ratio: float | None = LENGTH_RATIO,
    expected_words: int | None = None,
) -> int | None:
    """The length (words) the candidate is also judged at against this baseline: the
    baseline's, when the candidate is longer than its allowance (``ratio`` times the longer of
    the baseline and ``expected_words``); None when it is within it, when ``ratio`` is None (no
    length control) or when the baseline is empty."""
    if ratio is None or baseline_words <= 0:
        return None
    allowance = math.ceil(ratio * max(baseline_words, expected_words or 0))
    return baseline_words if candidate_words > allowance else None


def judge_pair(
    judge: Judge,
    candidate: str,
    baseline: str,
    *,
    baseline_id: str,
    question: str,
    max_words: int | None = DEFAULT_MAX_REPORT_WORDS,
    length_ratio: float | None = None,
    expected_words: int | None = None,
) -> list[PairVerdict]:
    """``judge_pair_async`` for a synchronous caller (on the LLM loop)."""
    return judge.run(
        judge_pair_async(
            judge,
            candidate,
            baseline,
            baseline_id=baseline_id,
            question=question,
            max_words=max_words,
            length_ratio=length_ratio,
            expected_words=expected_words,
        )
    )


async def judge_pair_async(
    judge: Judge,
    candidate: str,
    baseline: str,
    *,
    baseline_id: str,
    question: str,
    max_words: int | None = DEFAULT_MAX_REPORT_WORDS,
    length_ratio: float | None = None,
    expected_words: int | None = None,
) -> list[PairVerdict]:
    """The candidate against one baseline: one PairVerdict per dimension, from two calls (the
    candidate first, then second), four with the length-matched check (``length_ratio``: None,
    the default here, leaves it out; ``judge_gsb`` applies it). Both reports are sanitized and
    cut to ``max_words`` (None: no limit). An empty candidate is bad on every dimension, without
    a call."""
    return await _judge_texts(
        judge,
        sanitize_output(candidate, max_words=max_words).text,
        sanitize_output(baseline, max_words=max_words).text,
        baseline_id=baseline_id,
        question=question,
        length_ratio=length_ratio,
        expected_words=expected_words,
    )


async def _judge_texts(
    judge: Judge,
    cand: str,
    base: str,
    *,
    baseline_id: str,
    question: str,
    length_ratio: float | None,
    expected_words: int | None,
) -> list[PairVerdict]:
    """``judge_pair`` on texts already sanitized and cut to the word limit."""
    if not cand.strip():
        return [
            PairVerdict(
                baseline_id=baseline_id,
                dimension=d,
                raw_first=-10.0,
                raw_second=-10.0,
                verdict="bad",
                consistent=True,
            )
            for d in GSB_DIMENSIONS
        ]
    matched_words = length_matched_words(
        count_words(cand), count_words(base), ratio=length_ratio, expected_words=expected_words
    )
    orders = [(cand, base), (base, cand)]
    if matched_words is not None:
        short = limit_words(cand, matched_words).text
        orders += [(short, base), (base, short)]
    replies: list[StructuredReply[GsbReply]] = await asyncio.gather(
        *(
            ask_json(judge, gsb_messages(question=question, report_a=a, report_b=b), GsbReply)
            for a, b in orders
        )
    )
    values = [r.value for r in replies]
    pairs = []
    for dimension in GSB_DIMENSIONS:
        full_first, full_second = _raws(values[0], values[1], dimension)
        matched_first = matched_second = None
        if matched_words is not None:
            matched_first, matched_second = _raws(values[2], values[3], dimension)
        verdict: Verdict | None = None
        consistent = False
        scored = all(v is not None for v in values)
        if scored:
            assert full_first is not None and full_second is not None
            v1 = verdict_of(_lower(full_first, matched_first))
            v2 = verdict_of(_lower(full_second, matched_second))
            verdict, consistent = (v1 if v1 == v2 else None), v1 == v2
        pairs.append(
            PairVerdict(
                baseline_id=baseline_id,
                dimension=dimension,
                raw_first=full_first,
                raw_second=full_second,
                verdict=verdict,
                consistent=consistent,
                status="scored" if scored else "unscored",
                matched_words=matched_words,
                matched_first=matched_first,
                matched_second=matched_second,
            )
        )
    return pairs


def _raws(
    first: GsbReply | None, second: GsbReply | None, dimension: str
) -> tuple[float | None, float | None]:
    """The candidate's raw scores on ``dimension``: shown first, shown second."""
    return (
        float(getattr(first, dimension).score) if first is not None else None,
        -float(getattr(second, dimension).score) if second is not None else None,
    )


def _lower(full: float, matched: float | None) -> float:
    return full if matched is None else min(full, matched)


def gsb_ratio(good: int, same: int, bad: int) -> float | None:
    """max(0, G - B) / (G + S + B); None without a counted pair."""
    total = good + same + bad
    return max(0, good - bad) / total if total else None


def gsb_score(
    pairs: list[PairVerdict],
    info: JudgeInfo,
    *,
    truncated: str | None = None,
    length_matched: int = 0,
) -> GsbScore:
    """Counts and Score_gsb of judged pairs (see the module docstring)."""
    counted = [p for p in pairs if p.status == "scored" and p.consistent]

    def count(verdict: Verdict, dimension: str | None = None) -> int:
        return sum(
            1
            for p in counted
            if p.verdict == verdict and (dimension is None or p.dimension == dimension)
        )

    good, same, bad = count("good"), count("same"), count("bad")
    return GsbScore(
        score=gsb_ratio(good, same, bad),
        by_dimension={
            d: gsb_ratio(count("good", d), count("same", d), count("bad", d))
            for d in GSB_DIMENSIONS
        },
        good=good,
        same=same,
        bad=bad,
        inconsistent=sum(1 for p in pairs if p.status == "scored" and not p.consistent),
        unscored=sum(1 for p in pairs if p.status == "unscored"),
        pairs=pairs,
        info=info,
        truncated=truncated,
        length_matched=length_matched,
    )


def judge_gsb(
    judge: Judge,
    candidate: str,
    baselines: Mapping[str, str],
    *,
    question: str,
    max_words: int | None = DEFAULT_MAX_REPORT_WORDS,
    length_ratio: float | None = LENGTH_RATIO,
    expected_words: int | None = None,
) -> GsbScore:
    """``judge_gsb_async`` for a synchronous caller (on the LLM loop)."""
    return judge.run(
        judge_gsb_async(
            judge,
            candidate,
            baselines,
            question=question,
            max_words=max_words,
            length_ratio=length_ratio,
            expected_words=expected_words,
        )
    )


async def judge_gsb_async(
    judge: Judge,
    candidate: str,
    baselines: Mapping[str, str],
    *,
    question: str,
    max_words: int | None = DEFAULT_MAX_REPORT_WORDS,
    length_ratio: float | None = LENGTH_RATIO,
    expected_words: int | None = None,
) -> GsbScore:
    """The candidate against every baseline (``{baseline_id: report}``), both orders each, with
    the length-matched check where the candidate is longer than its allowance (``length_ratio``
    None: without it). Every report is cut to ``max_words`` (None: no limit); the candidate's
    cut is flagged in ``truncated``. ``expected_words``: how long a complete answer is (the
    task's reference report)."""
    sanitized = sanitize_output(candidate, max_words=max_words)
    cand = sanitized.text
    per_baseline = await asyncio.gather(
        *(
            _judge_texts(
                judge,
                cand,
                sanitize_output(baseline, max_words=max_words).text,
                baseline_id=baseline_id,
                question=question,
                length_ratio=length_ratio,
                expected_words=expected_words,
            )
            for baseline_id, baseline in baselines.items()
        )
    )
    pairs = [pair for verdicts in per_baseline for pair in verdicts]
    checked = {p.baseline_id for p in pairs if p.matched_words is not None}
    return gsb_score(
        pairs, _info(judge), truncated=sanitized.truncated, length_matched=len(checked)
    )


def score_da(rubric: RubricScore, gsb: GsbScore, alpha: float) -> float | None:
    """Score_da = alpha * Score_rubric + (1 - alpha) * Score_gsb (fractions, 0..1).

    None when the rubric score is None (nothing could be judged). When GSB has no consistent
    scored pair (``gsb.score`` is None: every pair inconsistent or unscored, or no baseline),
    the rubric score stands alone: a position-biased or failing comparison says nothing about
    the report, so it neither adds nor subtracts."""
    if rubric.score is None:
        return None
    if gsb.score is None:
        return rubric.score
    return alpha * rubric.score + (1.0 - alpha) * gsb.score

"""Good-Same-Bad: a report compared with baseline reports, each pair judged in both orders.

For one baseline the judge sees the two reports twice: candidate as A (first), then candidate as
B (second); each reply scores readability and depth from -10 to 10 in A's favour. The
candidate's raw score is the reply's score in the first order and its negation in the second.
Each raw score maps to a verdict (good if > 3, bad if < -3, same otherwise); when the two orders
give the same verdict it stands, otherwise the pair is *inconsistent* (``verdict=None``): a
position-biased judgement, counted and reported but left out of G, S and B. A pair whose reply
never validated (or whose call failed) is *unscored*, likewise left out.

Score_gsb = max(0, G - B) / (G + S + B) over the consistent scored pairs, overall and per
dimension (None when there is none).
"""

from __future__ import annotations

from collections.abc import Mapping

from benchforge.evaluation.judges.checks import parallel_map
from benchforge.evaluation.judges.client import Judge
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


def verdict_of(raw: float) -> Verdict:
    """A raw score (-10..10, the candidate's) as good / same / bad."""
    if raw > GOOD_ABOVE:
        return "good"
    if raw < BAD_BELOW:
        return "bad"
    return "same"


def _info(judge: Judge) -> JudgeInfo:
    return JudgeInfo(judge="gsb", model=judge.model, prompt_version=PROMPT_VERSION)


def judge_pair(
    judge: Judge, candidate: str, baseline: str, *, baseline_id: str, question: str
) -> list[PairVerdict]:
    """The candidate against one baseline: one PairVerdict per dimension, from two calls (the
    candidate first, then second). An empty candidate is bad on every dimension, without a
    call."""
    cand = sanitize_output(candidate).text
    base = sanitize_output(baseline).text
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
    orders = [(cand, base), (base, cand)]
    replies: list[StructuredReply[GsbReply]] = parallel_map(
        judge,
        lambda ab: ask_json(
            judge, gsb_messages(question=question, report_a=ab[0], report_b=ab[1]), GsbReply
        ),
        orders,
    )
    first, second = (r.value for r in replies)
    pairs = []
    for dimension in GSB_DIMENSIONS:
        if first is None or second is None:
            pairs.append(
                PairVerdict(
                    baseline_id=baseline_id,
                    dimension=dimension,
                    raw_first=getattr(first, dimension).score if first else None,
                    raw_second=-getattr(second, dimension).score if second else None,
                    verdict=None,
                    consistent=False,
                    status="unscored",
                )
            )
            continue
        raw_first = float(getattr(first, dimension).score)
        raw_second = -float(getattr(second, dimension).score)
        v1, v2 = verdict_of(raw_first), verdict_of(raw_second)
        pairs.append(
            PairVerdict(
                baseline_id=baseline_id,
                dimension=dimension,
                raw_first=raw_first,
                raw_second=raw_second,
                verdict=v1 if v1 == v2 else None,
                consistent=v1 == v2,
            )
        )
    return pairs


def gsb_ratio(good: int, same: int, bad: int) -> float | None:
    """max(0, G - B) / (G + S + B); None without a counted pair."""
    total = good + same + bad
    return max(0, good - bad) / total if total else None


def gsb_score(pairs: list[PairVerdict], info: JudgeInfo) -> GsbScore:
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
    )


def judge_gsb(
    judge: Judge, candidate: str, baselines: Mapping[str, str], *, question: str
) -> GsbScore:
    """The candidate against every baseline (``{baseline_id: report}``), both orders each."""
    pairs: list[PairVerdict] = []
    for baseline_id, baseline in baselines.items():
        pairs.extend(
            judge_pair(judge, candidate, baseline, baseline_id=baseline_id, question=question)
        )
    return gsb_score(pairs, _info(judge))


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

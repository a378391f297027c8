"""Chunks scored apart (on the workers of a cluster) add up to one summary: their outcome and
what they cost."""

from __future__ import annotations

from benchforge.harness.judging import JudgeUsage
from benchforge.harness.models import ChunkScores


def test_chunk_scores_add_outcome_and_cost() -> None:
    first = ChunkScores(
        statuses={"scored": 3, "scoring_error": 1},
        scoring_errors={"a": "ValueError: x"},
        dbt_invocations=7,
        kept_scores_used=1,
        scores_kept=2,
        judge=JudgeUsage(model="m", mock=True, requests=4, cache_hits=1, cost_usd=0.5),
    )
    second = ChunkScores(
        statuses={"scored": 2},
        scoring_errors={"b": "OSError: y"},
        dbt_invocations=5,
        kept_scores_used=2,
        judge=JudgeUsage(model="m", mock=True, requests=6, errors=1, cost_usd=None),
    )
    total = ChunkScores().plus(first).plus(second)
    assert total.statuses == {"scored": 5, "scoring_error": 1}
    assert total.scoring_errors == {"a": "ValueError: x", "b": "OSError: y"}
    assert (total.dbt_invocations, total.kept_scores_used, total.scores_kept) == (12, 3, 2)
    assert total.judge is not None
    judge = total.judge
    assert (judge.requests, judge.cache_hits, judge.errors, judge.cost_usd) == (10, 1, 1, 0.5)
    assert ChunkScores().plus(ChunkScores()).judge is None

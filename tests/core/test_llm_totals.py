"""``llm_totals``: the one sum over model calls, whether a ledger recorded them or an agent
recorded them itself as model steps (the executor adds both; judge records, judging usage and
calibration sum ledgers)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from benchforge.core.llm import LlmCallRecord, LlmLedger, LlmTotals, llm_totals
from benchforge.core.records import Step

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _record(**fields: Any) -> LlmCallRecord:
    base: dict[str, Any] = {
        "role": "judge",
        "model": "m",
        "base_url": "http://llm",
        "started_at": NOW,
        "latency_s": 0.1,
        "attempts": 1,
        "status": "ok",
    }
    return LlmCallRecord(**{**base, **fields})


def _ledger() -> LlmLedger:
    ledger = LlmLedger()
    for record in (
        _record(prompt_tokens=100, completion_tokens=20, cost_usd=0.25),  # priced
        _record(attempts=3, prompt_tokens=50, completion_tokens=5, cost_usd=0.5),  # retried
        _record(attempts=0, cache_hit=True, prompt_tokens=100, completion_tokens=20, cost_usd=0),
        _record(prompt_tokens=10, completion_tokens=2),  # a model missing from the price table
        _record(attempts=4, status="error", http_status=500, error="gave up"),  # never unpriced
    ):
        ledger.append(record)
    return ledger


KNOWN = LlmTotals(
    calls=5,
    errors=1,
    cache_hits=1,
    attempts=9,
    prompt_tokens=260,
    completion_tokens=47,
    cost_usd=0.75,
    unpriced_calls=1,
)


def test_a_known_ledger_sums_to_known_totals() -> None:
    ledger = _ledger()
    assert llm_totals(ledger.records()) == KNOWN
    assert ledger.totals() == KNOWN  # the ledger's totals are the same function
    assert KNOWN.sent == 4  # every call but the cache hit reached the endpoint
    assert KNOWN.known_cost_usd is None  # one unpriced call: the sum is not the cost
    priced = llm_totals(r for r in ledger.records() if r.cost_usd is not None or not r.ok)
    assert priced.known_cost_usd == pytest.approx(0.75) and priced.errors == 1


def test_model_steps_an_agent_recorded_sum_like_the_ledger_records_they_mirror() -> None:
    records = _ledger().records()
    steps = [
        Step(
            index=i,
            kind="model",
            name=r.model,
            started_at=NOW,
            seconds=r.latency_s,
            ok=r.ok,
            prompt_tokens=r.prompt_tokens,
            completion_tokens=r.completion_tokens,
            cost_usd=r.cost_usd,
            attempts=r.attempts,
            cache_hit=r.cache_hit,
        )
        for i, r in enumerate(records)
    ]
    assert llm_totals(steps) == KNOWN
    # a trial's totals: the agent's own steps and its view's ledger, in one sum
    mixed = llm_totals([*steps[:2], *records[2:]])
    assert mixed == KNOWN == llm_totals(steps[:2]) + llm_totals(records[2:])

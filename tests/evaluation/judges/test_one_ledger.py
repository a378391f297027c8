"""One ledger: judges call models through ``LlmClientView`` on one event loop, as agents do.

A judged trial on one loop: the agent's call and the judge's calls go through views of real
clients on the mock server, into one trajectory (model steps) and one run ledger, and
``llm_totals`` gives the same sums from either; the judge record is the judge view's totals.
Re-judging through a fresh view of the same client replays every reply from the cache at no
cost; a failing endpoint's calls are retried, recorded as errors and leave the items unscored
(never 0)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from benchforge.agents.mock_llm import FaultConfig, MockServerConfig, MockServerHandle, run_server
from benchforge.agents.protocol import Trajectory
from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig, LlmLedger, llm_totals
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.evaluation.judges.models import RubricScore
from benchforge.evaluation.judges.record import judge_record
from benchforge.evaluation.judges.rubric import judge_rubric, judge_rubric_async
from benchforge.harness.judging import open_judge
from tests.evaluation.judges.data import PARTIAL_REPORT, QUESTION, resolved_rubric

RUBRIC = resolved_rubric()
AGENT_MODEL = "gpt-4o-mini"  # priced; the mock server answers it as mock-echo
JUDGE_CALLS = 11  # PARTIAL_REPORT per item: 10 items and the path question of S3


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    with run_server(config=MockServerConfig(fallback_model="mock-echo")) as handle:
        yield handle


def _config(url: str, role: str, model: str, **fields: Any) -> LlmConfig:
    return LlmConfig(
        role=role, model=model, base_url=url, api_key=SecretStr("k"), timeout_s=5.0, **fields
    )


def test_a_judged_trial_records_agent_and_judge_calls_in_one_ledger(
    mock: MockServerHandle, tmp_path: Path
) -> None:
    run_ledger = LlmLedger()
    trajectory = Trajectory()
    agent_config = _config(mock.url, "agent", AGENT_MODEL)
    judge_config = _config(mock.url, "judge", "mock-judge", cache_dir=tmp_path / "cache")

    async def judged_trial() -> tuple[LlmClientView, Judge, RubricScore, RubricScore]:
        async with (
            LlmClient(agent_config, ledger=run_ledger) as agent_llm,
            LlmClient(judge_config, ledger=run_ledger) as judge_llm,
        ):
            agent = LlmClientView(agent_llm, steps=trajectory)
            await agent.complete([{"role": "user", "content": "Why did churn rise?"}])
            judge = Judge(LlmClientView(judge_llm, steps=trajectory))
            score = await judge_rubric_async(judge, RUBRIC, PARTIAL_REPORT, question=QUESTION)
            again = await judge_rubric_async(
                judge.for_task(), RUBRIC, PARTIAL_REPORT, question=QUESTION
            )
            return agent, judge, score, again

    agent, judge, score, again = asyncio.run(judged_trial())

    assert score.score == pytest.approx(6 / 9) and again == score
    steps = trajectory.close("not reached")
    # every call a model step of the one trajectory, every call a record of the one ledger
    assert [s.name for s in steps] == [AGENT_MODEL, *["mock-judge"] * 2 * JUDGE_CALLS]
    assert all(s.kind == "model" and s.ok for s in steps)
    records = run_ledger.records()
    assert [r.model for r in records] == [s.name for s in steps]
    agent_totals, judge_totals = agent.ledger.totals(), judge.totals()
    cached = llm_totals(records[1 + JUDGE_CALLS :])  # the re-judging's view
    # the one sum, from the steps or from the ledgers
    assert llm_totals(steps) == run_ledger.totals() == agent_totals + judge_totals + cached
    assert judge.client_totals() == run_ledger.totals()  # both clients share the run's ledger
    assert (agent_totals.calls, agent_totals.unpriced_calls) == (1, 0)
    assert agent_totals.cost_usd > 0
    assert (judge_totals.calls, judge_totals.sent, judge_totals.cache_hits) == (11, 11, 0)
    assert judge_totals.known_cost_usd == 0.0  # the price table's mock models are free
    assert (cached.calls, cached.cache_hits, cached.sent, cached.attempts) == (11, 11, 0, 0)
    assert cached.known_cost_usd == 0.0

    record = judge_record(judge=judge, rubric=score)
    assert (record.requests, record.cache_hits, record.cost_usd) == (JUDGE_CALLS, 0, 0.0)
    assert record.used_mock_llm


def test_a_failing_judge_endpoint_is_an_infrastructure_error_not_a_zero(
    tmp_path: Path,
) -> None:
    config = MockServerConfig(faults=FaultConfig(rate_500=1.0))
    with run_server(config=config) as failing:
        judge_config = _config(
            failing.url, "judge", "mock-judge", max_retries=1, backoff_base_s=0.01
        )
        with open_judge(judge_config, JudgeSettings()) as judge:
            mine = judge.for_task()
            score = judge_rubric(mine, RUBRIC, PARTIAL_REPORT, question=QUESTION)
    assert score.score is None and len(score.unscored) == 10
    assert all(v.status == "unscored" and v.earned is None for v in score.items)
    assert all("LlmInfrastructureError" in (v.reason or "") for v in score.items)
    totals = mine.totals()
    assert (totals.calls, totals.errors, totals.attempts) == (10, 10, 20)  # retried once each
    record = judge_record(judge=mine, rubric=score)
    assert (record.requests, record.cache_hits) == (10, 0)
    assert judge.client_totals() == totals

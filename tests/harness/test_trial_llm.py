"""The framework records model calls: each trial gets a view of the shared client with its own
ledger, which also appends the model steps to the trajectory. An agent that records nothing by
hand still gets its calls, tokens, cost and mock use in its result (before, it reported zero)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr

from benchforge.agents.mock_llm import MockServerConfig, MockServerHandle, run_server
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.core.artifacts import open_store
from benchforge.core.llm import LlmClient, LlmConfig, LlmLedger, SharedSemaphore, load_price_table
from benchforge.core.records import AgentLimits, TrialKey, TrialResult
from benchforge.core.sandbox import ProcessBackend
from benchforge.evaluation.tasks.loader import load_task
from benchforge.harness.executor import RunContext, run_trial
from benchforge.harness.models import TrialPlan
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES

TASK = FIXTURES / "task_specs" / "de-mini" / "mini-arch-retention"
MODEL = "gpt-4o-mini"  # priced in the price table; the mock server answers it as mock-echo


class _Config(BaseModel):
    pass


class RecordsNothing:
    """Calls the model twice and records no step of its own."""

    name = "records-nothing"
    uses_model = True

    @property
    def config(self) -> BaseModel:
        return _Config()

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        assert env.llm is not None
        answer = None
        for turn in range(2):
            reply = await env.llm.complete([{"role": "user", "content": f"{env.prompt} {turn}"}])
            answer = reply.content
        return AgentOutcome(termination="finished", answer=answer)


def _plan(epoch: int) -> tuple[TrialPlan, TrialKey]:
    task = load_task(TASK)
    key = TrialKey(
        suite=task.spec.suite,
        task_id=task.spec.id,
        task_version=task.spec.version,
        agent=RecordsNothing.name,
        agent_config_hash="0" * 12,
        model=MODEL,
        epoch=epoch,
    )
    return TrialPlan(key=key, task_folder=str(TASK), agent_spec=key.agent, dataset_dir=None), key


def _trials(tmp_path: Path, client: LlmClient, epochs: int) -> list[TrialResult]:
    run = RunStore(open_store(str(tmp_path / "artifacts")), "ledger")
    ctx = RunContext(
        run=run,
        scratch=tmp_path / "scratch",
        sandbox=ProcessBackend(),
        limits=AgentLimits(wall_s=30),
        llm_configs={},
        trial_slots=SharedSemaphore(4),
        solutions=lambda _key: None,
    )
    task, agent = load_task(TASK), RecordsNothing()

    async def all_trials() -> list[TrialResult]:
        plans = [_plan(epoch)[0] for epoch in range(epochs)]
        try:
            return await asyncio.gather(*(run_trial(p, task, agent, client, ctx) for p in plans))
        finally:
            await client.aclose()

    results = asyncio.run(asyncio.wait_for(all_trials(), timeout=60))
    assert [run.read_result(r.key.slug) for r in results] == results  # as stored
    return results


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    with run_server(config=MockServerConfig(fallback_model="mock-echo")) as handle:
        yield handle


def test_an_agent_that_records_nothing_gets_its_calls_tokens_and_cost(
    tmp_path: Path, mock: MockServerHandle
) -> None:
    shared = LlmLedger()
    config = LlmConfig(
        role="agent", model=MODEL, base_url=mock.url, api_key=SecretStr("k"), timeout_s=5.0
    )
    client = LlmClient(config, ledger=shared)
    results = _trials(tmp_path, client, epochs=2)  # two trials at once on one shared client

    price = load_price_table().models[MODEL]
    records = shared.records()
    assert len(records) == 4  # the one ledger of the client holds every trial's calls
    assert sorted(r.epoch for r in records) == [0, 0, 1, 1]  # each view sends its trial's epoch
    for result in results:
        mine = [r for r in records if r.epoch == result.key.epoch]
        prompt = sum(r.prompt_tokens or 0 for r in mine)
        completion = sum(r.completion_tokens or 0 for r in mine)
        totals = result.llm
        assert (totals.calls, totals.errors, totals.attempts, totals.unpriced_calls) == (2, 0, 2, 0)
        assert (totals.prompt_tokens, totals.completion_tokens) == (prompt, completion)
        assert prompt > 0 and completion > 0
        expected = (prompt * price.input + completion * price.output) / 1_000_000
        assert totals.cost_usd == pytest.approx(expected) and totals.cost_usd > 0
        assert result.used_mock_llm
        # the view appended the model steps, in the trajectory format the browser reads
        steps = result.trajectory
        assert [(s.kind, s.name, s.index, s.ok) for s in steps] == [
            ("model", MODEL, 0, True),
            ("model", MODEL, 1, True),
        ]
        assert [s.prompt_tokens for s in steps] == [r.prompt_tokens for r in mine]
        assert sum(s.cost_usd or 0 for s in steps) == pytest.approx(totals.cost_usd)
        assert all(s.used_mock and s.attempts == 1 and not s.cache_hit for s in steps)
        assert steps[-1].output == result.answer
    assert sum(r.llm.cost_usd for r in results) == pytest.approx(shared.totals().cost_usd)

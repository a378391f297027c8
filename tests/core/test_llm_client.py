"""LlmClient against the mock LLM server over real loopback HTTP (the SDK is not patched).

Each test uses its own model name (``mock-echo:<test>``): limits are shared per
(base_url, model) in the process, so tests with different limits must not share a model.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from benchforge.agents.mock_llm import (
    FaultConfig,
    MockServerConfig,
    MockServerHandle,
    MockStats,
    ScriptedScript,
    ToolSequenceScript,
    run_server,
)
from benchforge.core.errors import BenchforgeError, ConfigError
from benchforge.core.llm import (
    LlmClient,
    LlmClientView,
    LlmConfig,
    LlmInfrastructureError,
    LlmLedger,
    LlmRequestError,
    SharedSemaphore,
    TokenBucket,
    llm_loop,
    load_price_table,
    retry_after_seconds,
    run_blocking,
)
from benchforge.core.settings import load_settings

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "run_sql",
            "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}},
        },
    }
]

SCRIPTS: dict[str, Any] = {
    "one-query": ToolSequenceScript.model_validate(
        {
            "policy": "tool_sequence",
            "tool_calls": [{"name": "run_sql", "arguments": {"sql": "select 42"}}],
            "final": "The answer is 42.",
        }
    ),
    "short": ScriptedScript.model_validate({"replies": [{"content": "only reply"}]}),
}

USER = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    handle = run_server(config=MockServerConfig(scripts=SCRIPTS, fallback_model="mock-echo"))
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def server(mock: MockServerHandle) -> MockServerHandle:
    mock.reset()
    return mock


@pytest.fixture
def failing_server() -> Iterator[MockServerHandle]:
    handle = run_server(config=MockServerConfig(faults=FaultConfig(rate_500=1.0)))
    try:
        yield handle
    finally:
        handle.stop()


def _config(server: MockServerHandle, model: str, **fields: Any) -> LlmConfig:
    fields.setdefault("backoff_base_s", 0.01)
    fields.setdefault("timeout_s", 5.0)
    return LlmConfig(
        role="agent", model=model, base_url=server.url, api_key=SecretStr("test-key"), **fields
    )


def _idle_stats(server: MockServerHandle) -> MockStats:
    deadline = time.monotonic() + 3
    while server.stats().in_flight and time.monotonic() < deadline:
        time.sleep(0.02)
    return server.stats()


def test_tool_call_round_trip(server: MockServerHandle) -> None:
    async def run() -> None:
        async with LlmClient(_config(server, "mock-script:one-query")) as llm:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "what is it?"}]
            first = await llm.complete(messages, tools=TOOLS, tool_choice="auto")
            assert first.finish_reason == "tool_calls"
            assert first.content is None
            (call,) = first.tool_calls
            assert call.name == "run_sql"
            assert call.parsed_arguments() == {"sql": "select 42"}
            assert call.id.startswith("call_")
            messages.append(first.assistant_message())
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "42"})
            final = await llm.complete(messages, tools=TOOLS)
            assert final.finish_reason == "stop"
            assert final.content == "The answer is 42."
            assert [r.status for r in llm.ledger.records()] == ["ok", "ok"]
            assert final.usage.prompt_tokens and final.usage.prompt_tokens > 0

    asyncio.run(run())


def test_injected_429_and_500_are_retried_and_counted(server: MockServerHandle) -> None:
    async def run() -> None:
        async with LlmClient(_config(server, "mock-echo:retries", max_retries=3)) as llm:
            after_500 = await llm.complete(USER, extra_headers={"x-mock-fault": "500*2"})
            assert after_500.content == "hello"
            assert after_500.record.attempts == 3
            assert after_500.record.http_status == 200
            after_429 = await llm.complete(
                USER, extra_headers={"x-mock-fault": "429*2,retry-after=0.01"}
            )
            assert after_429.record.attempts == 3
            assert llm.ledger.totals().attempts == 6

    asyncio.run(run())
    assert server.stats().by_status == {"500": 2, "429": 2, "200": 2}


def test_always_500_raises_after_max_retries_plus_one(failing_server: MockServerHandle) -> None:
    ledger = LlmLedger()

    async def run() -> None:
        config = _config(failing_server, "mock-echo", max_retries=3)
        async with LlmClient(config, ledger=ledger) as llm:
            with pytest.raises(LlmInfrastructureError) as caught:
                await llm.complete(USER)
        assert caught.value.attempts == 4
        assert caught.value.last_status == 500
        assert isinstance(caught.value, BenchforgeError)
        assert caught.value.record is not None and caught.value.record.status == "error"

    asyncio.run(run())
    assert failing_server.stats().requests == 4
    (record,) = ledger.records()
    assert record.attempts == 4 and record.http_status == 500 and record.cost_usd is None
    assert ledger.totals().errors == 1


def test_timeouts_are_retried(server: MockServerHandle) -> None:
    async def run() -> None:
        config = _config(server, "mock-echo:timeouts", timeout_s=0.3, max_retries=2)
        async with LlmClient(config) as llm:
            reply = await llm.complete(
                USER, extra_headers={"x-mock-fault": "timeout*1,timeout-sleep=10"}
            )
            assert reply.record.attempts == 2
            assert reply.content == "hello"
            with pytest.raises(LlmInfrastructureError) as caught:
                await llm.complete(USER, extra_headers={"x-mock-fault": "timeout,timeout-sleep=10"})
            assert caught.value.attempts == 3
            assert caught.value.last_status is None
            assert "timed out" in str(caught.value)

    t0 = time.monotonic()
    asyncio.run(run())
    assert time.monotonic() - t0 < 4  # four 0.3 s timeouts, not 10 s stalls
    stats = _idle_stats(server)  # the server frees a stalled request once the client hangs up
    assert stats.requests == 5
    assert stats.by_fault == {"timeout": 4, "none": 1}


def test_retry_after_is_honoured(server: MockServerHandle) -> None:
    async def timed(llm: LlmClient, fault: str) -> float:
        t0 = time.monotonic()
        reply = await llm.complete(USER, extra_headers={"x-mock-fault": fault})
        assert reply.record.attempts == 2
        return time.monotonic() - t0

    async def run() -> tuple[float, float]:
        # backoff_base_s=0: without Retry-After the retry is immediate.
        config = _config(server, "mock-echo:retry-after", backoff_base_s=0.0)
        async with LlmClient(config) as llm:
            return await timed(llm, "429*1,retry-after=0.6"), await timed(
                llm, "429*1,retry-after=none"
            )

    honoured, immediate = asyncio.run(run())
    assert 0.6 <= honoured < 1.5
    assert immediate < 0.3


def test_a_view_records_each_call_in_its_own_ledger_and_as_a_model_step(
    server: MockServerHandle,
) -> None:
    """One trial's view: ok, failed and cancelled calls in its ledger and its trajectory; the
    shared client's ledger still holds every call that reached it, another view's too."""
    from benchforge.agents.protocol import Trajectory

    trajectory, shared = Trajectory(), LlmLedger()

    async def run() -> tuple[LlmLedger, LlmLedger]:
        config = _config(server, "mock-echo:view", max_retries=1)
        async with LlmClient(config, ledger=shared) as llm:
            view = LlmClientView(llm, steps=trajectory, epoch=3)
            other = LlmClientView(llm)  # another trial on the same client, no trajectory
            reply = await view.complete(USER, tools=TOOLS)
            assert reply.record.epoch == 3
            await other.complete(USER)
            with pytest.raises(LlmInfrastructureError):
                await view.complete(USER, extra_headers={"x-mock-fault": "500"})
            slow = {"x-mock-fault": "latency=1000"}
            cut = asyncio.ensure_future(view.complete(USER, extra_headers=slow))
            await asyncio.sleep(0.2)
            cut.cancel()
            with pytest.raises(asyncio.CancelledError):
                await cut
            return view.ledger, other.ledger

    mine, theirs = asyncio.run(run())
    assert _idle_stats(server).in_flight == 0  # the cut request ends before the next test
    totals = mine.totals()
    assert (totals.calls, totals.errors, totals.attempts) == (3, 2, 3)  # 1 ok + 2 tries + cut
    assert totals.prompt_tokens == mine.records()[0].prompt_tokens and mine.used_mock()
    assert totals.unpriced_calls == 0 and totals.cost_usd == 0.0  # mock models are free
    assert theirs.totals().calls == 1 and [r.epoch for r in theirs.records()] == [0]
    # the client's one ledger: the calls that reached it (the cut one never answered)
    assert len(shared) == 3 and shared.records()[0] == mine.records()[0]
    steps = trajectory.close("interrupted: the trial stopped")
    assert [(s.kind, s.name, s.ok, bool(s.interrupted)) for s in steps] == [
        ("model", "mock-echo:view", True, False),
        ("model", "mock-echo:view", False, False),
        ("model", "mock-echo:view", False, True),
    ]
    assert steps[0].prompt_tokens and steps[0].used_mock and steps[0].attempts == 1
    assert steps[1].attempts == 2 and "LlmInfrastructureError" in (steps[1].error or "")
    assert trajectory.model_steps_by_agent() == []  # all three are the view's


def test_request_errors_are_not_retried(server: MockServerHandle) -> None:
    async def run() -> None:
        async with LlmClient(_config(server, "mock-script:short")) as llm:
            history = [*USER, {"role": "assistant", "content": "x"}, *USER]
            with pytest.raises(LlmRequestError) as rejected:
                await llm.complete(history)
            assert (rejected.value.attempts, rejected.value.last_status) == (1, 400)
        async with LlmClient(_config(server, "mock-script:missing")) as llm:
            with pytest.raises(LlmInfrastructureError) as missing:
                await llm.complete(USER)
            assert (missing.value.attempts, missing.value.last_status) == (1, 404)

    asyncio.run(run())
    assert server.stats().requests == 2


def test_concurrency_cap_is_shared_and_never_exceeded(server: MockServerHandle) -> None:
    async def run() -> None:
        config = _config(server, "mock-echo:cap", concurrency=3)
        async with LlmClient(config) as a, LlmClient(config) as b:
            slow = {"x-mock-fault": "latency=100"}
            calls = [llm.complete(USER, extra_headers=slow) for llm in (a, b) for _ in range(6)]
            await asyncio.gather(*calls)

    asyncio.run(run())
    stats = server.stats()
    assert stats.requests == 12
    assert stats.max_in_flight == 3


def test_concurrency_cap_holds_across_threads_and_event_loops(server: MockServerHandle) -> None:
    """Threads with loops of their own and synchronous callers on the LLM loop share one
    model's cap."""
    config = _config(server, "mock-echo:threads", concurrency=2)
    ledger = LlmLedger()
    slow = {"x-mock-fault": "latency=80"}

    async def two_calls(llm: LlmClient) -> None:
        for _ in range(2):
            await llm.complete(USER, extra_headers=slow)

    async def on_own_loop() -> None:
        async with LlmClient(config, ledger=ledger) as llm:
            await two_calls(llm)

    shared = LlmClient(config, ledger=ledger)
    threads = [threading.Thread(target=asyncio.run, args=(on_own_loop(),)) for _ in range(3)]
    threads += [threading.Thread(target=run_blocking, args=(two_calls(shared),)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run_blocking(shared.aclose())
    assert len(ledger) == 12
    stats = server.stats()
    assert stats.requests == 12
    assert stats.max_in_flight == 2


def test_run_blocking_runs_on_one_loop_and_refuses_to_wait_on_itself() -> None:
    async def which_loop() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    first = run_blocking(which_loop())
    assert first is llm_loop() and run_blocking(which_loop()) is first

    async def nested() -> None:
        run_blocking(which_loop())

    with pytest.raises(RuntimeError, match="await the coroutine instead"):
        run_blocking(nested())


def test_shared_semaphore_gives_back_the_slots_of_cancelled_waiters() -> None:
    async def run() -> None:
        sem = SharedSemaphore(1)
        await sem.acquire()
        queued = asyncio.create_task(sem.acquire())
        await asyncio.sleep(0)
        queued.cancel()  # cancelled while waiting
        with pytest.raises(asyncio.CancelledError):
            await queued
        handed = asyncio.create_task(sem.acquire())
        await asyncio.sleep(0)
        sem.release()  # the slot passes to `handed`...
        handed.cancel()  # ...which is cancelled before it resumes: the slot comes back
        with pytest.raises(asyncio.CancelledError):
            await handed
        assert sem.held == 0
        await asyncio.wait_for(sem.acquire(), 1)
        assert sem.held == 1

    asyncio.run(run())


def test_clients_of_one_model_must_agree_on_limits(server: MockServerHandle) -> None:
    first = LlmClient(_config(server, "mock-echo:agree", concurrency=2))
    with pytest.raises(ConfigError, match="concurrency=2"):
        LlmClient(_config(server, "mock-echo:agree", concurrency=5))
    assert first.limiter.concurrency == 2
    asyncio.run(first.aclose())


def test_rate_limit_is_respected(server: MockServerHandle) -> None:
    rpm = 600.0  # 10 per second after a burst of 10
    bucket = TokenBucket(rpm)
    n = 20

    async def run() -> None:
        config = _config(server, "mock-echo:rate", requests_per_minute=rpm, concurrency=64)
        async with LlmClient(config) as llm:
            await asyncio.gather(*(llm.complete(USER) for _ in range(n)))

    asyncio.run(run())
    arrivals = sorted(server.stats().arrivals_s)
    assert len(arrivals) == n
    # In any window of arrivals, at most burst + rate * (width + slack) requests. The slack is
    # time, not a count: under load the burst's first requests can reach the server late
    # (new connections), bunched with the next ones the bucket released on time. Without a
    # limiter all 20 arrive within ~50 ms, far over 10 + 10 * 0.3 + 1.
    slack_s = 0.25
    for i in range(n):
        for j in range(i + 1, n):
            width = arrivals[j] - arrivals[i]
            allowed = bucket.capacity + bucket.rate_per_s * (width + slack_s) + 1
            assert j - i + 1 <= allowed, (i, j, width)
    span = arrivals[-1] - arrivals[0]
    needed = (n - bucket.capacity) / bucket.rate_per_s
    assert needed - 0.2 <= span < needed + 1.0


def test_cache_hit_makes_no_request_and_another_epoch_misses(
    server: MockServerHandle, tmp_path: Path
) -> None:
    cache_dir = tmp_path / "llm-cache"

    async def run() -> None:
        config = _config(server, "mock-script:one-query", cache_dir=cache_dir, temperature=0.0)
        async with LlmClient(config) as llm:
            fresh = await llm.complete(USER, tools=TOOLS)
            assert not fresh.record.cache_hit and server.stats().requests == 1
            again = await llm.complete(USER, tools=TOOLS)
            assert again.record.cache_hit and again.record.attempts == 0
            assert again.record.cost_usd == 0.0
            assert again.tool_calls == fresh.tool_calls
            assert server.stats().requests == 1
            other_epoch = await llm.complete(USER, tools=TOOLS, epoch=1)
            assert not other_epoch.record.cache_hit and server.stats().requests == 2
            other_params = await llm.complete(USER, tools=TOOLS, temperature=0.5)
            assert not other_params.record.cache_hit and server.stats().requests == 3
        async with LlmClient(config) as later:  # another client, same folder: still a hit
            assert (await later.complete(USER, tools=TOOLS)).record.cache_hit
        assert server.stats().requests == 3

    asyncio.run(run())
    files = sorted(cache_dir.iterdir())
    assert len(files) == 3
    for path in files:
        assert path.suffix == ".json" and len(path.stem) == 64
        entry = json.loads(path.read_text(encoding="utf-8"))
        assert entry["key"]["request"]["model"] == "mock-script:one-query"
        assert "test-key" not in path.read_text(encoding="utf-8")


def test_unreadable_cache_entry_is_refetched(server: MockServerHandle, tmp_path: Path) -> None:
    async def run() -> None:
        async with LlmClient(_config(server, "mock-echo:cache", cache_dir=tmp_path)) as llm:
            first = await llm.complete(USER)
            assert first.record.cache_key is not None
            (tmp_path / f"{first.record.cache_key}.json").write_text("{trunc", encoding="utf-8")
            second = await llm.complete(USER)
            assert not second.record.cache_hit
            assert (await llm.complete(USER)).record.cache_hit

    asyncio.run(run())
    assert server.stats().requests == 2


def test_cost_from_the_price_table_known_and_unknown(server: MockServerHandle) -> None:
    prices = load_price_table()
    ledger = LlmLedger()

    async def run() -> None:
        # The mock answers non-mock names as mock-echo (fallback_model).
        async with (
            LlmClient(_config(server, "gpt-4o-mini"), ledger=ledger) as known,
            LlmClient(_config(server, "acme-unlisted-7b"), ledger=ledger) as unknown,
            LlmClient(_config(server, "mock-echo:cost"), ledger=ledger) as mock,
        ):
            priced = await known.complete(USER)
            p, c = priced.usage.prompt_tokens, priced.usage.completion_tokens
            assert p and c
            price = prices.models["gpt-4o-mini"]
            expected = (p * price.input + c * price.output) / 1_000_000
            assert priced.record.cost_usd == pytest.approx(expected)
            assert (priced.record.cost_usd or 0.0) > 0
            unpriced = await unknown.complete(USER)
            assert unpriced.record.cost_usd is None
            assert unpriced.record.prompt_tokens == p
            assert (await mock.complete(USER)).record.cost_usd == 0.0

    asyncio.run(run())
    totals = ledger.totals()
    assert totals.calls == 3 and totals.unpriced_calls == 1
    assert totals.cost_usd == pytest.approx(ledger.records()[0].cost_usd or 0.0)


def test_price_table_rules() -> None:
    prices = load_price_table()
    assert prices.cost("no-such-model", 1000, 1000) is None
    assert prices.cost("gpt-4o-mini", None, 10) is None
    gpt5 = prices.models["gpt-5"]
    assert gpt5.cached_input is not None
    assert prices.cost("gpt-5", 1_000_000, 0, cached_prompt_tokens=400_000) == pytest.approx(
        0.6 * gpt5.input + 0.4 * gpt5.cached_input
    )
    assert prices.cost("mock-script:anything", 10, 10) == 0.0
    # A dated snapshot is priced only through the name the provider answers with.
    assert prices.cost("gpt-4o-mini-2024-07-18", 10, 10) is None
    assert prices.cost("my-alias", 10, 10, response_model="gpt-4o-mini") is not None


def test_mock_marker_reaches_the_record(server: MockServerHandle) -> None:
    async def run() -> None:
        async with LlmClient(_config(server, "mock-echo:marker")) as llm:
            record = (await llm.complete(USER)).record
            assert record.system_fingerprint == "benchforge-mock"
            assert record.used_mock

    asyncio.run(run())


def test_config_from_settings_and_missing_key() -> None:
    settings = load_settings(openai_base_url="http://127.0.0.1:9/v1", openai_api_key="sk-secret")
    config = LlmConfig.from_settings(settings, "judge", "gpt-4.1", temperature=0.0)
    assert (config.role, config.model, config.base_url) == (
        "judge",
        "gpt-4.1",
        settings.openai_base_url,
    )
    assert config.api_key is not None and config.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(config)
    with pytest.raises(ConfigError, match="no API key"):
        LlmClient(LlmConfig(role="agent", model="mock-echo:nokey", base_url="http://127.0.0.1:9"))


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (retry_after_seconds({"retry-after": when}) or 0) <= 30

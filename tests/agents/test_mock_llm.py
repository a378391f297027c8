"""The mock LLM server over real loopback HTTP, driven by the OpenAI SDK and plain httpx."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import openai
import pytest

from benchforge.agents.mock_llm import (
    MOCK_FINGERPRINT,
    MOCK_HEADER,
    FaultConfig,
    FaultPlanner,
    MockServerConfig,
    MockServerHandle,
    PolicyReply,
    PolicyRequest,
    ScriptedScript,
    ToolSequenceScript,
    load_scripts_dir,
    parse_fault_header,
    run_server,
)
from benchforge.core.errors import ConfigError
from tests.paths import REPO_ROOT

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "run_sql",
            "description": "Run a SQL query",
            "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {"name": "list_tables", "parameters": {"type": "object", "properties": {}}},
    },
]

SCRIPTS: dict[str, Any] = {
    "greet": ScriptedScript.model_validate(
        {"replies": [{"content": "hello"}, {"content": "goodbye"}]}
    ),
    "explore": ToolSequenceScript.model_validate(
        {
            "policy": "tool_sequence",
            "tool_calls": [
                {"name": "list_tables"},
                {"name": "run_sql", "arguments": {"sql": "select count(*) from orders"}},
            ],
            "final": "There are 42 orders.",
        }
    ),
    "rogue": ScriptedScript.model_validate(
        {"replies": [{"tool_calls": [{"name": "rm_rf", "arguments": {}}]}]}
    ),
}


class _ShoutPolicy:
    """A custom policy registered by exact model name."""

    name = "shout"

    def reply(self, request: PolicyRequest) -> PolicyReply:
        return PolicyReply(content=str(request.messages[-1].get("content", "")).upper())


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    config = MockServerConfig(scripts=SCRIPTS, fallback_model="mock-echo")
    handle = run_server("127.0.0.1", 0, config, policies={"shout-1": _ShoutPolicy()})
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def server(mock: MockServerHandle) -> MockServerHandle:
    mock.reset()
    return mock


@pytest.fixture
def sdk(server: MockServerHandle) -> Iterator[openai.OpenAI]:
    client = openai.OpenAI(base_url=server.url, api_key="test-key", max_retries=0, timeout=10)
    try:
        yield client
    finally:
        client.close()


def _post(server: MockServerHandle, body: dict[str, Any], **headers: str) -> httpx.Response:
    return httpx.post(f"{server.url}/chat/completions", json=body, headers=headers, timeout=10)


def test_echo_through_sdk_carries_the_mock_marker(sdk: openai.OpenAI) -> None:
    raw = sdk.chat.completions.with_raw_response.create(
        model="mock-echo",
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "ping"}]},
        ],
        temperature=0.3,
        extra_body={"some_future_field": {"x": 1}},  # unknown fields are ignored
    )
    assert raw.headers[MOCK_HEADER] == "1"
    completion = raw.parse()
    assert completion.system_fingerprint == MOCK_FINGERPRINT
    assert completion.choices[0].message.content == "ping"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None and completion.usage.total_tokens > 0


def test_models_list_names_policies_and_scripts(sdk: openai.OpenAI) -> None:
    raw = sdk.models.with_raw_response.list()
    assert raw.headers[MOCK_HEADER] == "1"
    names = {m.id for m in raw.parse().data}
    assert {"mock-echo", "mock-scripted", "mock-script:greet", "shout-1"} <= names


def test_tool_sequence_round_trip_through_sdk(sdk: openai.OpenAI) -> None:
    messages: list[Any] = [{"role": "user", "content": "How many orders?"}]
    seen: list[str] = []
    for _ in range(3):
        completion = sdk.chat.completions.create(
            model="mock-script:explore", messages=messages, tools=cast(Any, TOOLS)
        )
        choice = completion.choices[0]
        if choice.finish_reason != "tool_calls":
            break
        assert choice.message.tool_calls
        call = choice.message.tool_calls[0]
        assert call.type == "function"
        seen.append(call.function.name)
        messages.append(choice.message.model_dump(exclude_none=True))
        messages.append({"role": "tool", "tool_call_id": call.id, "content": "ok"})
    assert seen == ["list_tables", "run_sql"]
    assert choice.finish_reason == "stop"
    assert choice.message.content == "There are 42 orders."
    run_sql = json.loads(messages[3]["tool_calls"][0]["function"]["arguments"])
    assert run_sql == {"sql": "select count(*) from orders"}


def test_scripted_by_system_prompt_key_then_exhausted(server: MockServerHandle) -> None:
    body: dict[str, Any] = {
        "model": "mock-scripted",
        "messages": [
            {"role": "system", "content": "You are an agent. mock-script: greet"},
            {"role": "user", "content": "hi"},
        ],
    }
    first = _post(server, body)
    assert first.json()["choices"][0]["message"]["content"] == "hello"
    body["messages"] += [
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "?"},
    ]
    assert _post(server, body).json()["choices"][0]["message"]["content"] == "goodbye"
    body["messages"] += [
        {"role": "assistant", "content": "goodbye"},
        {"role": "user", "content": "?"},
    ]
    exhausted = _post(server, body)
    assert exhausted.status_code == 400
    assert exhausted.json()["error"]["code"] == "mock_script_exhausted"
    assert exhausted.headers[MOCK_HEADER] == "1"


def test_errors_for_unknown_scripts_models_and_tools(server: MockServerHandle) -> None:
    user = [{"role": "user", "content": "hi"}]
    missing = _post(server, {"model": "mock-script:nope", "messages": user})
    assert missing.status_code == 404 and "nope" in missing.json()["error"]["message"]
    no_key = _post(server, {"model": "mock-scripted", "messages": user})
    assert no_key.status_code == 400
    rogue = _post(server, {"model": "mock-script:rogue", "messages": user, "tools": TOOLS})
    assert rogue.status_code == 400 and rogue.json()["error"]["code"] == "tool_not_offered"
    stream = _post(server, {"model": "mock-echo", "messages": user, "stream": True})
    assert stream.status_code == 400
    assert httpx.get(f"{server.url}/nowhere").headers[MOCK_HEADER] == "1"


def test_fallback_model_and_custom_policy(server: MockServerHandle) -> None:
    user = [{"role": "user", "content": "quiet"}]
    as_echo = _post(server, {"model": "gpt-4o-mini", "messages": user}).json()
    assert as_echo["model"] == "gpt-4o-mini"
    assert as_echo["choices"][0]["message"]["content"] == "quiet"
    shout = _post(server, {"model": "shout-1", "messages": user}).json()
    assert shout["choices"][0]["message"]["content"] == "QUIET"


def test_fault_header_fails_the_first_n_arrivals_then_answers(server: MockServerHandle) -> None:
    body = {"model": "mock-echo", "messages": [{"role": "user", "content": "x"}]}
    codes = [_post(server, body, **{"x-mock-fault": "500*2"}).status_code for _ in range(3)]
    assert codes == [500, 500, 200]
    limited = _post(server, body, **{"x-mock-fault": "429,retry-after=0.25"})
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "0.25"
    assert limited.headers["retry-after-ms"] == "250"
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    bad = _post(server, body, **{"x-mock-fault": "explode"})
    assert bad.status_code == 400 and "explode" in bad.json()["error"]["message"]
    stats = server.stats()
    assert stats.requests == 5
    assert stats.by_status == {"500": 2, "200": 1, "429": 1, "400": 1}


def test_latency_fault(server: MockServerHandle) -> None:
    body = {"model": "mock-echo", "messages": [{"role": "user", "content": "x"}]}
    t0 = time.monotonic()
    assert _post(server, body, **{"x-mock-fault": "latency=200"}).status_code == 200
    assert time.monotonic() - t0 >= 0.2


def test_timeout_fault_stalls_past_the_client_timeout(server: MockServerHandle) -> None:
    body = {"model": "mock-echo", "messages": [{"role": "user", "content": "x"}]}
    t0 = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            f"{server.url}/chat/completions",
            json=body,
            headers={"x-mock-fault": "timeout,timeout-sleep=20"},
            timeout=0.3,
        )
    assert time.monotonic() - t0 < 2
    # The server notices the hang-up and frees the request well before its 20 s stall.
    deadline = time.monotonic() + 3
    while server.stats().in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    stats = server.stats()
    assert stats.in_flight == 0
    assert stats.by_fault == {"timeout": 1}


def test_fault_rates_are_deterministic_by_seed() -> None:
    config = FaultConfig(rate_429=0.2, rate_500=0.1, rate_timeout=0.05, seed=7)

    def kinds(planner: FaultPlanner) -> list[str]:
        return [planner.decide(None, "same-body").kind for _ in range(2000)]

    first = kinds(FaultPlanner(config))
    assert first == kinds(FaultPlanner(config))
    assert first != kinds(FaultPlanner(config.model_copy(update={"seed": 8})))
    share = {k: first.count(k) / len(first) for k in ("429", "500", "timeout")}
    assert abs(share["429"] - 0.2) < 0.04
    assert abs(share["500"] - 0.1) < 0.03
    assert abs(share["timeout"] - 0.05) < 0.02


def test_fault_header_grammar() -> None:
    override = parse_fault_header("500*3; latency=10-20, retry-after=none, rate-429=0.5")
    assert override.forced == "500" and override.forced_times == 3
    assert override.config_update == {
        "latency_ms": 10.0,
        "latency_ms_max": 20.0,
        "retry_after_s": None,
        "rate_429": 0.5,
    }
    with pytest.raises(ValueError, match="bad count"):
        parse_fault_header("429*many")
    with pytest.raises(ValueError):
        FaultConfig(rate_429=0.7, rate_500=0.7)


def test_scripts_dir_loads_yaml_and_json_and_names_bad_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("replies:\n  - content: hi\n", encoding="utf-8")
    (tmp_path / "b.json").write_text(
        json.dumps({"policy": "tool_sequence", "tool_calls": [], "final": "done"}),
        encoding="utf-8",
    )
    scripts = load_scripts_dir(tmp_path)
    assert isinstance(scripts["a"], ScriptedScript)
    assert isinstance(scripts["b"], ToolSequenceScript)
    (tmp_path / "c.yaml").write_text("replies:\n  - {}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c\.yaml"):
        load_scripts_dir(tmp_path)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_module_main_serves_until_terminated() -> None:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchforge.agents.mock_llm",
            "--port",
            str(port),
            "--latency-ms",
            "1-5",
        ],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 20
        while True:
            try:
                response = httpx.get(f"{url}/models", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                assert time.monotonic() < deadline, "mock server did not start"
                time.sleep(0.1)
        assert response.headers[MOCK_HEADER] == "1"
        body = {"model": "mock-echo", "messages": [{"role": "user", "content": "cli"}]}
        answer = httpx.post(f"{url}/chat/completions", json=body, timeout=5).json()
        assert answer["choices"][0]["message"]["content"] == "cli"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert f"http://127.0.0.1:{port}/v1" in out

"""The mock's FastAPI app: ``POST /v1/chat/completions``, ``POST /v1/embeddings`` (hashed
bag-of-words vectors, :func:`hashed_embedding`), ``GET /v1/models``, and
``GET /mock/stats`` / ``POST /mock/reset`` for tests and demos.

Every response carries ``x-benchforge-mock: 1``; every completion has
``system_fingerprint: "benchforge-mock"``, so a report can say a run used the mock.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from benchforge.agents.mock_llm.config import MockServerConfig
from benchforge.agents.mock_llm.faults import FAULT_HEADER, FaultDecision, FaultPlanner
from benchforge.agents.mock_llm.policies import (
    Policy,
    PolicyError,
    PolicyReply,
    PolicyRequest,
    PolicyResolver,
    message_text,
)

MOCK_HEADER = "x-benchforge-mock"
MOCK_FINGERPRINT = "benchforge-mock"


class MockStats(BaseModel):
    """Counters of chat-completion requests since start (or the last reset)."""

    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    by_status: dict[str, int] = Field(default_factory=dict)
    by_model: dict[str, int] = Field(default_factory=dict)
    by_fault: dict[str, int] = Field(default_factory=dict)
    arrivals_s: list[float] = Field(
        default_factory=list, description="arrival times, seconds since start or reset"
    )


class MockState:
    """Live state of one server; thread-safe (tests read it from their own thread)."""

    def __init__(self, config: MockServerConfig, resolver: PolicyResolver) -> None:
        self.config = config
        self.resolver = resolver
        self.faults = FaultPlanner(config.faults)
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._reset_counters()

    def _reset_counters(self) -> None:
        self._t0 = time.monotonic()
        self._requests = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._by_status: Counter[str] = Counter()
        self._by_model: Counter[str] = Counter()
        self._by_fault: Counter[str] = Counter()
        self._arrivals: list[float] = []

    def reset(self) -> None:
        with self._lock:
            self._reset_counters()
        self.faults.reset()

    def stats(self) -> MockStats:
        with self._lock:
            return MockStats(
                requests=self._requests,
                in_flight=self._in_flight,
                max_in_flight=self._max_in_flight,
                by_status=dict(self._by_status),
                by_model=dict(self._by_model),
                by_fault=dict(self._by_fault),
                arrivals_s=list(self._arrivals),
            )

    def enter(self, model: str) -> None:
        with self._lock:
            self._requests += 1
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            self._by_model[model] += 1
            self._arrivals.append(time.monotonic() - self._t0)

    def leave(self, status: int, fault: str) -> None:
        with self._lock:
            self._in_flight -= 1
            self._by_status[str(status)] += 1
            self._by_fault[fault] += 1


class _ChatRequest(BaseModel):
    """The fields the mock reads; every other field is accepted and ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    stream: bool | None = None


class _EmbeddingRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str
    input: str | list[str]


EMBEDDING_DIMENSIONS = 256
_WORD = re.compile(r"[a-z0-9]+")


def hashed_embedding(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic unit vector for ``text``: its lower-cased words (and the pieces of
    ``snake_case`` names) hashed into ``dimensions`` buckets. Texts sharing words are close,
    which is all a retrieval test needs; no model, no randomness."""
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big")
        vector[bucket % dimensions] += 1.0
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


class _MockHeaderMiddleware:
    """Adds ``x-benchforge-mock: 1`` to every HTTP response (errors and 404s included)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((MOCK_HEADER.encode(), b"1"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_header)


def _error(
    status: int, message: str, *, code: str, kind: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


def _tokens(text: str) -> int:
    """Rough token count: four characters a token (deterministic, not a tokenizer)."""
    return (len(text) + 3) // 4


def create_app(
    config: MockServerConfig | None = None, *, policies: Mapping[str, Policy] | None = None
) -> FastAPI:
    """The ASGI app; ``app.state.mock`` is its ``MockState``. ``policies`` adds custom
    policies by exact model name."""
    config = config or MockServerConfig()
    catalog = config.catalog()
    resolver = PolicyResolver(
        catalog.scripts,
        custom=policies,
        fallback_model=config.fallback_model,
        unavailable=catalog.unavailable,
        judge_labels_file=config.judge_labels_file,
    )
    state = MockState(config, resolver)
    app = FastAPI(title="benchforge mock LLM", docs_url=None, redoc_url=None)
    app.state.mock = state
    app.add_middleware(_MockHeaderMiddleware)

    @app.get("/v1/models")
    async def list_models() -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "benchforge-mock"}
                for name in resolver.model_names()
            ],
        }

    @app.get("/mock/stats")
    async def stats() -> MockStats:
        return state.stats()

    @app.post("/mock/reset")
    async def reset() -> dict[str, bool]:
        state.reset()
        return {"reset": True}

    @app.post("/v1/embeddings")
    async def embeddings(request: Request) -> JSONResponse:
        try:
            parsed = _EmbeddingRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            return _error(
                400, f"invalid request: {exc}", code="invalid_request", kind="invalid_request_error"
            )
        texts = [parsed.input] if isinstance(parsed.input, str) else parsed.input
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_embedding(text)}
            for i, text in enumerate(texts)
        ]
        tokens = sum(_tokens(text) for text in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return JSONResponse({"object": "list", "data": data, "model": parsed.model, "usage": usage})

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> JSONResponse:
        raw = await request.body()
        try:
            parsed = _ChatRequest.model_validate_json(raw)
        except ValidationError as exc:
            return _error(
                400, f"invalid request: {exc}", code="invalid_request", kind="invalid_request_error"
            )
        state.enter(parsed.model)
        status, fault = 500, "none"
        try:
            header = request.headers.get(FAULT_HEADER)
            fingerprint = hashlib.sha256(raw + b"\0" + (header or "").encode()).hexdigest()
            try:
                decision = state.faults.decide(header, fingerprint)
            except ValueError as exc:
                status = 400
                return _error(400, str(exc), code="bad_fault_header", kind="invalid_request_error")
            fault = decision.kind
            response = await _answer(state, request, parsed, decision)
            status = response.status_code
            return response
        finally:
            state.leave(status, fault)

    return app


async def _answer(
    state: MockState, request: Request, parsed: _ChatRequest, decision: FaultDecision
) -> JSONResponse:
    if decision.latency_s > 0:
        await asyncio.sleep(decision.latency_s)
    if decision.kind == "timeout":
        await _stall(state, request, decision.timeout_sleep_s)
        return _error(504, "mock timeout fault", code="timeout", kind="server_error")
    if decision.kind == "429":
        headers: dict[str, str] = {}
        if decision.retry_after_s is not None:
            headers["retry-after"] = f"{decision.retry_after_s:g}"
            headers["retry-after-ms"] = f"{decision.retry_after_s * 1000:.0f}"
        return _error(
            429,
            "mock rate limit fault",
            code="rate_limit_exceeded",
            kind="requests",
            headers=headers,
        )
    if decision.kind == "500":
        return _error(500, "mock server error fault", code="server_error", kind="server_error")
    if parsed.stream:
        return _error(
            400,
            "the benchforge mock does not stream",
            code="unsupported",
            kind="invalid_request_error",
        )
    policy_request = PolicyRequest(
        model=parsed.model,
        messages=parsed.messages,
        tools=parsed.tools or [],
        headers={name.lower(): value for name, value in request.headers.items()},
    )
    try:
        policy = state.resolver.resolve(policy_request)
        reply = policy.reply(policy_request)
        _check_tools(policy_request, reply)
    except PolicyError as exc:
        return _error(exc.status, str(exc), code=exc.code, kind="invalid_request_error")
    return JSONResponse(_completion(policy_request, reply, decision.arrival))


async def _stall(state: MockState, request: Request, seconds: float) -> None:
    """Sleep ``seconds``, or less when the client hangs up or the server stops."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not state.stopping.is_set():
        if await request.is_disconnected():
            return
        await asyncio.sleep(min(0.05, max(deadline - time.monotonic(), 0.0)))


def _check_tools(request: PolicyRequest, reply: PolicyReply) -> None:
    offered = request.offered_tools()
    for call in reply.tool_calls:
        if call.name not in offered:
            raise PolicyError(
                f"the policy calls tool {call.name!r}, which the request does not offer "
                f"(offered: {', '.join(sorted(offered)) or 'none'})",
                code="tool_not_offered",
            )


def _completion(request: PolicyRequest, reply: PolicyReply, arrival: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    prompt_text = "".join(message_text(m) for m in request.messages)
    prompt_tokens = _tokens(prompt_text) + 3 * len(request.messages)
    if request.tools:
        prompt_tokens += _tokens(json.dumps(request.tools, sort_keys=True))
    completion_tokens = _tokens(reply.content or "") + sum(
        _tokens(c.name) + _tokens(c.arguments) for c in reply.tool_calls
    )
    return {
        "id": f"chatcmpl-mock-{arrival}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "system_fingerprint": MOCK_FINGERPRINT,
        "choices": [
            {"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }

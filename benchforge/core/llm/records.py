"""What one LLM call returns and records: LlmResponse, LlmCallRecord, and the LlmLedger."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

MOCK_FINGERPRINT = "benchforge-mock"
"""``system_fingerprint`` of every answer from ``benchforge.agents.mock_llm``."""


class LlmToolCall(BaseModel):
    """A tool call requested by the model. ``arguments`` is the JSON text as the model wrote
    it (it may be invalid JSON: that is the agent's mistake to record, not ours to fix)."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str
    type: Literal["function", "custom"] = "function"

    def parsed_arguments(self) -> Any:
        """``arguments`` decoded; raises ``json.JSONDecodeError`` when it is not JSON."""
        return json.loads(self.arguments) if self.arguments.strip() else {}


class LlmUsage(BaseModel):
    model_config = ConfigDict(frozen=True)

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cached_prompt_tokens: int = 0


class LlmCallRecord(BaseModel):
    """One call as the ledger (and a trajectory) keeps it.

    ``attempts`` counts HTTP requests sent (0 on a cache hit). ``cost_usd`` is the money this
    call spent: None when the model is not in the price table, 0.0 on a cache hit.
    ``latency_s`` is wall time from the call to its answer, retries and waits included.
    """

    model_config = ConfigDict(frozen=True)

    role: str
    model: str
    base_url: str
    response_model: str | None = None
    system_fingerprint: str | None = None
    started_at: datetime
    latency_s: float
    attempts: int
    status: Literal["ok", "error"]
    http_status: int | None = None
    error: str | None = None
    cache_hit: bool = False
    cache_key: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_prompt_tokens: int = 0
    cost_usd: float | None = None
    epoch: int = 0

    @property
    def used_mock(self) -> bool:
        return self.system_fingerprint == MOCK_FINGERPRINT

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class LlmResponse(BaseModel):
    """The assistant's reply to one chat completion request."""

    model_config = ConfigDict(frozen=True)

    content: str | None
    tool_calls: list[LlmToolCall] = Field(default_factory=list)
    finish_reason: str
    usage: LlmUsage
    record: LlmCallRecord

    def assistant_message(self) -> dict[str, Any]:
        """The reply as an OpenAI chat message, to append to the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                if c.type == "function"
                else {
                    "id": c.id,
                    "type": "custom",
                    "custom": {"name": c.name, "input": c.arguments},
                }
                for c in self.tool_calls
            ]
        return message


class LlmEmbedding(BaseModel):
    """Vectors of one embeddings request, in the order of its texts, and its record."""

    model_config = ConfigDict(frozen=True)

    vectors: list[list[float]]
    record: LlmCallRecord


class LlmTotals(BaseModel):
    """Sums over a ledger. ``cost_usd`` covers priced calls only; ``unpriced_calls`` says how
    many calls it leaves out (a model missing from the price table), so a partial sum is
    never mistaken for the whole."""

    calls: int = 0
    errors: int = 0
    cache_hits: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    def __add__(self, other: LlmTotals) -> LlmTotals:
        return LlmTotals(
            **{name: getattr(self, name) + getattr(other, name) for name in LlmTotals.model_fields}
        )

    @property
    def sent(self) -> int:
        """Calls that reached the endpoint (failures included): every call but cache hits."""
        return self.calls - self.cache_hits

    @property
    def known_cost_usd(self) -> float | None:
        """The cost, or None as soon as one call is unpriced (a partial sum is not the cost)."""
        return None if self.unpriced_calls else self.cost_usd


class LlmCall(Protocol):
    """What the totals read of one model call: a ledger's ``LlmCallRecord``, or a ``model``
    step of a trajectory that an agent recorded itself."""

    @property
    def ok(self) -> bool: ...

    @property
    def cache_hit(self) -> bool | None: ...

    @property
    def attempts(self) -> int | None: ...

    @property
    def prompt_tokens(self) -> int | None: ...

    @property
    def completion_tokens(self) -> int | None: ...

    @property
    def cost_usd(self) -> float | None: ...


def llm_totals(calls: Iterable[LlmCall]) -> LlmTotals:
    """The one sum over model calls, used for trials (agent and view), judge records, judging
    runs and calibration. A failed call counts as an error and is never unpriced; a cache hit
    costs 0.0."""
    totals = LlmTotals()
    for call in calls:
        totals.calls += 1
        totals.errors += not call.ok
        totals.cache_hits += bool(call.cache_hit)
        totals.attempts += call.attempts or 0
        totals.prompt_tokens += call.prompt_tokens or 0
        totals.completion_tokens += call.completion_tokens or 0
        if call.cost_usd is not None:
            totals.cost_usd += call.cost_usd
        elif call.ok:
            totals.unpriced_calls += 1
    return totals


class LlmLedger:
    """Thread-safe, in-memory list of call records; share one between clients to sum a run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[LlmCallRecord] = []

    def append(self, record: LlmCallRecord) -> None:
        with self._lock:
            self._records.append(record)

    def records(self) -> list[LlmCallRecord]:
        with self._lock:
            return list(self._records)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def used_mock(self) -> bool:
        """Whether any call was answered by the mock LLM server."""
        return any(r.used_mock for r in self.records())

    def totals(self) -> LlmTotals:
        return llm_totals(self.records())

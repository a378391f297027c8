"""LlmClientView: one trial's (or one caller's) window onto a shared ``LlmClient``.

Agents and judges call models through views alike: a trial's agent through the view the
harness gives it, a judge through the view of the task it judges (``Judge.for_task``).

The shared client keeps the one retry layer, the per-model limits, the response cache and the
run-wide ledger. A view sends every call through it and also records the call itself:

- in its own ``ledger`` (an ``LlmLedger``): calls, errors, tokens, cost, unpriced calls and mock
  use of this trial only, so the harness reads them from the ledger, not from what the agent
  chose to record;
- as a ``model`` step of the trial's trajectory (any ``StepRecorder``), whether the call
  succeeds, fails, or is cut short (a call still in flight when the trial stops is left to the
  recorder, which records it as interrupted).

    view = LlmClientView(client, steps=trajectory, epoch=2)
    reply = await view.complete(messages, tools=tools)   # epoch 2, recorded twice
    view.ledger.totals().cost_usd, view.ledger.used_mock()
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from benchforge.core.llm.errors import LlmError, LlmRequestError
from benchforge.core.llm.records import LlmCallRecord, LlmEmbedding, LlmLedger, LlmResponse

if TYPE_CHECKING:
    from benchforge.core.llm.config import LlmConfig

Message = Mapping[str, Any]


class ChatClient(Protocol):
    """What a view calls: ``LlmClient`` (a test may pass an in-process stand-in)."""

    @property
    def config(self) -> LlmConfig: ...

    @property
    def ledger(self) -> LlmLedger: ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = ...,
        tool_choice: str | Mapping[str, Any] | None = ...,
        epoch: int = ...,
        temperature: float | None = ...,
        max_tokens: int | None = ...,
        extra_body: Mapping[str, Any] | None = ...,
        extra_headers: Mapping[str, str] | None = ...,
    ) -> LlmResponse: ...


@runtime_checkable
class Embedder(Protocol):
    """A client that also serves embeddings (``LlmClient``)."""

    async def embed(self, texts: Sequence[str], *, model: str | None = ...) -> LlmEmbedding: ...


class StepRecorder(Protocol):
    """Where a view appends its model steps (a trial's ``Trajectory``).

    ``start`` marks a step in flight (``by_client=True``: the view records it, not the agent)
    and returns a token; ``step`` records it as ended now with the given fields."""

    def start(
        self,
        kind: Literal["model", "tool"] | None = ...,
        name: str | None = ...,
        *,
        by_client: bool = ...,
        **fields: Any,
    ) -> Any: ...

    def step(
        self, kind: Literal["model", "tool"], name: str, started: Any, **fields: Any
    ) -> Any: ...


class LlmClientView:
    """Calls through a shared client, with this view's own ledger and step recording.

    ``epoch`` is the default sample index sent to the client (it tells repeated samples of one
    prompt apart in the cache); ``steps``, when given, receives one model step per call."""

    def __init__(
        self,
        client: ChatClient,
        *,
        steps: StepRecorder | None = None,
        epoch: int = 0,
        ledger: LlmLedger | None = None,
    ) -> None:
        self.client = client
        self.steps = steps
        self.epoch = epoch
        self.ledger = ledger if ledger is not None else LlmLedger()

    @property
    def config(self) -> LlmConfig:
        return self.client.config

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        epoch: int | None = None,
        role: str | None = None,
        **kwargs: Any,
    ) -> LlmResponse:
        """``LlmClient.complete`` (same arguments; ``epoch`` defaults to the view's), recorded
        in this view's ledger and, as a model step, by its recorder. ``role``: which part of
        the agent calls (recorded on the step; e.g. ds-star's planner)."""
        model = self.config.model
        epoch = self.epoch if epoch is None else epoch
        started = None
        if self.steps is not None:
            started = self.steps.start("model", model, by_client=True, role=role)
        started_at, t0 = datetime.now(UTC), time.monotonic()
        try:
            response = await self.client.complete(messages, tools=tools, epoch=epoch, **kwargs)
        except LlmError as exc:
            error = f"{type(exc).__name__}: {exc}"
            self.ledger.append(
                exc.record or self._failed(started_at, t0, error, exc.attempts, epoch)
            )
            if self.steps is not None:
                self.steps.step(
                    "model",
                    model,
                    started,
                    role=role,
                    ok=False,
                    attempts=exc.record.attempts if exc.record else None,
                    error=error,
                )
            raise
        except BaseException as exc:  # cancelled (the trial's wall clock) or a bug: a failed
            # call in the ledger; the step stays in flight and the recorder closes it
            self.ledger.append(self._failed(started_at, t0, f"interrupted: {exc!r}", 0, epoch))
            raise
        record = response.record
        self.ledger.append(record)
        if self.steps is not None:
            self.steps.step(
                "model",
                model,
                started,
                role=role,
                output=response.content,
                tool_calls=[c.model_dump() for c in response.tool_calls],
                prompt_tokens=record.prompt_tokens,
                completion_tokens=record.completion_tokens,
                cost_usd=record.cost_usd,
                attempts=record.attempts,
                cache_hit=record.cache_hit,
                used_mock=record.used_mock,
            )
        return response

    async def embed(
        self, texts: Sequence[str], *, model: str | None = None, role: str | None = None
    ) -> LlmEmbedding:
        """Embeddings through the shared client (``LlmClient.embed``), recorded like a chat
        call: in this view's ledger and as a model step (its output: how many vectors).
        Raises ``LlmRequestError`` when the client serves no embeddings."""
        if not isinstance(self.client, Embedder):
            raise LlmRequestError(
                f"{type(self.client).__name__} serves no embeddings", attempts=0, last_status=None
            )
        name = model or self.config.model
        started = None
        if self.steps is not None:
            started = self.steps.start("model", name, by_client=True, role=role)
        started_at, t0 = datetime.now(UTC), time.monotonic()
        try:
            embedding = await self.client.embed(texts, model=model)
        except LlmError as exc:
            error = f"{type(exc).__name__}: {exc}"
            self.ledger.append(
                exc.record or self._failed(started_at, t0, error, exc.attempts, self.epoch)
            )
            if self.steps is not None:
                self.steps.step("model", name, started, role=role, ok=False, error=error)
            raise
        except BaseException as exc:
            self.ledger.append(self._failed(started_at, t0, f"interrupted: {exc!r}", 0, self.epoch))
            raise
        record = embedding.record
        self.ledger.append(record)
        if self.steps is not None:
            self.steps.step(
                "model",
                name,
                started,
                role=role,
                output=f"{len(embedding.vectors)} embeddings",
                prompt_tokens=record.prompt_tokens,
                completion_tokens=record.completion_tokens,
                cost_usd=record.cost_usd,
                attempts=record.attempts,
                used_mock=record.used_mock,
            )
        return embedding

    def _failed(
        self, started_at: datetime, t0: float, error: str, attempts: int, epoch: int
    ) -> LlmCallRecord:
        """A ledger record of a call that left no record of its own."""
        config = self.config
        return LlmCallRecord(
            role=config.role,
            model=config.model,
            base_url=config.normalized_base_url,
            started_at=started_at,
            latency_s=time.monotonic() - t0,
            attempts=attempts,
            status="error",
            epoch=epoch,
            error=error,
        )

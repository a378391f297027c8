"""The judge's handle on the project's one LLM client stack.

A ``Judge`` calls models through an ``LlmClientView``, as an agent does: the shared
``LlmClient`` keeps the one retry layer, the per-model limits, the response cache and the
run-wide ledger (``client_totals``); the view's own ledger holds this judge's calls
(``for_task``: one task's), so one task's judging cost and calls are known. Judges are async
(``complete`` is awaited on the caller's loop); the judges' synchronous entry points
(``judge_rubric``, ...) run them with ``Judge.run`` on the process's one LLM loop. Judges are
deterministic by default (temperature 0) and cache every reply: re-scoring an unchanged output
sends nothing.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.llm import (
    LlmClientView,
    LlmConfig,
    LlmLedger,
    LlmResponse,
    LlmTotals,
    run_blocking,
)
from benchforge.evaluation.judges.models import JudgeMode

Message = Mapping[str, Any]
T = TypeVar("T")
DEFAULT_JUDGE_MODEL = "gpt-4.1-mini"
MOCK_JUDGE_MODEL = "mock-judge"  # the mock server's faithful judge policy


class JudgeSettings(BaseModel):
    """How judged outputs are judged; part of every judged score's identity."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: JudgeMode = Field(
        default="per_item", description="per_item: one call per rubric item; batched: per path"
    )
    max_attempts: int = Field(
        default=3, ge=1, description="replies that fail validation are retried with the error"
    )
    gsb_alpha: float = Field(default=0.8, ge=0, le=1, description="Score_da = a*rubric+(1-a)*gsb")
    temperature: float | None = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    json_schema: bool = Field(
        default=True, description="send the reply's JSON schema as response_format"
    )


class Judge:
    """A view of the shared client (its ledger: this judge's calls), settings and headers."""

    def __init__(
        self,
        llm: LlmClientView,
        settings: JudgeSettings | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.llm = llm
        self.settings = settings or JudgeSettings()
        self.headers = dict(headers or {})

    @property
    def config(self) -> LlmConfig:
        return self.llm.config

    @property
    def model(self) -> str:
        return self.llm.config.model

    @property
    def ledger(self) -> LlmLedger:
        """This judge's calls (its view's ledger)."""
        return self.llm.ledger

    def for_task(self) -> Judge:
        """The same client and settings through a fresh view (one task's calls); the client's
        ledger keeps every call too (a scoring run's totals, ``client_totals``)."""
        view = LlmClientView(self.llm.client, steps=self.llm.steps, epoch=self.llm.epoch)
        return Judge(view, self.settings, self.headers)

    def at_epoch(self, epoch: int) -> Judge:
        """The same judge (same ledger) sending every call with ``epoch`` (a fresh sample,
        cached apart): calibration's repeats."""
        view = LlmClientView(
            self.llm.client, steps=self.llm.steps, epoch=epoch, ledger=self.llm.ledger
        )
        return Judge(view, self.settings, self.headers)

    def with_headers(self, headers: Mapping[str, str]) -> Judge:
        """The same judge (same ledger) sending ``headers`` with every call (not part of the
        cache key): calibration tags each request with its case id for the mock's noisy
        judges."""
        return Judge(self.llm, self.settings, {**self.headers, **headers})

    async def complete(self, messages: Sequence[Message], **kwargs: Any) -> LlmResponse:
        """One call through the view (its record lands in the view's ledger, failures
        included); ``LlmError`` propagates to the judge, which leaves the item unscored."""
        kwargs.setdefault("temperature", self.settings.temperature)
        if self.settings.max_tokens is not None:
            kwargs.setdefault("max_tokens", self.settings.max_tokens)
        if self.headers:
            kwargs["extra_headers"] = {**self.headers, **kwargs.get("extra_headers", {})}
        return await self.llm.complete(messages, **kwargs)

    @staticmethod
    def run(coroutine: Coroutine[Any, Any, T]) -> T:
        """A judging coroutine run to its end for a synchronous caller, on the LLM loop."""
        return run_blocking(coroutine)

    def totals(self) -> LlmTotals:
        """Sums over this judge's calls."""
        return self.ledger.totals()

    def client_totals(self) -> LlmTotals:
        """Sums over every call made through the shared client (every task's judge of a
        scoring run)."""
        return self.llm.client.ledger.totals()

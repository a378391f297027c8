"""The judge's handle on the project's one LLM client.

A ``Judge`` sends every call through a shared blocking client (``SyncLlmClient``: the one retry
layer, the per-model limits, the response cache, the run-wide ledger) and also keeps its own
``ledger``, so one task's judging cost and calls are known. Judges are deterministic by
default (temperature 0) and cache every reply: re-scoring an unchanged output sends nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.llm import (
    LlmCallRecord,
    LlmConfig,
    LlmError,
    LlmLedger,
    LlmResponse,
    LlmTotals,
)
from benchforge.evaluation.judges.models import JudgeMode

Message = Mapping[str, Any]
DEFAULT_JUDGE_MODEL = "gpt-4.1-mini"
MOCK_JUDGE_MODEL = "mock-judge"  # the mock server's faithful judge policy


class JudgeLlm(Protocol):
    """What a judge needs of a client (``SyncLlmClient`` is one)."""

    @property
    def config(self) -> LlmConfig: ...

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> LlmResponse: ...


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
    """A shared client plus this judge's own ledger of calls."""

    def __init__(
        self,
        llm: JudgeLlm,
        settings: JudgeSettings | None = None,
        ledger: LlmLedger | None = None,
        headers: Mapping[str, str] | None = None,
        parents: Sequence[LlmLedger] = (),
    ) -> None:
        self.llm = llm
        self.settings = settings or JudgeSettings()
        self.ledger = ledger if ledger is not None else LlmLedger()
        self.headers = dict(headers or {})
        self._parents = tuple(parents)  # ledgers of the judges this one was made from

    @property
    def model(self) -> str:
        return self.llm.config.model

    def for_task(self) -> Judge:
        """The same client and settings with a fresh ledger (one task's calls); its calls are
        recorded in this judge's ledger too (a scoring run's totals)."""
        return Judge(
            self.llm, self.settings, headers=self.headers, parents=(self.ledger, *self._parents)
        )

    def with_headers(self, headers: Mapping[str, str]) -> Judge:
        """The same judge (same ledger) sending ``headers`` with every call (not part of the
        cache key): calibration tags each request with its case id for the mock's noisy
        judges."""
        return Judge(
            self.llm, self.settings, self.ledger, {**self.headers, **headers}, self._parents
        )

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> LlmResponse:
        """One call; its record lands in this ledger too (failures included) and
        ``LlmError`` propagates to the judge, which leaves the item unscored."""
        kwargs.setdefault("temperature", self.settings.temperature)
        if self.settings.max_tokens is not None:
            kwargs.setdefault("max_tokens", self.settings.max_tokens)
        if self.headers:
            kwargs["extra_headers"] = {**self.headers, **kwargs.get("extra_headers", {})}
        try:
            response = self.llm.complete(messages, **kwargs)
        except LlmError as exc:
            if exc.record is not None:
                self._record(exc.record)
            raise
        self._record(response.record)
        return response

    def _record(self, record: LlmCallRecord) -> None:
        for ledger in (self.ledger, *self._parents):
            ledger.append(record)

    def totals(self) -> LlmTotals:
        return self.ledger.totals()

"""The judge a scoring run uses: which endpoint and model, its response cache, its totals.

Judged families (``TaskFamily.judged``) are scored through one ``Judge`` per scoring run: an
``LlmClient`` of role ``judge`` on the configured OpenAI-compatible endpoint, or, with no
API key, on the Benchforge mock server started here (its ``mock-judge`` policy); each task is
judged through its own view of it (``Judge.for_task``), the run's totals are the client's
ledger. Judging runs on the process's one LLM loop. Every reply
is kept in a response cache under the scratch space (``<work>/llm-cache/judge``), which
outlives the run: scoring unchanged outputs again sends no request.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig, LlmTotals, run_blocking
from benchforge.core.settings import BenchforgeSettings
from benchforge.evaluation.judges.client import (
    DEFAULT_JUDGE_MODEL,
    MOCK_JUDGE_MODEL,
    Judge,
    JudgeSettings,
)
from benchforge.harness.endpoints import MOCK_API_KEY, llm_endpoint, uses_mock


class JudgeUsage(BaseModel):
    """What a scoring run's judge did: printed by the CLI, kept in the summary."""

    model: str
    mock: bool
    requests: int = 0  # sent to the endpoint
    cache_hits: int = 0
    errors: int = 0
    cost_usd: float | None = None

    @classmethod
    def of(cls, judge: Judge, mock: bool) -> JudgeUsage:
        totals: LlmTotals = judge.client_totals()
        return cls(
            model=judge.model,
            mock=mock,
            requests=totals.sent,
            cache_hits=totals.cache_hits,
            errors=totals.errors,
            cost_usd=totals.known_cost_usd,
        )

    def plus(self, other: JudgeUsage | None) -> JudgeUsage:
        """Both judges' usage (chunks scored apart, on the workers of a cluster)."""
        if other is None:
            return self
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return self.model_copy(
            update={
                "requests": self.requests + other.requests,
                "cache_hits": self.cache_hits + other.cache_hits,
                "errors": self.errors + other.errors,
                "cost_usd": sum(costs) if costs else None,
            }
        )

    def line(self) -> str:
        where = " (the Benchforge mock LLM server)" if self.mock else ""
        cost = f", ${self.cost_usd:.4f}" if self.cost_usd else ""
        return (
            f"judge {self.model}{where}: {self.requests} LLM requests sent, "
            f"{self.cache_hits} answered from the response cache{cost}"
        )


def judge_model_for(settings: BenchforgeSettings, model: str | None, mock: bool) -> str:
    if model:
        return model
    return MOCK_JUDGE_MODEL if mock else DEFAULT_JUDGE_MODEL


@contextmanager
def open_judge(config: LlmConfig, judge_settings: JudgeSettings | None = None) -> Iterator[Judge]:
    """A judge on a new ``LlmClient`` of ``config`` (its ledger: every call of this judge and
    of the judges made from it); the client is closed on the LLM loop after."""
    client = LlmClient(config)
    try:
        yield Judge(LlmClientView(client), judge_settings)
    finally:
        run_blocking(client.aclose())


@contextmanager
def judge_session(
    settings: BenchforgeSettings,
    work: Path,
    *,
    model: str | None = None,
    judge_settings: JudgeSettings | None = None,
    concurrency: int = 8,
) -> Iterator[tuple[Judge, bool]]:
    """Yields (the run's judge, whether it talks to the mock server); closes it after."""
    mock = uses_mock(settings, True)
    with llm_endpoint(settings, mock) as base_url:
        overrides: dict[str, object] = {
            "concurrency": concurrency,
            "cache_dir": work / "llm-cache" / "judge",
        }
        if base_url:
            overrides["base_url"] = base_url
        if mock:
            overrides["api_key"] = MOCK_API_KEY
            overrides["cache_endpoint"] = "benchforge-mock-server"
        config = LlmConfig.from_settings(
            settings, role="judge", model=judge_model_for(settings, model, mock), **overrides
        )
        with open_judge(config, judge_settings) as judge:
            yield judge, mock

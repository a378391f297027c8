"""The LLM client used by every agent and judge: OpenAI SDK, one retry layer, per-model
limits, response cache, token and cost accounting.

    config = LlmConfig.from_settings(load_settings(), role="agent", model="gpt-4.1-mini")
    async with LlmClient(config) as llm:
        reply = await llm.complete([{"role": "user", "content": "hi"}], tools=tools)
        reply.content, reply.tool_calls, reply.record.cost_usd
        trial = LlmClientView(llm, steps=trajectory, epoch=0)  # its own ledger and steps
        await trial.complete(messages)  # agents and judges alike
        trial.ledger.totals()  # llm_totals: the one sum over calls (records or model steps)

A caller that is not async runs its coroutine with ``run_blocking`` on the process's one LLM
loop (``loop.py``); there is no blocking client.
"""

from benchforge.core.llm.cache import ResponseCache
from benchforge.core.llm.client import LlmClient, retry_after_seconds
from benchforge.core.llm.config import OPENAI_DEFAULT_BASE_URL, LlmConfig
from benchforge.core.llm.errors import LlmError, LlmInfrastructureError, LlmRequestError
from benchforge.core.llm.limits import ModelLimiter, SharedSemaphore, TokenBucket, limiter_for
from benchforge.core.llm.loop import llm_loop, run_blocking
from benchforge.core.llm.prices import ModelPrice, PriceTable, load_price_table
from benchforge.core.llm.records import (
    MOCK_FINGERPRINT,
    LlmCall,
    LlmCallRecord,
    LlmEmbedding,
    LlmLedger,
    LlmResponse,
    LlmToolCall,
    LlmTotals,
    LlmUsage,
    llm_totals,
)
from benchforge.core.llm.view import ChatClient, LlmClientView, StepRecorder

__all__ = [
    "MOCK_FINGERPRINT",
    "OPENAI_DEFAULT_BASE_URL",
    "ChatClient",
    "LlmCall",
    "LlmCallRecord",
    "LlmClient",
    "LlmClientView",
    "LlmConfig",
    "LlmEmbedding",
    "LlmError",
    "LlmInfrastructureError",
    "LlmLedger",
    "LlmRequestError",
    "LlmResponse",
    "LlmToolCall",
    "LlmTotals",
    "LlmUsage",
    "ModelLimiter",
    "ModelPrice",
    "PriceTable",
    "ResponseCache",
    "SharedSemaphore",
    "StepRecorder",
    "TokenBucket",
    "limiter_for",
    "llm_loop",
    "llm_totals",
    "load_price_table",
    "retry_after_seconds",
    "run_blocking",
]

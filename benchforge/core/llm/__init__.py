"""The LLM client used by every agent and judge: OpenAI SDK, one retry layer, per-model
limits, response cache, token and cost accounting.

    config = LlmConfig.from_settings(load_settings(), role="agent", model="gpt-4.1-mini")
    async with LlmClient(config) as llm:
        reply = await llm.complete([{"role": "user", "content": "hi"}], tools=tools)
        reply.content, reply.tool_calls, reply.record.cost_usd
        trial = LlmClientView(llm, steps=trajectory, epoch=0)  # its own ledger and steps
"""

from benchforge.core.llm.cache import ResponseCache
from benchforge.core.llm.client import LlmClient, SyncLlmClient, retry_after_seconds
from benchforge.core.llm.config import OPENAI_DEFAULT_BASE_URL, LlmConfig
from benchforge.core.llm.errors import LlmError, LlmInfrastructureError, LlmRequestError
from benchforge.core.llm.limits import ModelLimiter, SharedSemaphore, TokenBucket, limiter_for
from benchforge.core.llm.prices import ModelPrice, PriceTable, load_price_table
from benchforge.core.llm.records import (
    MOCK_FINGERPRINT,
    LlmCallRecord,
    LlmLedger,
    LlmResponse,
    LlmToolCall,
    LlmTotals,
    LlmUsage,
)
from benchforge.core.llm.view import LlmClientView, StepRecorder

__all__ = [
    "MOCK_FINGERPRINT",
    "OPENAI_DEFAULT_BASE_URL",
    "LlmCallRecord",
    "LlmClient",
    "LlmClientView",
    "LlmConfig",
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
    "SyncLlmClient",
    "TokenBucket",
    "limiter_for",
    "load_price_table",
    "retry_after_seconds",
]

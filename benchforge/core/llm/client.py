"""LlmClient: chat completions through the OpenAI SDK, with one retry layer, shared per-model
limits, an opt-in response cache, and token / cost accounting.

The SDK's own retries are off (``max_retries=0``): this module is the only retry layer, so
every HTTP attempt is counted and limited. Retried: 408, 409, 429, 5xx, timeouts and
connection errors, with exponential backoff and full jitter, or the server's ``Retry-After``
when it sends one. When the last attempt fails the call raises ``LlmInfrastructureError``:
it never returns a made-up answer.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeVar

import openai
from openai.types import CreateEmbeddingResponse
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from benchforge.core.errors import ConfigError
from benchforge.core.llm.cache import ResponseCache, cache_key, cache_key_payload
from benchforge.core.llm.config import LlmConfig
from benchforge.core.llm.errors import LlmError, LlmInfrastructureError, LlmRequestError
from benchforge.core.llm.limits import ModelLimiter, limiter_for
from benchforge.core.llm.prices import PriceTable, load_price_table
from benchforge.core.llm.records import (
    LlmCallRecord,
    LlmEmbedding,
    LlmLedger,
    LlmResponse,
    LlmToolCall,
    LlmUsage,
)

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""Retried besides every 5xx. 409 is OpenAI's transient lock conflict."""
REQUEST_ERROR_STATUS = frozenset({400, 413, 422})
"""The request itself was rejected: not retried, raised as LlmRequestError."""

Message = Mapping[str, Any]
T = TypeVar("T")


class LlmClient:
    """Async chat-completion client of one role. Use it from one event loop.

    Records of every call (success or failure) go to ``ledger``; pass one ledger to several
    clients to sum a whole run.
    """

    def __init__(
        self,
        config: LlmConfig,
        *,
        ledger: LlmLedger | None = None,
        prices: PriceTable | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if config.api_key is None:
            raise ConfigError(
                f"LLM role {config.role!r}: no API key (set openai_api_key in benchforge "
                "settings, BENCHFORGE_OPENAI_API_KEY, or LlmConfig.api_key; any non-empty "
                "string for a local server)"
            )
        self.config = config
        self.ledger = ledger if ledger is not None else LlmLedger()
        self.prices = prices if prices is not None else load_price_table()
        self.limiter: ModelLimiter = limiter_for(
            config.base_url,
            config.model,
            concurrency=config.concurrency,
            requests_per_minute=config.requests_per_minute,
        )
        self.cache = ResponseCache(config.cache_dir) if config.cache_dir is not None else None
        self._rng = rng if rng is not None else random.Random()
        self._openai = openai.AsyncOpenAI(
            api_key=config.api_key.get_secret_value(),
            base_url=config.normalized_base_url,
            timeout=config.timeout_s,
            max_retries=0,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._openai.close()

    def request_body(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The JSON body that ``complete`` sends (and caches under)."""
        cfg = self.config
        body: dict[str, Any] = {"model": cfg.model, "messages": [dict(m) for m in messages]}
        if tools:
            body["tools"] = [dict(t) for t in tools]
        if tool_choice is not None:
            body["tool_choice"] = tool_choice if isinstance(tool_choice, str) else dict(tool_choice)
        temperature = temperature if temperature is not None else cfg.temperature
        if temperature is not None:
            body["temperature"] = temperature
        max_tokens = max_tokens if max_tokens is not None else cfg.max_tokens
        if max_tokens is not None:
            body[cfg.max_tokens_field] = max_tokens
        body.update(cfg.extra_body)
        if extra_body:
            body.update(extra_body)
        body.pop("stream", None)
        return body

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        epoch: int = 0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> LlmResponse:
        """One chat completion. ``epoch`` tells repeated samples of one prompt apart in the
        cache. ``extra_headers`` are sent but are not part of the cache key.

        Raises ``LlmInfrastructureError`` (retries exhausted, endpoint misconfigured) or
        ``LlmRequestError`` (request rejected); both carry ``attempts``, ``last_status`` and
        the ledger ``record``.
        """
        body = self.request_body(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            temperature=temperature,
            max_tokens=max_tokens,
            extra_body=extra_body,
        )
        started_at = datetime.now(UTC)
        t0 = time.monotonic()
        key_payload = cache_key_payload(
            self.config.cache_endpoint or self.config.base_url, body, epoch
        )
        key = cache_key(key_payload) if self.cache is not None else None

        if self.cache is not None and key is not None:
            completion = self._cached_completion(self.cache, key)
            if completion is not None:
                return self._finish(
                    completion,
                    attempts=0,
                    started_at=started_at,
                    t0=t0,
                    cache_hit=True,
                    http_status=None,
                    cache_key=key,
                    epoch=epoch,
                )

        try:
            completion, attempts, http_status = await self._send_with_retries(body, extra_headers)
        except LlmError as exc:
            record = LlmCallRecord(
                role=self.config.role,
                model=self.config.model,
                base_url=self.config.normalized_base_url,
                started_at=started_at,
                latency_s=time.monotonic() - t0,
                attempts=exc.attempts,
                status="error",
                http_status=exc.last_status,
                error=f"{type(exc).__name__}: {exc}",
                cache_key=key,
                epoch=epoch,
            )
            self.ledger.append(record)
            exc.record = record
            raise
        if self.cache is not None and key is not None:
            self.cache.put(key, key_payload, completion.model_dump(mode="json"))
        return self._finish(
            completion,
            attempts=attempts,
            started_at=started_at,
            t0=t0,
            cache_hit=False,
            http_status=http_status,
            cache_key=key,
            epoch=epoch,
        )

    async def _send_with_retries(
        self, body: dict[str, Any], extra_headers: Mapping[str, str] | None
    ) -> tuple[ChatCompletion, int, int]:
        cfg = self.config
        known = {"model", "messages", "tools", "tool_choice", "temperature"}
        known.add(cfg.max_tokens_field)
        kwargs: dict[str, Any] = {k: v for k, v in body.items() if k in known}
        extras = {k: v for k, v in body.items() if k not in known}
        if extras:
            kwargs["extra_body"] = extras
        if extra_headers:
            kwargs["extra_headers"] = dict(extra_headers)

        async def attempt_chat(attempt: int) -> tuple[ChatCompletion, int]:
            raw = await self._openai.chat.completions.with_raw_response.create(**kwargs)
            completion = raw.parse()
            if not isinstance(completion, ChatCompletion) or not completion.choices:
                raise LlmInfrastructureError(
                    f"{self._who()}: response has no choices",
                    attempts=attempt,
                    last_status=raw.status_code,
                )
            return completion, raw.status_code

        return await self._with_retries(attempt_chat)

    async def _with_retries(
        self, send: Callable[[int], Awaitable[tuple[T, int]]]
    ) -> tuple[T, int, int]:
        """``send(attempt)`` until it answers: (its result, attempts, HTTP status). The one
        retry policy of chat completions and embeddings alike."""
        cfg = self.config
        total = cfg.max_retries + 1
        last_status: int | None = None
        last_error = ""
        for attempt in range(1, total + 1):
            retry_after: float | None = None
            async with self.limiter.request_slot():
                try:
                    result, status = await send(attempt)
                except openai.APIStatusError as exc:
                    last_status = exc.status_code
                    last_error = exc.message
                    if exc.status_code in REQUEST_ERROR_STATUS:
                        raise LlmRequestError(
                            f"{self._who()}: request rejected, {last_error}",
                            attempts=attempt,
                            last_status=last_status,
                        ) from exc
                    if not _retryable(exc.status_code):
                        raise LlmInfrastructureError(
                            f"{self._who()}: {last_error}",
                            attempts=attempt,
                            last_status=last_status,
                        ) from exc
                    retry_after = retry_after_seconds(exc.response.headers)
                except openai.APITimeoutError:
                    last_status = None
                    last_error = f"timed out after {cfg.timeout_s:g}s"
                except openai.APIConnectionError as exc:
                    last_status = None
                    last_error = f"connection error: {exc.__cause__ or exc}"
                except openai.APIResponseValidationError as exc:
                    raise LlmInfrastructureError(
                        f"{self._who()}: unreadable response: {exc.message}",
                        attempts=attempt,
                        last_status=exc.status_code,
                    ) from exc
                else:
                    return result, attempt, status
            if attempt == total:
                break
            delay = self._delay(attempt, retry_after)
            log.warning(
                "%s: attempt %d/%d failed (%s); retrying in %.2fs",
                self._who(),
                attempt,
                total,
                last_error,
                delay,
            )
            await asyncio.sleep(delay)
        raise LlmInfrastructureError(
            f"{self._who()}: gave up after {total} attempts; last error: {last_error}",
            attempts=total,
            last_status=last_status,
        )

    async def embed(self, texts: Sequence[str], *, model: str | None = None) -> LlmEmbedding:
        """Embeddings of ``texts`` (``/v1/embeddings``, one request) under ``model`` (default:
        this client's), through the same retry layer and limits; recorded in the ledger as a
        call with prompt tokens only. Never cached: vectors are cheap and an index is built
        once per lake."""
        name = model or self.config.model
        started_at = datetime.now(UTC)
        t0 = time.monotonic()

        async def attempt_embed(attempt: int) -> tuple[CreateEmbeddingResponse, int]:
            raw = await self._openai.embeddings.with_raw_response.create(
                model=name, input=list(texts)
            )
            response = raw.parse()
            if len(response.data) != len(texts):
                raise LlmInfrastructureError(
                    f"{self._who()}: {len(response.data)} embeddings for {len(texts)} texts",
                    attempts=attempt,
                    last_status=raw.status_code,
                )
            return response, raw.status_code

        def record(**fields: Any) -> LlmCallRecord:
            return LlmCallRecord(
                role=self.config.role,
                model=name,
                base_url=self.config.normalized_base_url,
                started_at=started_at,
                latency_s=time.monotonic() - t0,
                **fields,
            )

        try:
            response, attempts, status = await self._with_retries(attempt_embed)
        except LlmError as exc:
            exc.record = record(
                attempts=exc.attempts,
                status="error",
                http_status=exc.last_status,
                error=f"{type(exc).__name__}: {exc}",
            )
            self.ledger.append(exc.record)
            raise
        tokens = response.usage.prompt_tokens if response.usage is not None else None
        done = record(
            response_model=response.model,
            attempts=attempts,
            status="ok",
            http_status=status,
            prompt_tokens=tokens,
            completion_tokens=0,
            cost_usd=self.prices.cost(name, tokens, 0, response_model=response.model),
        )
        self.ledger.append(done)
        vectors = [list(item.embedding) for item in sorted(response.data, key=lambda d: d.index)]
        return LlmEmbedding(vectors=vectors, record=done)

    @staticmethod
    def _cached_completion(cache: ResponseCache, key: str) -> ChatCompletion | None:
        cached = cache.get(key)
        if cached is None:
            return None
        try:
            completion = ChatCompletion.model_validate(cached)
        except ValidationError as exc:
            log.warning("ignoring LLM cache entry %s: %s", cache.path(key), exc)
            return None
        return completion if completion.choices else None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        cfg = self.config
        if retry_after is not None:
            return min(retry_after, cfg.backoff_max_s)
        ceiling = min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1))
        return self._rng.uniform(0.0, ceiling)

    def _who(self) -> str:
        return f"LLM {self.config.role} ({self.config.model} at {self.config.normalized_base_url})"

    def _finish(
        self,
        completion: ChatCompletion,
        *,
        attempts: int,
        started_at: datetime,
        t0: float,
        cache_hit: bool,
        http_status: int | None,
        cache_key: str | None,
        epoch: int,
    ) -> LlmResponse:
        choice = completion.choices[0]
        message = choice.message
        tool_calls: list[LlmToolCall] = []
        for call in message.tool_calls or []:
            if call.type == "function":
                tool_calls.append(
                    LlmToolCall(
                        id=call.id, name=call.function.name, arguments=call.function.arguments
                    )
                )
            else:
                tool_calls.append(
                    LlmToolCall(
                        id=call.id,
                        name=call.custom.name,
                        arguments=call.custom.input,
                        type="custom",
                    )
                )
        u = completion.usage
        cached_tokens = 0
        if u is not None and u.prompt_tokens_details is not None:
            cached_tokens = u.prompt_tokens_details.cached_tokens or 0
        usage = LlmUsage(
            prompt_tokens=u.prompt_tokens if u else None,
            completion_tokens=u.completion_tokens if u else None,
            total_tokens=u.total_tokens if u else None,
            cached_prompt_tokens=cached_tokens,
        )
        if cache_hit:
            cost: float | None = 0.0
        else:
            cost = self.prices.cost(
                self.config.model,
                usage.prompt_tokens,
                usage.completion_tokens,
                cached_prompt_tokens=cached_tokens,
                response_model=completion.model,
            )
        record = LlmCallRecord(
            role=self.config.role,
            model=self.config.model,
            base_url=self.config.normalized_base_url,
            response_model=completion.model,
            system_fingerprint=completion.system_fingerprint,
            started_at=started_at,
            latency_s=time.monotonic() - t0,
            attempts=attempts,
            status="ok",
            http_status=http_status,
            cache_hit=cache_hit,
            cache_key=cache_key,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_prompt_tokens=cached_tokens,
            cost_usd=cost,
            epoch=epoch,
        )
        self.ledger.append(record)
        return LlmResponse(
            content=message.content,
            tool_calls=tool_calls,
            finish_reason=choice.finish_reason,
            usage=usage,
            record=record,
        )


def _retryable(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(float(value) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)

"""Per-model limits shared by every client in the process: a concurrency cap and a rate limit.

Clients of one (base_url, model) pair share one ``ModelLimiter`` while any of them is alive
(a weak registry), so a worker that runs one flow after another may change the limits
between flows, but two live clients of one pair must agree.

The primitives are thread- and event-loop-safe (``threading.Lock`` inside, waiters woken on
their own loop), unlike ``asyncio.Semaphore``, which binds to one loop: trials may run in
several threads, each with its own loop, and synchronous callers use the LLM loop
(``benchforge.core.llm.loop``).
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from benchforge.core.errors import ConfigError


class SharedSemaphore:
    """A FIFO counting semaphore usable from any thread and any event loop."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("limit must be >= 1")
        self.limit = limit
        self._lock = threading.Lock()
        self._held = 0
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()

    @property
    def held(self) -> int:
        with self._lock:
            return self._held

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._held < self.limit and not self._waiters:
                self._held += 1
                return
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            with self._lock:
                try:
                    self._waiters.remove((loop, waiter))
                    granted = False
                except ValueError:  # release() already handed us the slot
                    granted = True
            if granted:
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            while self._waiters:
                loop, waiter = self._waiters.popleft()
                try:  # the slot passes to the waiter: _held is unchanged
                    loop.call_soon_threadsafe(_wake, waiter)
                    return
                except RuntimeError:  # its loop is closed: that waiter is gone
                    continue
            if self._held <= 0:
                raise RuntimeError("SharedSemaphore released more often than acquired")
            self._held -= 1

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self.acquire()
        try:
            yield
        finally:
            self.release()


def _wake(waiter: asyncio.Future[None]) -> None:
    # A waiter cancelled in between gave its slot back in acquire(); nothing to do then.
    if not waiter.done():
        waiter.set_result(None)


class TokenBucket:
    """Requests per minute, smoothed: a burst of at most one second's worth of requests (at
    least one), then one request every ``60 / requests_per_minute`` seconds."""

    def __init__(self, requests_per_minute: float) -> None:
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be > 0")
        self.requests_per_minute = requests_per_minute
        self.rate_per_s = requests_per_minute / 60.0
        self.capacity = max(1.0, self.rate_per_s)
        self._lock = threading.Lock()
        self._tokens = self.capacity
        self._updated = time.monotonic()

    def reserve(self) -> float:
        """Take a token now (possibly on credit); return the seconds to wait before using it."""
        with self._lock:
            now = time.monotonic()
            elapsed = now - self._updated
            self._tokens = min(self.capacity, self._tokens + elapsed * self.rate_per_s)
            self._updated = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate_per_s

    async def acquire(self) -> None:
        wait = self.reserve()
        if wait > 0:
            await asyncio.sleep(wait)


class ModelLimiter:
    """Concurrency cap and optional rate limit of one (base_url, model) pair."""

    def __init__(self, key: tuple[str, str], concurrency: int, requests_per_minute: float | None):
        self.key = key
        self.concurrency = concurrency
        self.requests_per_minute = requests_per_minute
        self.semaphore = SharedSemaphore(concurrency)
        self.bucket = TokenBucket(requests_per_minute) if requests_per_minute else None

    @asynccontextmanager
    async def request_slot(self) -> AsyncIterator[None]:
        """Hold a concurrency slot, then wait for the rate limit, for one HTTP attempt."""
        async with self.semaphore.slot():
            if self.bucket is not None:
                await self.bucket.acquire()
            yield


_registry: weakref.WeakValueDictionary[tuple[str, str], ModelLimiter] = (
    weakref.WeakValueDictionary()
)
_registry_lock = threading.Lock()


def limiter_for(
    base_url: str, model: str, *, concurrency: int, requests_per_minute: float | None
) -> ModelLimiter:
    """The process-wide limiter of (base_url, model); keep a reference while you use it."""
    key = (base_url.rstrip("/"), model)
    with _registry_lock:
        limiter = _registry.get(key)
        if limiter is None:
            limiter = ModelLimiter(key, concurrency, requests_per_minute)
            _registry[key] = limiter
            return limiter
    if (limiter.concurrency, limiter.requests_per_minute) != (concurrency, requests_per_minute):
        raise ConfigError(
            f"model {model!r} at {key[0]} already has live clients with concurrency="
            f"{limiter.concurrency}, requests_per_minute={limiter.requests_per_minute}; "
            f"a new client asks for concurrency={concurrency}, "
            f"requests_per_minute={requests_per_minute}. Limits belong to the model, not the "
            "role: give every client of one model the same limits."
        )
    return limiter

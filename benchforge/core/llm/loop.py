"""The LLM loop: one event loop, on a daemon thread, for synchronous callers of the async
client stack (``LlmClient`` and its views).

Async code awaits the client on its own loop (a trial's chunk). A caller that is not async (a
family's ``score``, the CLI, calibration, a benchmark script) hands the whole coroutine to
``run_blocking``, which runs it on this process's one LLM loop and waits: every call still
goes through the one client, its retry layer, cache and ledgers; there is no second,
blocking client. Many threads may wait on the loop at once; their coroutines run
concurrently there, within each model's limits. The loop is started on first use and again
in a forked child (a thread does not survive a fork).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _LoopThread:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="llm-loop", daemon=True)
        self.thread.start()


_lock = threading.Lock()
_current: _LoopThread | None = None


def llm_loop() -> asyncio.AbstractEventLoop:
    """This process's LLM loop (started on first use)."""
    global _current
    with _lock:
        if _current is None or _current.pid != os.getpid() or not _current.thread.is_alive():
            _current = _LoopThread()
        return _current.loop


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """``coroutine`` run on the LLM loop; blocks the calling thread until it is done.

    Raises ``RuntimeError`` when called on the LLM loop itself (it would wait on itself
    forever): code running there awaits the coroutine instead."""
    loop = llm_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coroutine.close()
        raise RuntimeError("run_blocking called on the LLM loop: await the coroutine instead")
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

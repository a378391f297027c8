"""A process-wide progress listener: libraries emit events, the CLI draws the bar.

Flows cannot take callbacks as parameters (they must serialize for the Prefect UI), so the CLI
installs a listener here and the flow's tasks pass ``emit`` to the library.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_listeners: list[Callable[[Any], None]] = []


def emit(event: Any) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener(event)


@contextmanager
def listening(listener: Callable[[Any], None]) -> Iterator[None]:
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)

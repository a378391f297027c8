"""Progress events and a process-wide listener: libraries emit events, the CLI draws the bar.

Every event is one of the models below (:data:`ProgressEvent`); listeners match on the type,
never on attribute names. Flows cannot take callbacks as parameters (they must serialize for
the Prefect UI), so the CLI installs a listener here and the flow's tasks pass ``emit`` to the
library.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal

from pydantic import BaseModel


class RowsGenerated(BaseModel):
    """Dataset synthesis: rows of one table generated (a table may report several times)."""

    kind: Literal["rows_generated"] = "rows_generated"
    table: str
    rows: int  # rows finished by this event
    total_rows: int  # rows expected for the table (an estimate for SCD tables)


class TableExported(BaseModel):
    """Dataset synthesis: one table stressed and exported to Parquet."""

    kind: Literal["table_exported"] = "table_exported"
    table: str
    rows: int


class Planned(BaseModel):
    """How many trials (or scores) this invocation will work through."""

    kind: Literal["planned"] = "planned"
    pending: int
    skipped: int


class TrialDone(BaseModel):
    """One trial finished running (or was scored)."""

    kind: Literal["trial_done"] = "trial_done"
    slug: str
    status: str
    termination: str


class StageDone(BaseModel):
    """A multi-stage job (an anonymized release) finished one of its stages."""

    kind: Literal["stage_done"] = "stage_done"
    stage: str


DatasetEvent = RowsGenerated | TableExported
RunEvent = Planned | TrialDone
ProgressEvent = DatasetEvent | RunEvent | StageDone
Listener = Callable[[ProgressEvent], None]

_lock = threading.Lock()
_listeners: list[Listener] = []


def emit(event: ProgressEvent) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener(event)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)

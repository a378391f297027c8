"""Whether the process behind a flow run is still there, decided safely across machines.

A flow run started by a Benchforge command records, as labels of the flow run, the process
running it (host name, pid, the process's start time, so a reused pid is not mistaken for it)
and a heartbeat that process renews every :data:`HEARTBEAT_S` seconds. A RUNNING flow run is
dead when:

- it ran on this host and its process is gone (no such pid, a zombie, or another process
  under that pid): decided at once, and safely, since only this host can see its processes;
- it ran on another host and its heartbeat is older than :data:`STALE_AFTER_S`: ten missed
  beats, so a busy machine or clocks a few minutes apart do not kill a live run.

The labels are written when the flow run starts; a process killed before that (a fraction of a
second) leaves a flow run without them, which is never judged.
"""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime

import psutil
from pydantic import BaseModel

HEARTBEAT_S = 30.0
STALE_AFTER_S = 300.0

LABEL_HOST = "benchforge.host"
LABEL_PID = "benchforge.pid"
LABEL_STARTED = "benchforge.process_started"
LABEL_HEARTBEAT = "benchforge.heartbeat"


class ProcessRecord(BaseModel):
    """The process running a flow run, as its labels record it."""

    host: str
    pid: int
    started: float  # the process's start time, seconds since the epoch

    @classmethod
    def current(cls) -> ProcessRecord:
        pid = os.getpid()
        return cls(host=socket.gethostname(), pid=pid, started=psutil.Process(pid).create_time())

    def labels(self, now: datetime | None = None) -> dict[str, str | int | float | bool]:
        return {
            LABEL_HOST: self.host,
            LABEL_PID: str(self.pid),
            LABEL_STARTED: f"{self.started:.2f}",
            LABEL_HEARTBEAT: (now or datetime.now(UTC)).isoformat(),
        }

    @classmethod
    def from_labels(cls, labels: dict[str, object]) -> ProcessRecord | None:
        try:
            return cls(
                host=str(labels[LABEL_HOST]),
                pid=int(str(labels[LABEL_PID])),
                started=float(str(labels[LABEL_STARTED])),
            )
        except (KeyError, ValueError):
            return None


def heartbeat_label(now: datetime | None = None) -> dict[str, str | int | float | bool]:
    return {LABEL_HEARTBEAT: (now or datetime.now(UTC)).isoformat()}


def why_dead(
    labels: dict[str, object],
    now: datetime | None = None,
    stale_after_s: float = STALE_AFTER_S,
) -> str | None:
    """Why the process of a flow run with ``labels`` is dead, or None when it is alive, or
    may be, or the labels record no process (see the module's rules)."""
    record = ProcessRecord.from_labels(labels)
    if record is None:
        return None
    if record.host == socket.gethostname():
        return _gone_here(record)
    beat = _parse_time(labels.get(LABEL_HEARTBEAT))
    age = ((now or datetime.now(UTC)) - beat).total_seconds() if beat else None
    if age is None or age > stale_after_s:
        since = f"for {age:.0f} s" if age is not None else "ever"
        return (
            f"no heartbeat from process {record.pid} on {record.host} {since} "
            f"(more than {stale_after_s:g} s)"
        )
    return None


def _gone_here(record: ProcessRecord) -> str | None:
    where = f"process {record.pid} on {record.host}"
    try:
        process = psutil.Process(record.pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return f"{where} has exited"
        if abs(process.create_time() - record.started) > 1.0:
            return f"{where} has exited (its pid is another process's now)"
    except psutil.NoSuchProcess:
        return f"{where} has exited"
    except psutil.AccessDenied:  # there, someone else's: alive
        return None
    return None


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

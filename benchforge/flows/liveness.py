"""No zombie flow runs: Benchforge's flow runs record their process and a heartbeat
(:mod:`benchforge.harness.liveness`), and every Benchforge command that starts Prefect's API
(``run``, ``score-run``, ``nightly``, ...; :func:`benchforge.cli.prefect_server.use_prefect`)
first marks CRASHED the RUNNING flow runs whose process is dead (a ``kill -9``, a lost machine),
with their RUNNING subflow runs. A crashed run resumes as before: rerun its run id.

:func:`beat` is the ``on_running`` hook of ``run_suite``, ``score_run`` and ``nightly``.
"""

from __future__ import annotations

import logging
import threading
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterId,
    FlowRunFilterParentFlowRunId,
    FlowRunFilterState,
    FlowRunFilterStateType,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.states import Crashed
from pydantic import BaseModel

from benchforge.harness.liveness import (
    HEARTBEAT_S,
    STALE_AFTER_S,
    ProcessRecord,
    heartbeat_label,
    why_dead,
)

log = logging.getLogger(__name__)

_RUNNING = FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.RUNNING]))


class CrashedRun(BaseModel):
    """A flow run marked CRASHED by :func:`mark_dead_runs`, and why."""

    id: UUID
    name: str
    reason: str


def beat(flow: Any, flow_run: FlowRun, state: Any) -> None:
    """``on_running`` hook: label the flow run with this process, and keep its heartbeat
    while it runs."""
    with get_client(sync_client=True) as client:
        client.update_flow_run_labels(flow_run.id, ProcessRecord.current().labels())
    _HEART.add(flow_run.id)


class _Heart:
    """One daemon thread per process renewing the heartbeat label of this process's RUNNING
    flow runs every :data:`HEARTBEAT_S` seconds; a flow run that stopped running is dropped."""

    def __init__(self) -> None:
        self.ids: set[UUID] = set()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def add(self, flow_run_id: UUID) -> None:
        with self.lock:
            self.ids.add(flow_run_id)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._loop, name="benchforge-heartbeat", daemon=True
                )
                self.thread.start()

    def _loop(self) -> None:
        stop = threading.Event()
        while not stop.wait(HEARTBEAT_S):
            with self.lock:
                ids = list(self.ids)
            if not ids:
                continue
            try:
                self._beat(ids)
            except Exception as err:  # the API away (for a moment, or gone at exit): retried
                log.debug("heartbeat of flow runs %s not written: %s", ids, err)

    def _beat(self, ids: list[UUID]) -> None:
        with get_client(sync_client=True) as client:
            running = client.read_flow_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=ids), state=_RUNNING)
            )
            alive = {run.id for run in running}
            with self.lock:
                self.ids -= set(ids) - alive
            for flow_run_id in alive:
                client.update_flow_run_labels(flow_run_id, heartbeat_label())


_HEART = _Heart()


PAGE = 200  # the most flow runs the API returns at once


def mark_dead_runs(stale_after_s: float = STALE_AFTER_S) -> list[CrashedRun]:
    """Marks CRASHED every RUNNING flow run whose recorded process is dead
    (:func:`~benchforge.harness.liveness.why_dead`), and its RUNNING subflow runs."""
    crashed: list[CrashedRun] = []
    with get_client(sync_client=True) as client:
        running: list[FlowRun] = []
        while page := client.read_flow_runs(
            flow_run_filter=FlowRunFilter(state=_RUNNING), limit=PAGE, offset=len(running)
        ):
            running += page
            if len(page) < PAGE:
                break
        for run in running:
            reason = why_dead(dict(run.labels), stale_after_s=stale_after_s)
            if reason is None:
                continue
            for dead in [run, *_running_descendants(client, run.id)]:
                if any(c.id == dead.id for c in crashed):  # a subflow of one marked already
                    continue
                message = f"marked crashed by Benchforge: {reason}"
                client.set_flow_run_state(dead.id, Crashed(message=message), force=True)
                crashed.append(CrashedRun(id=dead.id, name=dead.name, reason=reason))
    return crashed


def _running_descendants(client: Any, parent: UUID) -> list[FlowRun]:
    found: list[FlowRun] = []
    children = client.read_flow_runs(
        flow_run_filter=FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent]), state=_RUNNING
        )
    )
    for child in children:
        found += [child, *_running_descendants(client, child.id)]
    return found

"""A chunk of trials as one unit of orchestration: everything a worker (a thread of this
process or a Dask worker elsewhere) needs is in the serializable ``ChunkJob``.

Limits are process-wide: every chunk of a run that executes in one process shares one
``SharedSemaphore`` per limit (usable from any thread and event loop). With N worker
processes the flow divides each limit by N, so the run's total stays bounded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchforge.core.artifacts import open_store
from benchforge.core.llm import LlmConfig, SharedSemaphore
from benchforge.core.records import AgentLimits, TrialResult
from benchforge.core.sandbox import default_backend
from benchforge.harness.executor import LimitedSandbox, RunContext, run_chunk
from benchforge.harness.models import ChunkSummary, TrialPlan
from benchforge.harness.solutions import GoldSolutions
from benchforge.harness.store import RunStore


class ChunkJob(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    artifact_root: str
    scratch: str
    work: str
    limits: AgentLimits
    llm_configs: dict[str, LlmConfig]
    trial_concurrency: int
    sandbox_concurrency: int
    hidden: list[str]
    allowed_read_only: list[str] = []  # the operator's sandbox_allowed_read_only
    task_folders: dict[str, str]  # "suite|id|version" -> folder
    datasets: dict[str, str] = {}  # task key -> the dataset folder its trials run on
    previous_attempts: dict[str, int] = {}


_lock = threading.Lock()
_semaphores: dict[tuple[str, str], SharedSemaphore] = {}
_solutions: dict[str, GoldSolutions] = {}


def _semaphore(run_id: str, name: str, limit: int) -> SharedSemaphore:
    with _lock:
        key = (run_id, name)
        if key not in _semaphores or _semaphores[key].limit != limit:
            _semaphores[key] = SharedSemaphore(limit)
        return _semaphores[key]


def _gold_solutions(job: ChunkJob) -> GoldSolutions:
    with _lock:
        if job.run_id not in _solutions:
            folders = {tuple(k.split("|")): Path(v) for k, v in job.task_folders.items()}
            _solutions[job.run_id] = GoldSolutions(folders, Path(job.work), job.datasets)  # type: ignore[arg-type]
        return _solutions[job.run_id]


def context_for(job: ChunkJob) -> RunContext:
    sandbox = LimitedSandbox(
        default_backend(), _semaphore(job.run_id, "sandboxes", job.sandbox_concurrency)
    )
    return RunContext(
        run=RunStore(open_store(job.artifact_root), job.run_id),
        scratch=Path(job.scratch),
        sandbox=sandbox,
        limits=job.limits,
        llm_configs=dict(job.llm_configs),
        trial_slots=_semaphore(job.run_id, "trials", job.trial_concurrency),
        solutions=_gold_solutions(job),
        work=Path(job.work),
        hidden=[Path(p) for p in job.hidden],
        allowed_read_only=[Path(p) for p in job.allowed_read_only],
        previous_attempts=dict(job.previous_attempts),
    )


def execute_chunk(
    job: ChunkJob,
    plans: list[TrialPlan],
    on_trial_done: list[Callable[[TrialResult], None]] | None = None,
) -> ChunkSummary:
    """Runs one chunk to completion on its own event loop in the calling worker thread (two
    loops on two threads overlap one's blocking file writes with the other's work; one shared
    loop measured slower in bench/fanout.py)."""
    ctx = context_for(job)
    ctx.on_trial_done.extend(on_trial_done or [])
    return asyncio.run(run_chunk(plans, ctx))

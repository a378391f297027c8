"""A chunk of trials as one unit of orchestration: everything a worker (a thread of this
process or a Dask worker elsewhere) needs to run trials is in the serializable ``ChunkJob``;
:func:`score_trials` scores a chunk of a stored run's trials.

Limits are process-wide: every chunk of a run that executes in one process shares one
``SharedSemaphore`` per limit (usable from any thread and event loop). With N worker
processes the flow divides each limit by N, so the run's total stays bounded.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from pydantic import BaseModel, ConfigDict, SecretStr

from benchforge.core.artifacts import open_store
from benchforge.core.catalogue import catalogue
from benchforge.core.errors import BenchforgeError
from benchforge.core.llm import LlmConfig, SharedSemaphore
from benchforge.core.records import AgentLimits, RunSpec, TrialResult, TrialScore
from benchforge.core.sandbox import SandboxBackend, default_backend
from benchforge.evaluation.dbt.runner import dbt_invocations_on_this_thread
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.datasets import roles_of
from benchforge.harness.executor import LimitedSandbox, RunContext, run_chunk
from benchforge.harness.judging import JudgeUsage, open_judge
from benchforge.harness.models import ChunkScores, ChunkSummary, TrialPlan
from benchforge.harness.score_store import ScoreStore
from benchforge.harness.scoring import GoldCache, ScoreMemo, score_trial, scoring_error
from benchforge.harness.solutions import GoldSolutions
from benchforge.harness.store import RunStore

log = logging.getLogger(__name__)


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
    postgres_url: SecretStr | None = None  # the run's PostgreSQL server (admin URL), if needed


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
        postgres_url=job.postgres_url.get_secret_value() if job.postgres_url else None,
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


def score_trials(
    run: RunStore,
    slugs: list[str],
    work: Path,
    sandbox: SandboxBackend,
    gold: GoldCache,
    memo: ScoreMemo,
    *,
    unsandboxed: bool = False,
    judge: Judge | None = None,
    show_heldout_examples: bool = False,
    visible_scores: bool = False,
    on_scored: list[Callable[[TrialResult, TrialScore], None]] | None = None,
) -> ChunkScores:
    """Scores and stores the trials ``slugs`` of ``run``, each on its task's dataset (and
    held-out dataset) as the run recorded them. An exception while scoring one trial is that
    trial's scoring error (stored as its score, with the exception), never the chunk's: the
    other trials are scored on. What is not one trial's (the run store, the run's tasks) still
    fails the chunk."""
    spec = run.require_spec()
    out = ChunkScores()
    tasks: dict[tuple[str, str, str], LoadedTask] = {}
    for slug in slugs:
        result = run.read_result(slug)
        ident = (result.key.suite, result.key.task_id, result.key.task_version)
        if ident not in tasks:
            tasks[ident] = run_task(spec, ident)
        loaded = tasks[ident]
        dataset = spec.datasets.get(loaded.key)
        heldout = spec.heldout_datasets.get(loaded.key)
        roles = {r: Path(f) for r, f in roles_of(loaded, spec.datasets).items()}
        heldout_roles = {r: Path(f) for r, f in roles_of(loaded, spec.heldout_datasets).items()}
        try:
            score = score_trial(
                run,
                result,
                loaded,
                Path(dataset) if dataset else None,
                gold,
                work,
                sandbox,
                unsandboxed=unsandboxed,
                heldout_dir=Path(heldout) if heldout else None,
                memo=memo,
                judge=judge,
                show_heldout_examples=show_heldout_examples,
                visible_too=visible_scores,
                roles=roles,
                heldout_roles=heldout_roles,
            )
        except Exception as exc:  # this trial's scoring failed, not the run's
            score = scoring_error(result, exc)
            log.warning("trial %s: scoring error: %s", slug, score.detail, exc_info=True)
            out.scoring_errors[slug] = score.detail or ""
        run.write_score(score)
        out.statuses[score.status] = out.statuses.get(score.status, 0) + 1
        for callback in on_scored or []:
            callback(result, score)
    return out


def run_task(spec: RunSpec, ident: tuple[str, str, str]) -> LoadedTask:
    """The task (suite, id, version) of a stored run, as its trials ran it; a task changed
    since (another version) is an error, not scored against its new version."""
    suite, task_id, version = ident
    root = catalogue().path(Path(spec.tasks_root))
    loaded = load_task(root / suite / task_id)
    if loaded.spec.version != version:
        raise BenchforgeError(
            f"{suite}/{task_id}: the run used version {version}, the task is now "
            f"{loaded.spec.version}; score with the task version the trials ran on"
        )
    return loaded


class ScoreJob(BaseModel):
    """What a worker in another process (a Dask worker) needs to score chunks of a stored
    run: everything is named, nothing shared but the artifact store and the work folder (on
    one machine, or a filesystem the workers share: gold is built there once, under a lock,
    and found by every worker after)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    artifact_root: str
    work: str
    unsandboxed: bool = False
    judge: LlmConfig | None = None  # the run's judge, for a run with judged tasks
    judge_settings: JudgeSettings | None = None
    judge_mock: bool = False
    show_heldout_examples: bool = False
    visible_scores: bool = False
    reuse_kept_scores: bool = True


_gold_caches: dict[str, GoldCache] = {}


def _gold_cache(work: str) -> GoldCache:
    """One per work folder and process: the chunks a worker scores share prepared gold."""
    with _lock:
        return _gold_caches.setdefault(work, GoldCache(Path(work)))


def score_job_chunk(
    job: ScoreJob,
    slugs: list[str],
    on_scored: list[Callable[[TrialResult, TrialScore], None]] | None = None,
) -> ChunkScores:
    """Scores ``slugs`` as :func:`score_trials` does, with this chunk's own score store view,
    memo and judge client, and returns what it cost besides what it scored."""
    store = open_store(job.artifact_root)
    kept = ScoreStore(store) if job.reuse_kept_scores else None
    dbt_before = dbt_invocations_on_this_thread()
    with ExitStack() as stack:
        judge = (
            stack.enter_context(open_judge(job.judge, job.judge_settings))
            if job.judge is not None
            else None
        )
        out = score_trials(
            RunStore(store, job.run_id),
            slugs,
            Path(job.work),
            default_backend(),
            _gold_cache(job.work),
            ScoreMemo(kept),
            unsandboxed=job.unsandboxed,
            judge=judge,
            show_heldout_examples=job.show_heldout_examples,
            visible_scores=job.visible_scores,
            on_scored=on_scored,
        )
        usage = JudgeUsage.of(judge, job.judge_mock) if judge is not None else None
    return out.model_copy(
        update={
            "dbt_invocations": dbt_invocations_on_this_thread() - dbt_before,
            "kept_scores_used": kept.hits if kept is not None else 0,
            "scores_kept": kept.kept if kept is not None else 0,
            "judge": usage,
        }
    )

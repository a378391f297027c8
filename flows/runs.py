"""Flows ``run_suite`` (agents x tasks x models x epochs, resumable) and ``score_run``
((re)scores stored trials without re-running agents).

Trials run in chunks (one Prefect task per chunk, many trials concurrently inside), on a capped
thread pool or a Dask cluster. A trial is done when its ``result.json`` exists; a rerun of the
same run id skips finished trials and runs the rest (infra-error trials again by default).
"""

from __future__ import annotations

import math
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.futures import wait
from prefect.task_runners import ThreadPoolTaskRunner
from pydantic import BaseModel, Field

from agents.llm import LlmConfig
from agents.mock_llm import MockServerConfig, run_server
from agents.protocol import Agent, AgentLimits
from agents.registry import build_agent
from agents.runs.chunk import ChunkJob, execute_chunk
from agents.runs.matrix import chunked, expand
from agents.runs.models import ChunkSummary, LlmOptions, RunSpec, TrialPlan
from agents.runs.scoring import GoldCache, ScoreMemo, score_trial
from agents.runs.store import RunStore
from benchforge import progress
from benchforge.artifacts import open_store
from benchforge.errors import BenchforgeError, ConfigError
from benchforge.sandbox import Isolation, default_backend
from benchforge.settings import BenchforgeSettings, load_settings
from evaluation.tasks import LoadedTask, load_tasks
from evaluation.tasks.loader import PROJECT_ROOT, load_task
from flows.datasets import heldout_dataset, local_dataset

MOCK_PREFIX = "mock-"


class TrialDone(BaseModel):
    """Progress event: one trial finished."""

    slug: str
    status: str
    termination: str


class Planned(BaseModel):
    """Progress event: how many trials (or scores) this invocation will work through."""

    pending: int
    skipped: int


class RunSummary(BaseModel):
    run_id: str
    uri: str
    trials: int
    skipped: int
    ran: int
    completed: int
    infra_errors: int
    seconds: float
    chunks: int
    mock_llm: bool
    isolation: Isolation
    terminations: dict[str, int] = Field(default_factory=dict)


class ScoreSummary(BaseModel):
    run_id: str
    scored: int
    skipped: int
    statuses: dict[str, int]
    seconds: float


def work_root(settings: BenchforgeSettings) -> Path:
    """Scratch space (workspaces, gold builds): beside local artifacts, else a user cache."""
    root = settings.artifact_root
    if root.startswith("s3://"):
        return Path.home() / ".cache" / "benchforge" / "work"
    return Path(root).resolve() / "work"


def hidden_paths(settings: BenchforgeSettings, tasks: list[LoadedTask], work: Path) -> list[str]:
    """Masked in every sandbox: artifacts, scratch (gold builds, other trials' workspaces),
    the gold repositories and the task folders (overlays, hidden checks)."""
    paths = {work, PROJECT_ROOT / "dbt_projects", PROJECT_ROOT / "task_specs"}
    if not settings.artifact_root.startswith("s3://"):
        paths.add(Path(settings.artifact_root).resolve())
    for loaded in tasks:
        paths.add((PROJECT_ROOT / loaded.spec.repo).resolve())
        paths.add(loaded.folder.parent.resolve())
    return sorted(str(p) for p in paths)


def suite_tasks(tasks_root: str, suites: list[str], task_ids: list[str] | None) -> list[LoadedTask]:
    root = Path(tasks_root) if Path(tasks_root).is_absolute() else PROJECT_ROOT / tasks_root
    found: list[LoadedTask] = []
    for suite in suites:
        folder = root / suite
        if not folder.is_dir():
            raise ConfigError(f"no suite {suite!r}: {folder} is not a folder")
        found += load_tasks(folder)
    if task_ids:
        unknown = set(task_ids) - {t.spec.id for t in found}
        if unknown:
            raise ConfigError(f"unknown task ids: {', '.join(sorted(unknown))}")
        found = [t for t in found if t.spec.id in task_ids]
    if not found:
        raise ConfigError(f"no tasks in {', '.join(suites)} under {root}")
    return found


def resolve_datasets(
    tasks: list[LoadedTask], overrides: dict[str, str], scratch: Path
) -> dict[str, str]:
    """task key -> local dataset folder (synthesized once per (domain, scale, seed))."""
    by_ref: dict[tuple[str, float, int], str] = {}
    out = {}
    for loaded in tasks:
        ref = loaded.spec.dataset
        ident = (ref.domain, ref.scale, ref.seed)
        if ident not in by_ref:
            override = overrides.get(ref.domain)
            folder = local_dataset(
                ref.domain, override, scratch / "datasets" / ref.domain, ref.scale, ref.seed
            )
            by_ref[ident] = str(Path(folder).resolve())
        out[loaded.key] = by_ref[ident]
    return out


def resolve_heldout(
    tasks: list[LoadedTask], overrides: dict[str, str], scratch: Path
) -> dict[str, str]:
    """task key -> held-out dataset folder, for tasks on their domain's generated dataset (a
    custom dataset given for a domain has no spec to regenerate it from)."""
    by_ref: dict[tuple[str, float, int], str] = {}
    out = {}
    for loaded in tasks:
        ref = loaded.spec.dataset
        if ref.domain in overrides or not loaded.spec.family.startswith("de_"):
            continue
        ident = (ref.domain, ref.scale, ref.seed)
        if ident not in by_ref:
            folder = heldout_dataset(ref.domain, scratch / "heldout" / ref.domain, ref.scale,
                                     ref.seed)  # fmt: skip
            by_ref[ident] = str(Path(folder).resolve())
        out[loaded.key] = by_ref[ident]
    return out


@contextmanager
def llm_endpoint(settings: BenchforgeSettings, models: list[str]) -> Iterator[str | None]:
    """Yields the base URL to use: the configured endpoint, or (no API key configured) the
    Benchforge mock server started here for the run. Real model names need a real key."""
    if not models or settings.openai_api_key is not None:
        yield settings.openai_base_url
        return
    real = [m for m in models if not m.startswith(MOCK_PREFIX)]
    if real:
        raise ConfigError(
            f"no OpenAI API key configured (BENCHFORGE_OPENAI_API_KEY), so only the mock "
            f"server's models (mock-echo, mock-script:<name>) can run, not: {', '.join(real)}"
        )
    with run_server(config=MockServerConfig()) as handle:
        yield handle.url


def llm_configs(
    settings: BenchforgeSettings,
    models: list[str],
    base_url: str | None,
    concurrency: int,
    use_mock: bool,
    options: LlmOptions,
) -> dict[str, LlmConfig]:
    configs = {}
    for model in models:
        overrides: dict[str, object] = {"concurrency": concurrency, **options.model_dump()}
        if base_url:
            overrides["base_url"] = base_url
        if use_mock:
            overrides["api_key"] = "benchforge-mock"
        configs[model] = LlmConfig.from_settings(settings, role="agent", model=model, **overrides)
    return configs


@task(name="trial-chunk", cache_policy=NO_CACHE)
def trial_chunk(job: ChunkJob, plans: list[TrialPlan]) -> ChunkSummary:
    def report(result: object) -> None:
        key = getattr(result, "key", None)
        progress.emit(
            TrialDone(
                slug=key.slug if key else "?",
                status=str(getattr(result, "status", "?")),
                termination=str(getattr(result, "termination", "?")),
            )
        )

    return execute_chunk(job, plans, on_trial_done=[report])


def run_chunks(runner: Any, job: ChunkJob, chunks: list[list[TrialPlan]]) -> list[ChunkSummary]:
    """Submits one ``trial-chunk`` task per chunk on ``runner`` (a capped thread pool or a Dask
    cluster). Not a subflow: a flow run's parameters must stay small for the API, and the
    trial plans of a large run are not."""
    with runner:
        futures = [runner.submit(trial_chunk, parameters={"job": job, "plans": c}) for c in chunks]
        wait(futures)
        return [f.result() for f in futures]


def _task_runner(dask: str | None, workers: int) -> Any:
    if not dask:
        return ThreadPoolTaskRunner(max_workers=workers)
    from prefect_dask import DaskTaskRunner  # imported only when asked for

    if dask.startswith("local"):
        _, _, n = dask.partition(":")
        return DaskTaskRunner(
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": int(n or workers),
                "threads_per_worker": 2,
                "processes": True,
                "dashboard_address": None,
            },
        )
    return DaskTaskRunner(address=dask)


@contextmanager
def _api_url_for_workers(dask: str | None) -> Iterator[None]:
    """Worker processes of a local Dask cluster inherit the environment: point them at this
    run's Prefect API (an ephemeral server has no fixed address), or each starts its own."""
    if not dask or os.environ.get("PREFECT_API_URL"):
        yield
        return
    os.environ["PREFECT_API_URL"] = str(get_client(sync_client=True).api_url).rstrip("/")
    try:
        yield
    finally:
        os.environ.pop("PREFECT_API_URL", None)


def _dask_workers(dask: str | None, workers: int) -> int:
    if not dask:
        return 1
    if dask.startswith("local"):
        _, _, n = dask.partition(":")
        return int(n or workers)
    return workers


@flow(name="run_suite")
def run_suite(
    suites: list[str],
    agents: list[str],
    models: list[str] | None = None,
    epochs: int = 1,
    concurrency: int = 8,
    sandbox_concurrency: int = 4,
    llm_concurrency: int = 16,
    chunk_size: int = 25,
    workers: int = 4,
    run_id: str | None = None,
    tasks_root: str = "task_specs",
    task_ids: list[str] | None = None,
    limits: AgentLimits | None = None,
    datasets: dict[str, str] | None = None,
    dask: str | None = None,
    retry_infra_errors: bool = True,
    llm: LlmOptions | None = None,
    heldout: bool = True,
) -> RunSummary:
    """Runs every (task, agent, model, epoch) of ``suites`` not already done in ``run_id``.

    ``concurrency`` trials run at once, ``sandbox_concurrency`` sandboxed commands and
    ``llm_concurrency`` model calls per model; chunks of ``chunk_size`` trials are Prefect
    tasks on ``workers`` threads, or on a Dask cluster (``dask="local:N"`` starts a local
    cluster of N processes; otherwise a scheduler address). ``datasets`` maps a domain to a
    dataset folder (default: synthesized at the task's scale and seed). ``llm`` sets the
    model client's timeout, retries and backoff. With ``heldout`` (the default), DE trials on
    a generated dataset are scored on a held-out seed the agents never see, the visible-seed
    score beside it (metrics ``cs_visible``, ...).
    """
    logger = get_run_logger()
    t0 = time.monotonic()
    settings = load_settings()
    models = list(models or [])
    limits = limits or AgentLimits()
    run_id = run_id or f"run-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    run = RunStore(open_store(settings.artifact_root), run_id)
    work = work_root(settings)
    tasks = suite_tasks(tasks_root, suites, task_ids)
    built: dict[str, Agent] = {spec: build_agent(spec) for spec in agents}
    if any(a.uses_model for a in built.values()) and not models:
        raise ConfigError("an agent that calls a model needs at least one --model")
    dataset_dirs = resolve_datasets(tasks, datasets or {}, work)
    heldout_dirs = resolve_heldout(tasks, datasets or {}, work) if heldout else {}
    use_mock = bool(models) and settings.openai_api_key is None
    with llm_endpoint(settings, models) as base_url:
        spec = RunSpec(
            run_id=run_id,
            suites=suites,
            tasks_root=tasks_root,
            agents=agents,
            models=models,
            epochs=epochs,
            limits=limits,
            llm_base_url=base_url,
            mock_llm=use_mock,
            datasets=dataset_dirs,
            heldout_datasets=heldout_dirs,
            created_at=datetime.now(UTC),
        )
        previous = run.read_spec()
        if previous is not None and previous.matrix() != spec.matrix():
            raise BenchforgeError(
                f"run {run_id!r} exists with another trial matrix ({previous.matrix()}); "
                "use a new run id"
            )
        if previous is None:
            run.write_spec(spec)
        plans = expand(tasks, built, models, epochs, {k: Path(v) for k, v in dataset_dirs.items()})
        states = run.trial_states()
        redo = (
            {s for s, state in states.items() if state == "infra_error"}
            if retry_infra_errors
            else set()
        )
        pending = [p for p in plans if p.key.slug not in states or p.key.slug in redo]
        logger.info(
            "run %s: %d trials, %d done, %d to run",
            run_id,
            len(plans),
            len(plans) - len(pending),
            len(pending),
        )
        progress.emit(Planned(pending=len(pending), skipped=len(plans) - len(pending)))
        n_workers = _dask_workers(dask, workers)
        job = ChunkJob(
            run_id=run_id,
            artifact_root=settings.artifact_root,
            scratch=str(work / "workspaces"),
            work=str(work / "scoring"),
            limits=limits,
            llm_configs=llm_configs(
                settings,
                models,
                base_url,
                max(1, llm_concurrency // n_workers),
                use_mock,
                llm or LlmOptions(),
            ),
            trial_concurrency=max(1, math.ceil(concurrency / n_workers)),
            sandbox_concurrency=max(1, math.ceil(sandbox_concurrency / n_workers)),
            hidden=hidden_paths(settings, tasks, work),
            task_folders={
                f"{t.spec.suite}|{t.spec.id}|{t.spec.version}": str(t.folder) for t in tasks
            },
            previous_attempts={s: 1 for s in redo},
        )
        chunks = chunked(pending, chunk_size) if pending else []
        summary = ChunkSummary()
        if chunks:
            runner = _task_runner(dask, workers)
            with _api_url_for_workers(dask):
                for part in run_chunks(runner, job, chunks):
                    summary = summary.merge(part)
        # Every trial is stored: drop the task templates and any workspace a crash left.
        shutil.rmtree(Path(job.scratch) / run_id, ignore_errors=True)
    return RunSummary(
        run_id=run_id,
        uri=run.uri(),
        trials=len(plans),
        skipped=len(plans) - len(pending),
        ran=summary.trials,
        completed=summary.completed,
        infra_errors=summary.infra_errors,
        seconds=time.monotonic() - t0,
        chunks=len(chunks),
        mock_llm=use_mock,
        isolation=default_backend().isolation(),
        terminations=summary.terminations,
    )


@task(name="score-chunk", cache_policy=NO_CACHE)
def score_chunk(run_id: str, slugs: list[str], work: str, unsandboxed: bool) -> dict[str, int]:
    settings = load_settings()
    run = RunStore(open_store(settings.artifact_root), run_id)
    spec = run.require_spec()
    gold = _gold_cache(Path(work))
    sandbox = default_backend()
    statuses: dict[str, int] = {}
    tasks: dict[tuple[str, str, str], LoadedTask] = {}
    for slug in slugs:
        result = run.read_result(slug)
        ident = (result.key.suite, result.key.task_id, result.key.task_version)
        if ident not in tasks:
            tasks[ident] = _find_task(spec, ident)
        loaded = tasks[ident]
        dataset = spec.datasets.get(loaded.key)
        heldout = spec.heldout_datasets.get(loaded.key)
        score = score_trial(
            run,
            result,
            loaded,
            Path(dataset) if dataset else None,
            gold,
            Path(work),
            sandbox,
            unsandboxed=unsandboxed,
            heldout_dir=Path(heldout) if heldout else None,
            memo=_score_memo(run_id),
        )
        run.write_score(score)
        statuses[score.status] = statuses.get(score.status, 0) + 1
        progress.emit(TrialDone(slug=slug, status=score.status, termination=result.termination))
    return statuses


_gold_caches: dict[str, GoldCache] = {}
_score_memos: dict[str, ScoreMemo] = {}


def _score_memo(run_id: str) -> ScoreMemo:
    return _score_memos.setdefault(run_id, ScoreMemo())


def _gold_cache(work: Path) -> GoldCache:
    return _gold_caches.setdefault(str(work), GoldCache(work))


def _find_task(spec: RunSpec, ident: tuple[str, str, str]) -> LoadedTask:
    suite, task_id, version = ident
    root = Path(spec.tasks_root)
    root = root if root.is_absolute() else PROJECT_ROOT / root
    loaded = load_task(root / suite / task_id)
    if loaded.spec.version != version:
        raise BenchforgeError(
            f"{suite}/{task_id}: the run used version {version}, the task is now "
            f"{loaded.spec.version}; score with the task version the trials ran on"
        )
    return loaded


@flow(name="score_run")
def score_run(
    run_id: str,
    rescore: bool = False,
    workers: int = 2,
    chunk_size: int = 4,
    unsandboxed: bool = False,
) -> ScoreSummary:
    """Scores the finished trials of ``run_id`` that have no score yet (all with
    ``rescore``), without re-running any agent. Every execution of candidate code runs in the
    sandbox; ``unsandboxed`` (never for a real leaderboard) runs it as plain processes, with a
    warning, and every score records it."""
    logger = get_run_logger()
    t0 = time.monotonic()
    settings = load_settings()
    run = RunStore(open_store(settings.artifact_root), run_id)
    run.require_spec()
    finished = sorted(run.finished_slugs())
    done = set() if rescore else run.scored_slugs()
    todo = [s for s in finished if s not in done]
    logger.info("run %s: %d finished trials, %d to score", run_id, len(finished), len(todo))
    work = str(work_root(settings) / "scoring")
    progress.emit(Planned(pending=len(todo), skipped=len(finished) - len(todo)))
    statuses: dict[str, int] = {}
    if todo:
        parts = [todo[i : i + chunk_size] for i in range(0, len(todo), chunk_size)]
        runner: Any = ThreadPoolTaskRunner(max_workers=workers)
        if unsandboxed:
            logger.warning("scoring run %s WITHOUT a sandbox (explicitly requested)", run_id)
        try:
            for part in _score_chunks(runner, run_id, parts, work, unsandboxed):
                for status, count in part.items():
                    statuses[status] = statuses.get(status, 0) + count
        finally:
            _score_memos.pop(run_id, None)
    return ScoreSummary(
        run_id=run_id,
        scored=len(todo),
        skipped=len(finished) - len(todo),
        statuses=statuses,
        seconds=time.monotonic() - t0,
    )


def _score_chunks(runner: Any, run_id: str, parts: list[list[str]], work: str,
                  unsandboxed: bool) -> list[dict[str, int]]:  # fmt: skip
    with runner:
        futures = [
            runner.submit(
                score_chunk,
                parameters={
                    "run_id": run_id,
                    "slugs": part,
                    "work": work,
                    "unsandboxed": unsandboxed,
                },
            )
            for part in parts
        ]
        wait(futures)
        return [f.result() for f in futures]

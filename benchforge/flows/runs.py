"""Flows ``run_suite`` (agents x tasks x models x epochs, resumable) and ``score_run``
((re)scores stored trials without re-running agents; a trial whose scoring raises is stored as
a scoring error, and the other trials are scored on).

Trials run in chunks (one Prefect task per chunk, many trials concurrently inside), on a capped
thread pool or a Dask cluster. A trial is done when its ``result.json`` exists; a rerun of the
same run id skips finished trials and runs the rest (infra-error trials again by default).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import get_client
from prefect.futures import wait
from prefect.runtime import flow_run
from prefect.task_runners import ThreadPoolTaskRunner
from pydantic import BaseModel, Field

from benchforge.agents.registry import AgentSpelling
from benchforge.core import progress
from benchforge.core.artifacts import open_store
from benchforge.core.progress import Planned, TrialDone
from benchforge.core.records import AgentLimits, LlmOptions, TrialResult, TrialScore
from benchforge.core.sandbox import default_backend
from benchforge.core.settings import BenchforgeSettings, load_settings
from benchforge.evaluation.dbt.runner import dbt_invocations
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.flows.liveness import beat
from benchforge.flows.synthesize import synthesize
from benchforge.harness.chunk import (
    ChunkJob,
    ScoreJob,
    execute_chunk,
    score_job_chunk,
    score_trials,
)
from benchforge.harness.infra_errors import InfraErrorTally, check_infra_errors, tally_infra_errors
from benchforge.harness.judging import JudgeUsage, judge_session
from benchforge.harness.models import ChunkScores, ChunkSummary, RunSummary, TrialPlan
from benchforge.harness.planning import (
    RunRequest,
    ScorePlan,
    new_run_id,
    plan_scoring,
    planned_run,
    run_summary,
)
from benchforge.harness.preflight import suite_tasks
from benchforge.harness.sandbox_policy import work_root
from benchforge.harness.score_store import ScoreStore
from benchforge.harness.scoring import GoldCache, ScoreMemo
from benchforge.harness.store import RunStore

__all__ = ["ChunkScores", "RunSummary", "ScoreSummary", "run_suite", "score_run", "suite_tasks"]


class ScoreSummary(BaseModel):
    run_id: str
    scored: int
    skipped: int
    statuses: dict[str, int]
    seconds: float
    judge: JudgeUsage | None = None  # judged trials: requests sent, cache hits, cost
    scoring_errors: dict[str, str] = Field(
        default_factory=dict,
        description="trial slug -> why scoring it raised (type: message, truncated); these "
        "trials are listed apart on the leaderboard and scored again by the next score_run",
    )
    infra: InfraErrorTally = Field(description="infrastructure errors among its finished trials")
    dbt_invocations: int = Field(default=0, description="dbt commands this scoring started")
    kept_scores_used: int = Field(
        default=0, description="scores found by content in the score store (no scoring)"
    )
    scores_kept: int = Field(default=0, description="new scores added to the score store")

    def cost_line(self) -> str:
        """What the scoring cost: dbt commands, judge requests and scores found by content."""
        requests = self.judge.requests if self.judge is not None else 0
        return (
            f"dbt invocations {self.dbt_invocations}, judge requests {requests}, "
            f"kept scores used {self.kept_scores_used}, newly kept {self.scores_kept}"
        )


@task(name="trial-chunk", cache_policy=NO_CACHE)
def trial_chunk(job: ChunkJob, plans: list[TrialPlan]) -> ChunkSummary:
    def report(result: TrialResult) -> None:
        progress.emit(
            TrialDone(slug=result.key.slug, status=result.status, termination=result.termination)
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


RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,119}$"
RunId = Annotated[str, Field(pattern=RUN_ID_PATTERN)]
AtLeastOne = Annotated[int, Field(ge=1)]
Share = Annotated[float, Field(ge=0, le=1)]


def _max_share(given: float | None) -> float:
    return load_settings().max_infra_error_share if given is None else given


def _run_flow_name() -> str:
    run_id = flow_run.parameters.get("run_id")
    return f"run-suite-{run_id}" if run_id else "run-suite"


@flow(name="run_suite", flow_run_name=_run_flow_name, on_running=[beat])
def run_suite(
    suites: list[str],
    agents: list[AgentSpelling],
    models: list[str] | None = None,
    epochs: AtLeastOne = 1,
    concurrency: AtLeastOne = 8,
    sandbox_concurrency: AtLeastOne = 4,
    llm_concurrency: AtLeastOne = 16,
    chunk_size: AtLeastOne = 25,
    workers: AtLeastOne = 4,
    run_id: RunId | None = None,
    tasks_root: str = "task_specs",
    task_ids: list[str] | None = None,
    limits: AgentLimits | None = None,
    datasets: dict[str, str] | None = None,
    dask: str | None = None,
    retry_infra_errors: bool = True,
    llm: LlmOptions | None = None,
    heldout: bool = True,
    max_infra_error_share: Share | None = None,
) -> RunSummary:
    """Runs every (task, agent, model, epoch) of ``suites`` not already done in ``run_id``.

    Every input is checked before any data work; resuming a run id with inputs other than
    those it started with (datasets by content, task versions, agent configs, models, epochs,
    limits) is refused with the differences.

    Args:
        suites: task suites under ``tasks_root``, e.g. de-crm.
        agents: oracle, null, react-de, single-call, or NAME=CONFIG.yaml (command=AGENT.yaml).
        models: models for agents that call one; without an API key only the mock server's
            (mock-echo, mock-script:NAME). Empty: gpt-4.1-mini with an API key, else each
            model-calling agent's own mock script (react-de, react-da).
        epochs: trials per (task, agent, model); pass@k needs k epochs.
        concurrency: trials at once.
        sandbox_concurrency: sandboxed commands at once.
        llm_concurrency: model calls at once, per model.
        chunk_size: trials per Prefect task.
        workers: threads running chunks (or Dask workers).
        run_id: resumes this run (same inputs only); default: a new run-<time>-<random>.
        tasks_root: folder of the suites (relative to the checkout).
        task_ids: only these tasks of the suites; default all.
        limits: per-trial budgets (rounds, seconds, memory).
        datasets: domain -> dataset folder or s3:// prefix (backfills on another dataset
            version); default each task's generated dataset.
        dask: run chunks on Dask: local:N starts a local cluster, else a scheduler address.
        retry_infra_errors: re-run trials that ended in an infrastructure error.
        llm: the model client's timeout, retries, backoff and rate.
        heldout: score DE trials on a held-out seed the agents never see (visible-seed
            scores beside it).
        max_infra_error_share: the flow run ends FAILED (after storing every trial) when
            more than this share of the run's trials are infrastructure errors, or all of them;
            default the max_infra_error_share setting (0.2).
    """
    logger = get_run_logger()
    t0 = time.monotonic()
    settings = load_settings()
    request = RunRequest(
        suites=suites,
        agents=list(agents),
        models=list(models or []),
        epochs=epochs,
        concurrency=concurrency,
        sandbox_concurrency=sandbox_concurrency,
        llm_concurrency=llm_concurrency,
        chunk_size=chunk_size,
        processes=_dask_workers(dask, workers),
        tasks_root=tasks_root,
        task_ids=task_ids,
        limits=limits or AgentLimits(),
        datasets=datasets or {},
        retry_infra_errors=retry_infra_errors,
        llm=llm or LlmOptions(),
        heldout=heldout,
    )
    run = RunStore(open_store(settings.artifact_root), run_id or new_run_id())
    summary = ChunkSummary()
    with planned_run(request, run, settings, synthesize=synthesize) as plan:
        logger.info(plan.line())
        progress.emit(Planned(pending=len(plan.pending), skipped=plan.skipped))
        if plan.chunks:
            with _api_url_for_workers(dask):
                for part in run_chunks(_task_runner(dask, workers), plan.job, plan.chunks):
                    summary = summary.merge(part)
    result = run_summary(plan, run, summary, time.monotonic() - t0)
    check_infra_errors([result.infra], _max_share(max_infra_error_share), result)
    return result


@task(name="score-chunk", cache_policy=NO_CACHE)
def score_chunk(
    run_id: str,
    slugs: list[str],
    work: str,
    unsandboxed: bool,
    gold: GoldCache,
    memo: ScoreMemo,
    judge: Judge | None = None,
    show_heldout_examples: bool = False,
    visible_scores: bool = False,
) -> ChunkScores:
    """Scores ``slugs``; ``gold``, ``memo`` and ``judge`` belong to the ``score_run`` flow
    run, shared by its chunks (threads of one process) and dropped with it.

    An exception while scoring one trial is that trial's scoring error (stored as its score,
    with the exception), never the chunk's: the other trials are scored on. What is not one
    trial's (the run store, the run's tasks) still fails the chunk."""
    logger = get_run_logger()
    run = RunStore(open_store(load_settings().artifact_root), run_id)

    def report(result: TrialResult, score: TrialScore) -> None:
        progress.emit(
            TrialDone(slug=result.key.slug, status=score.status, termination=result.termination)
        )

    out = score_trials(
        run,
        slugs,
        Path(work),
        default_backend(),
        gold,
        memo,
        unsandboxed=unsandboxed,
        judge=judge,
        show_heldout_examples=show_heldout_examples,
        visible_scores=visible_scores,
        on_scored=[report],
    )
    for slug, detail in out.scoring_errors.items():
        logger.warning("trial %s: scoring error: %s", slug, detail)
    return out


@flow(name="score_run", flow_run_name="score-run-{run_id}", on_running=[beat])
def score_run(
    run_id: RunId,
    rescore: bool = False,
    workers: AtLeastOne = 2,
    chunk_size: AtLeastOne = 4,
    unsandboxed: bool = False,
    judge_model: str | None = None,
    judge: JudgeSettings | None = None,
    show_heldout_examples: bool = False,
    visible_scores: bool = False,
    max_infra_error_share: Share | None = None,
    reuse_kept_scores: bool = True,
    dask: str | None = None,
) -> ScoreSummary:
    """Scores the finished trials of ``run_id`` that have no score yet or a scoring error
    (all with ``rescore``), without re-running any agent. A submission whose score is kept
    by content (same task, scorer, data, files, answer and judge) is not scored again
    (:mod:`benchforge.harness.score_store`). Every execution of candidate code
    runs in the sandbox; ``unsandboxed`` (never for a real leaderboard) runs it as plain
    processes, with a warning, and every score records it.

    A trial whose scoring raises is stored as a ``scoring_error`` score (the exception's type
    and message) and listed in the summary; it never stops the other trials, and the flow
    fails only when the harness itself does (e.g. the run store cannot be read).

    Args:
        run_id: a run of `run_suite`.
        rescore: score every finished trial again (after a scorer change), not only new ones
            and earlier scoring errors.
        workers: scoring chunks at once.
        chunk_size: trials per Prefect task.
        unsandboxed: run candidate code without the sandbox (recorded in every score; never
            for a real leaderboard).
        judge_model: the model judging analysis reports and blueprints; default gpt-4.1-mini,
            or the mock server's mock-judge when no API key is configured.
        judge: how judged tasks are judged (per-item or batched calls, retries, GSB alpha).
        show_heldout_examples: keep example rows in scores on the held-out seed (by default
            they keep only counts and the differing columns: held-out rows stay held out).
        visible_scores: for trials scored on a held-out seed, also score them on the visible
            dataset (the ``<metric>_visible`` columns, which show answers fitted to the data
            the agent saw). Off by default: the held-out score is the score, and the visible
            one costs a second scoring and gold build per trial.
        max_infra_error_share: the flow run ends FAILED (after storing every score) when more
            than this share of the run's finished trials are infrastructure errors, or all of
            them; default the max_infra_error_share setting (0.2).
        reuse_kept_scores: find scores kept by content instead of scoring again (and keep
            new ones); False scores every trial afresh (kept scores are then replaced).
        dask: score the chunks on a Dask cluster: ``tcp://host:port`` (an existing
            scheduler) or ``local[:N]`` (N worker processes here); each chunk is one task,
            one per worker thread. The workers share the artifact store and the work folder
            (one machine, or a filesystem they share), so each task's gold is built once for
            the cluster; a judge on the mock server needs workers on this machine.
    """
    logger = get_run_logger()
    t0 = time.monotonic()
    dbt_before = dbt_invocations()
    settings = load_settings()
    run = RunStore(open_store(settings.artifact_root), run_id)
    plan = plan_scoring(run, rescore, chunk_size)
    logger.info(plan.line())
    work = str(work_root(settings) / "scoring")
    progress.emit(Planned(pending=len(plan.todo), skipped=plan.skipped))
    statuses: dict[str, int] = {}
    errors: dict[str, str] = {}
    usage: JudgeUsage | None = None
    store = ScoreStore(open_store(settings.artifact_root)) if reuse_kept_scores else None
    memo = ScoreMemo(store)
    elsewhere = ChunkScores()  # what chunks scored in other processes cost
    if unsandboxed and plan.todo:
        logger.warning("scoring run %s WITHOUT a sandbox (explicitly requested)", run_id)
    if plan.todo and dask:
        elsewhere, usage = _score_on_cluster(
            dask, workers, plan, settings, work, unsandboxed, judge_model, judge,
            show_heldout_examples, visible_scores, reuse_kept_scores,
        )  # fmt: skip
        statuses, errors = elsewhere.statuses, elsewhere.scoring_errors
    elif plan.todo:
        here, usage = _score_in_threads(
            workers, plan, settings, work, unsandboxed, memo, judge_model, judge,
            show_heldout_examples, visible_scores,
        )  # fmt: skip
        statuses, errors = here.statuses, here.scoring_errors
    if usage is not None:
        logger.info("run %s: %s", run_id, usage.line())
    if errors:
        logger.warning(
            "run %s: %d trials had a scoring error (listed apart, scored again by the "
            "next score_run): %s",
            run_id,
            len(errors),
            ", ".join(sorted(errors)),
        )
    infra = tally_infra_errors(run, plan.finished)
    result = ScoreSummary(
        run_id=run_id,
        dbt_invocations=dbt_invocations() - dbt_before + elsewhere.dbt_invocations,
        kept_scores_used=(store.hits if store is not None else 0) + elsewhere.kept_scores_used,
        scores_kept=(store.kept if store is not None else 0) + elsewhere.scores_kept,
        scored=len(plan.todo),
        skipped=plan.skipped,
        statuses=statuses,
        seconds=time.monotonic() - t0,
        judge=usage,
        scoring_errors=dict(sorted(errors.items())),
        infra=infra,
    )
    check_infra_errors([infra], _max_share(max_infra_error_share), result)
    return result


def _score_in_threads(
    workers: int,
    plan: ScorePlan,
    settings: BenchforgeSettings,
    work: str,
    unsandboxed: bool,
    memo: ScoreMemo,
    judge_model: str | None,
    judge_settings: JudgeSettings | None,
    show_heldout_examples: bool,
    visible_scores: bool,
) -> tuple[ChunkScores, JudgeUsage | None]:
    """The chunks of ``plan`` scored on threads of this process, sharing one gold cache, one
    memo (identical submissions scored once) and one judge, gone when the flow run ends."""
    total = ChunkScores()
    usage: JudgeUsage | None = None
    gold = GoldCache(Path(work))
    with ExitStack() as stack:
        the_judge: Judge | None = None
        mock = False
        if plan.judged:
            the_judge, mock = stack.enter_context(
                judge_session(
                    settings, work_root(settings), model=judge_model, judge_settings=judge_settings
                )
            )
        runner: Any = ThreadPoolTaskRunner(max_workers=workers)
        for part in _score_chunks(
            runner,
            plan.run_id,
            plan.chunks,
            work,
            unsandboxed,
            gold,
            memo,
            the_judge,
            show_heldout_examples,
            visible_scores,
        ):
            total = total.plus(part)
        if the_judge is not None:
            usage = JudgeUsage.of(the_judge, mock)
    return total, usage


@task(name="score-chunk", cache_policy=NO_CACHE)
def score_chunk_elsewhere(job: ScoreJob, slugs: list[str]) -> ChunkScores:
    """Scores ``slugs`` on a worker of a cluster (:func:`score_job_chunk`)."""

    def report(result: TrialResult, score: TrialScore) -> None:
        progress.emit(
            TrialDone(slug=result.key.slug, status=score.status, termination=result.termination)
        )

    return score_job_chunk(job, slugs, on_scored=[report])


def _score_on_cluster(
    dask: str,
    workers: int,
    plan: ScorePlan,
    settings: BenchforgeSettings,
    work: str,
    unsandboxed: bool,
    judge_model: str | None,
    judge_settings: JudgeSettings | None,
    show_heldout_examples: bool,
    visible_scores: bool,
    reuse_kept_scores: bool,
) -> tuple[ChunkScores, JudgeUsage | None]:
    """The chunks of ``plan`` scored as tasks on a Dask cluster; their summed outcome and cost,
    and the judge's usage over all of them."""
    total = ChunkScores()
    usage: JudgeUsage | None = None
    with ExitStack() as stack:
        config, mock = None, False
        if plan.judged:  # held here, e.g. the mock server the workers' judges call
            the_judge, mock = stack.enter_context(
                judge_session(
                    settings, work_root(settings), model=judge_model, judge_settings=judge_settings
                )
            )
            config = the_judge.llm.client.config
            usage = JudgeUsage.of(the_judge, mock)
        job = ScoreJob(
            run_id=plan.run_id,
            artifact_root=settings.artifact_root,
            work=work,
            unsandboxed=unsandboxed,
            judge=config,
            judge_settings=judge_settings,
            judge_mock=mock,
            show_heldout_examples=show_heldout_examples,
            visible_scores=visible_scores,
            reuse_kept_scores=reuse_kept_scores,
        )
        with _api_url_for_workers(dask), _task_runner(dask, workers) as runner:
            futures = [
                runner.submit(score_chunk_elsewhere, parameters={"job": job, "slugs": part})
                for part in plan.chunks
            ]
            wait(futures)
            parts: list[ChunkScores] = [f.result() for f in futures]
    for part in parts:
        total = total.plus(part)
    if total.judge is not None:
        usage = total.judge.plus(usage)
    return total, usage


def _score_chunks(
    runner: Any,
    run_id: str,
    parts: list[list[str]],
    work: str,
    unsandboxed: bool,
    gold: GoldCache,
    memo: ScoreMemo,
    judge: Judge | None,
    show_heldout_examples: bool,
    visible_scores: bool,
) -> list[ChunkScores]:
    with runner:
        futures = [
            runner.submit(
                score_chunk,
                parameters={
                    "run_id": run_id,
                    "slugs": part,
                    "work": work,
                    "unsandboxed": unsandboxed,
                    "gold": gold,
                    "memo": memo,
                    "judge": judge,
                    "show_heldout_examples": show_heldout_examples,
                    "visible_scores": visible_scores,
                },
            )
            for part in parts
        ]
        wait(futures)
        return [f.result() for f in futures]

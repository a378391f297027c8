"""Planning a run, without an orchestrator: from a request (suites, agents, models, epochs,
limits, datasets) to what its chunks are given.

:func:`planned_run` checks the request, resolves every task's datasets by role (and their
held-out twins), fixes the run's identity, refuses a resume with other inputs, writes the run's
spec when it is new, lays out the trial matrix, leaves out the trials already done (resume) and
cuts the rest into chunks. :func:`plan_scoring` does the same for scoring a stored run. The
flows only hand the chunks to their workers.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from benchforge.core.records import AgentLimits, LlmOptions, RunSpec
from benchforge.core.sandbox import default_backend
from benchforge.core.scratch import shared_until_last
from benchforge.core.settings import BenchforgeSettings
from benchforge.evaluation.families import get_family
from benchforge.evaluation.tasks import LoadedTask
from benchforge.harness.chunk import ChunkJob
from benchforge.harness.datasets import Synthesizer, resolve_datasets, resolve_heldout, roles_of
from benchforge.harness.endpoints import llm_configs, llm_endpoint, uses_mock
from benchforge.harness.identity import check_rerun, run_identity
from benchforge.harness.infra_errors import tally_infra_errors
from benchforge.harness.matrix import chunked, expand
from benchforge.harness.models import ChunkSummary, RunSummary, TrialPlan
from benchforge.harness.postgres import run_postgres
from benchforge.harness.preflight import check_request, model_pairing, resolve_models
from benchforge.harness.sandbox_policy import hidden_paths, work_root
from benchforge.harness.store import RunStore


class RunRequest(BaseModel):
    """What a run is asked for (``run_suite``'s parameters, less how chunks are spread)."""

    suites: list[str]
    agents: list[str]
    models: list[str] = Field(default_factory=list)
    epochs: int = Field(default=1, ge=1)
    concurrency: int = Field(default=8, ge=1, description="trials at once, in all")
    sandbox_concurrency: int = Field(default=4, ge=1)
    llm_concurrency: int = Field(default=16, ge=1, description="model calls at once, per model")
    chunk_size: int = Field(default=25, ge=1)
    processes: int = Field(
        default=1, ge=1, description="processes running chunks; each gets a share of the limits"
    )
    tasks_root: str = "task_specs"
    task_ids: list[str] | None = None
    limits: AgentLimits = Field(default_factory=AgentLimits)
    datasets: dict[str, str] = Field(
        default_factory=dict, description="domain -> dataset folder or s3:// prefix to use"
    )
    retry_infra_errors: bool = True
    llm: LlmOptions = Field(default_factory=LlmOptions)
    heldout: bool = True


class RunPlan(BaseModel):
    """A planned run: its spec (as stored in ``run.json``), the whole trial matrix, the trials
    still to run and their chunks, and the job every chunk is given."""

    model_config = ConfigDict(frozen=True)

    spec: RunSpec
    tasks: list[LoadedTask]
    trials: list[TrialPlan]
    pending: list[TrialPlan]
    chunks: list[list[TrialPlan]]
    job: ChunkJob

    @property
    def run_id(self) -> str:
        return self.spec.run_id

    @property
    def skipped(self) -> int:
        """Trials already done (a resumed run), not run again."""
        return len(self.trials) - len(self.pending)

    def line(self) -> str:
        return (
            f"run {self.run_id}: {len(self.trials)} trials, {self.skipped} done, "
            f"{len(self.pending)} to run"
        )


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


@contextmanager
def planned_run(
    request: RunRequest, run: RunStore, settings: BenchforgeSettings, *, synthesize: Synthesizer
) -> Iterator[RunPlan]:
    """Plans ``request`` as the run ``run`` (see the module's docstring) and holds the model
    endpoint its agents call (the mock server, when models are called without an API key)
    and, when a task's data places databases on PostgreSQL, the run's server (configured, or
    started now and stopped after: :func:`benchforge.harness.postgres.run_postgres`) while the
    caller runs the chunks; once they all ran, the task templates and any workspace
    a crash left are removed. ``synthesize`` builds a missing default dataset."""
    has_key = settings.openai_api_key is not None
    models = resolve_models(request.agents, request.models, has_key)
    checked = check_request(
        request.tasks_root,
        request.suites,
        request.task_ids,
        request.agents,
        models,
        request.datasets,
        has_key,
    )
    tasks, agents = checked.tasks, checked.agents
    pairing = model_pairing(checked, request.models, has_key)
    work = work_root(settings)
    dataset_dirs = resolve_datasets(tasks, request.datasets, work, synthesize=synthesize)
    heldout_dirs = (
        resolve_heldout(tasks, request.datasets, work, synthesize=synthesize)
        if request.heldout
        else {}
    )
    identity = run_identity(
        tasks,
        agents,
        models,
        request.epochs,
        request.limits,
        request.llm,
        dataset_dirs,
        heldout_dirs,
    )
    mock = uses_mock(settings, checked.uses_model)
    needs_postgres = any(get_family(t.spec.family).uses_postgres(t) for t in tasks)
    with (
        llm_endpoint(settings, mock) as base_url,
        run_postgres(settings.postgres_url, needs_postgres) as postgres_url,
    ):
        spec = RunSpec(
            run_id=run.run_id,
            suites=request.suites,
            tasks_root=request.tasks_root,
            agents=request.agents,
            models=models,
            epochs=request.epochs,
            limits=request.limits,
            llm_base_url=base_url,
            mock_llm=mock,
            datasets=dataset_dirs,
            heldout_datasets=heldout_dirs,
            identity=identity,
            created_at=datetime.now(UTC),
        )
        previous = run.read_spec()
        check_rerun(previous, identity, spec.matrix())
        if previous is None:
            run.write_spec(spec)
        trials = with_dataset_roles(
            expand(
                tasks,
                agents,
                models,
                request.epochs,
                primary_datasets(tasks, dataset_dirs),
                agent_models=pairing,
            ),
            tasks,
            dataset_dirs,
        )
        states = run.trial_states()
        redo = (
            {slug for slug, state in states.items() if state == "infra_error"}
            if request.retry_infra_errors
            else set()
        )
        pending = [p for p in trials if p.key.slug not in states or p.key.slug in redo]
        shares = request.processes
        job = ChunkJob(
            run_id=run.run_id,
            artifact_root=settings.artifact_root,
            scratch=str(work / "workspaces"),
            work=str(work / "scoring"),
            limits=request.limits,
            llm_configs=llm_configs(
                settings,
                models,
                base_url,
                max(1, request.llm_concurrency // shares),
                mock,
                request.llm,
            ),
            trial_concurrency=max(1, math.ceil(request.concurrency / shares)),
            sandbox_concurrency=max(1, math.ceil(request.sandbox_concurrency / shares)),
            hidden=hidden_paths(settings, tasks, work),
            allowed_read_only=[str(p) for p in settings.sandbox_allowed_read_only],
            task_folders={
                f"{t.spec.suite}|{t.spec.id}|{t.spec.version}": str(t.folder) for t in tasks
            },
            previous_attempts={slug: 1 for slug in redo},
            datasets=dataset_dirs,
            postgres_url=SecretStr(postgres_url) if postgres_url else None,
        )
        # other processes may run this run id at once: the last one out removes it
        with shared_until_last(Path(job.scratch) / run.run_id):
            yield RunPlan(
                spec=spec,
                tasks=tasks,
                trials=trials,
                pending=pending,
                chunks=chunked(pending, request.chunk_size) if pending else [],
                job=job,
            )


def primary_datasets(tasks: list[LoadedTask], dataset_dirs: dict[str, str]) -> dict[str, Path]:
    """task key -> the local folder of its primary dataset, from the run's dataset map."""
    return {t.key: Path(dataset_dirs[t.key]) for t in tasks if t.key in dataset_dirs}


def with_dataset_roles(
    trials: list[TrialPlan], tasks: list[LoadedTask], dataset_dirs: dict[str, str]
) -> list[TrialPlan]:
    """``trials`` given every dataset of their task by role (what their agents get mounted)."""
    by_task = {(t.spec.suite, t.spec.id, t.spec.version): roles_of(t, dataset_dirs) for t in tasks}
    return [
        plan.model_copy(
            update={
                "dataset_dirs": by_task.get(
                    (plan.key.suite, plan.key.task_id, plan.key.task_version), {}
                )
            }
        )
        for plan in trials
    ]


def run_summary(plan: RunPlan, run: RunStore, ran: ChunkSummary, seconds: float) -> RunSummary:
    """What a run did: ``ran`` (its chunks' merged summaries) against its plan, and the
    infrastructure errors among all its finished trials."""
    return RunSummary(
        run_id=plan.run_id,
        uri=run.uri(),
        trials=len(plan.trials),
        skipped=plan.skipped,
        ran=ran.trials,
        completed=ran.completed,
        infra_errors=ran.infra_errors,
        seconds=seconds,
        chunks=len(plan.chunks),
        mock_llm=plan.spec.mock_llm,
        isolation=default_backend().isolation(),
        terminations=ran.terminations,
        infra=tally_infra_errors(run, [p.key.slug for p in plan.trials]),
    )


class ScorePlan(BaseModel):
    """Scoring a stored run: its finished trials, those to score now, and their chunks."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    finished: list[str]
    todo: list[str]
    chunks: list[list[str]]
    judged: bool = Field(description="some trial to score is of a judged family (needs a judge)")

    @property
    def skipped(self) -> int:
        return len(self.finished) - len(self.todo)

    def line(self) -> str:
        return f"run {self.run_id}: {len(self.finished)} finished trials, {len(self.todo)} to score"


def plan_scoring(run: RunStore, rescore: bool, chunk_size: int) -> ScorePlan:
    """The finished trials of ``run`` with no score yet or a scoring error (all of them with
    ``rescore``), in chunks of ``chunk_size``."""
    if chunk_size < 1:
        raise ValueError("chunk size must be >= 1")
    run.require_spec()
    finished = sorted(run.finished_slugs())
    states = run.score_states()
    done = set() if rescore else {s for s, state in states.items() if state == "scored"}
    todo = [s for s in finished if s not in done]
    families = {run.read_result(slug).family for slug in todo}
    return ScorePlan(
        run_id=run.run_id,
        finished=finished,
        todo=todo,
        chunks=[todo[i : i + chunk_size] for i in range(0, len(todo), chunk_size)],
        judged=any(get_family(name).judged for name in families),
    )

"""Runs trials: prepares each private workspace, runs the agent under its limits, archives what
it left, writes the result artifact last. Plain asyncio; the flows decide how chunks spread.

Concurrency: ``trial_slots`` bounds trials in flight and ``sandbox_slots`` bounds sandboxed
commands running at once; both are process-wide (``SharedSemaphore``), so every chunk running
in this process shares them. LLM calls are bounded per model by the client's own limiter.
"""

from __future__ import annotations

import asyncio
import io
import shutil
import tarfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from benchforge.agents.builtin.oracle import SolutionProvider
from benchforge.agents.protocol import Agent, AgentOutcome, TaskEnvironment, Trajectory
from benchforge.agents.registry import build_agent
from benchforge.agents.tools.toolsets import toolset
from benchforge.core.llm import (
    LlmClient,
    LlmClientView,
    LlmConfig,
    LlmInfrastructureError,
    SharedSemaphore,
    llm_totals,
)
from benchforge.core.records import AgentLimits, TrialResult
from benchforge.core.sandbox import (
    Isolation,
    SandboxBackend,
    SandboxError,
    SandboxRequest,
    SandboxResult,
)
from benchforge.core.scratch import private_folder
from benchforge.evaluation.dbt.runner import PROFILES_DIR
from benchforge.evaluation.families import family_of
from benchforge.evaluation.families import workspace as materialize_workspace
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.models import ChunkSummary, TrialPlan
from benchforge.harness.postgres import TrialPostgresError, trial_databases
from benchforge.harness.store import RunStore

# Left out of submissions: build outputs and the agent's dev database are not the answer.
EXCLUDED_NAMES = frozenset(
    {
        "target",
        "logs",
        "dbt_packages",
        ".user.yml",
        "dev.duckdb",
        "dev.duckdb.wal",
        PROFILES_DIR,
        "__pycache__",
    }
)


class LimitedSandbox:
    """A sandbox backend that holds a slot of the run's sandbox limit while a command runs."""

    def __init__(self, backend: SandboxBackend, slots: SharedSemaphore) -> None:
        self.backend = backend
        self.slots = slots
        self.name = backend.name
        self._isolation = backend.isolation()  # fixed for a backend; asked once per trial

    def isolation(self) -> Isolation:
        return self._isolation

    def run(self, request: SandboxRequest) -> SandboxResult:
        return self.backend.run(request)

    async def run_async(self, request: SandboxRequest) -> SandboxResult:
        await self.slots.acquire()
        try:
            return await self.backend.run_async(request)
        finally:
            self.slots.release()


@dataclass
class RunContext:
    run: RunStore
    scratch: Path
    sandbox: SandboxBackend
    limits: AgentLimits
    llm_configs: dict[str, LlmConfig]
    trial_slots: SharedSemaphore
    solutions: SolutionProvider
    work: Path | None = None  # scoring scratch: gold builds, data prepared for agents
    hidden: list[Path] = field(default_factory=list)
    allowed_read_only: list[Path] = field(default_factory=list)  # sandbox_allowed_read_only
    previous_attempts: dict[str, int] = field(default_factory=dict)
    on_trial_done: list[Callable[[TrialResult], None]] = field(default_factory=list)
    postgres_url: str | None = None  # the run's PostgreSQL server (harness.postgres)


Snapshot = dict[str, tuple[int, int]]
INLINE_LIMIT = 256 * 1024  # changed text files up to this total go inline in result.json


def _snapshot(root: Path) -> Snapshot:
    found = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and not _excluded(path.relative_to(root)):
            stat = path.stat()
            found[path.relative_to(root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return found


def _excluded(relative: Path) -> bool:
    return any(part in EXCLUDED_NAMES for part in relative.parts)


def archive_files(root: Path, relatives: Sequence[str]) -> bytes:
    """A tar.gz of ``relatives`` under ``root`` (regular files only: an agent could plant a
    symlink to a host path)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for relative in relatives:
            path = root / relative
            if path.is_file() and not path.is_symlink():
                tar.add(path, arcname=relative, recursive=False)
    return buffer.getvalue()


def extract_archive(archive: bytes, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")


def prepare_workspace(task: LoadedTask, workspace: Path) -> str:
    """What the task exposes, in ``workspace``; returns the prompt."""
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir(parents=True)
    materialize_workspace(task, workspace)
    names = sorted(
        p.name + ("/" if p.is_dir() else "")
        for p in workspace.iterdir()
        if not p.name.startswith(".")
    )
    return (workspace / "TASK.md").read_text() + f"\nYour workspace holds: {', '.join(names)}\n"


@dataclass(frozen=True)
class Materials:
    """A task's workspace, prepared once per run and process, copied for each trial (with
    timestamps, so a trial's changes are the files whose size or mtime differ)."""

    template: Path
    files: Snapshot
    prompt: str
    key: str  # artifact key of the archived template: scoring rebuilds workspaces from it


class MaterialsCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: dict[tuple[str, str], Materials] = {}

    def get(self, task: LoadedTask, run: RunStore, scratch: Path) -> Materials:
        ident = (run.run_id, task.key)
        with self._lock:
            known = self._built.get(ident)
            if known is None or not known.template.is_dir():  # removed when its run ended
                self._built[ident] = self._build(task, run, scratch)
            return self._built[ident]

    @staticmethod
    def _build(task: LoadedTask, run: RunStore, scratch: Path) -> Materials:
        spec = task.spec
        name = f"{spec.suite}/{spec.id}@{spec.version}"
        template = scratch / run.run_id / ".materials" / name / uuid.uuid4().hex[:8]
        prompt = prepare_workspace(task, template)
        files = _snapshot(template)
        key = run.materials_key(name)
        if not run.store.exists(key):  # the same task version always gives the same files
            run.store.put_bytes(key, archive_files(template, sorted(files)))
        return Materials(template=template, files=files, prompt=prompt, key=key)


MATERIALS = MaterialsCache()


def _checkout(materials: Materials, workspace: Path) -> None:
    if workspace.exists():
        shutil.rmtree(workspace)  # a trial that crashed half-way starts again from scratch
    workspace.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(materials.template, workspace, symlinks=True)


@dataclass
class TrialOutputs:
    changed: list[str]
    deleted: list[str]
    inline: dict[str, str]
    archive: bytes | None


def collect_outputs(materials: Materials, workspace: Path) -> TrialOutputs:
    after = _snapshot(workspace)
    changed = sorted(rel for rel, sig in after.items() if materials.files.get(rel) != sig)
    deleted = sorted(set(materials.files) - set(after))
    inline: dict[str, str] = {}
    total = sum(after[rel][0] for rel in changed)
    if total <= INLINE_LIMIT:
        try:
            inline = {rel: (workspace / rel).read_text(encoding="utf-8") for rel in changed}
        except (UnicodeDecodeError, OSError):
            inline = {}
    archive = None if len(inline) == len(changed) else archive_files(workspace, changed)
    return TrialOutputs(
        changed=changed, deleted=deleted, inline=inline if not archive else {}, archive=archive
    )


def rebuild_workspace(run: RunStore, result: TrialResult, dest: Path) -> Path:
    """The workspace as the agent left it (build outputs aside): the task's materials, minus
    what it deleted, plus what it changed."""
    if dest.exists():
        shutil.rmtree(dest)
    if result.materials is not None:
        extract_archive(run.store.get_bytes(result.materials), dest)
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    for rel in result.deleted_files:
        (dest / rel).unlink(missing_ok=True)
    for rel, content in result.outputs.items():
        path = (dest / rel).resolve()
        if not path.is_relative_to(root):
            raise ValueError(f"{result.key.slug}: output path {rel!r} leaves the workspace")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    if result.submission is not None:
        extract_archive(run.store.get_bytes(result.submission), dest)
    return dest


async def _agent_data(
    task: LoadedTask, plan: TrialPlan, ctx: RunContext
) -> tuple[Path | None, dict[str, Path]]:
    """The data folders the agent gets: every dataset of the task by role, each as its family
    prepares it (the analysis-ready marts of a DA task, built once and cached on disk by the
    family), and the primary one among them."""
    roles = {role: Path(folder) for role, folder in plan.dataset_dirs.items()}
    primary = task.spec.primary_role
    if plan.dataset_dir:
        roles[primary] = Path(plan.dataset_dir)
    if ctx.work is not None:
        family, work = family_of(task), ctx.work
        for role, folder in roles.items():
            roles[role] = await asyncio.to_thread(family.agent_data, task, folder, work, role)
    return roles.get(primary) if plan.dataset_dir else None, roles


async def run_trial(
    plan: TrialPlan, task: LoadedTask, agent: Agent, llm: LlmClient | None, ctx: RunContext
) -> TrialResult:
    key = plan.key
    started_at, t0 = datetime.now(UTC), time.monotonic()
    # private to this attempt: another process running the same run (a second nightly with
    # the same parameters) may be on this trial too, and each removes its own folder
    workspace = private_folder(ctx.scratch / ctx.run.run_id, key.slug) / "workspace"
    materials = MATERIALS.get(task, ctx.run, ctx.scratch)
    trajectory = Trajectory()
    # The trial's view of the shared client: its own ledger, and it records the model steps.
    view = LlmClientView(llm, steps=trajectory, epoch=key.epoch) if llm is not None else None
    family = family_of(task)
    data_dir, data_dirs = await _agent_data(task, plan, ctx)
    env = TaskEnvironment(
        key=key,
        family=task.spec.family,
        prompt=materials.prompt,
        workspace_path=workspace,
        materialize=lambda path: _checkout(materials, path),
        data_dir=data_dir,
        data_dirs=data_dirs,
        tools=toolset(family.toolset),
        submission=family.submission,
        limits=ctx.limits,
        sandbox=ctx.sandbox,
        hidden=list(ctx.hidden),
        allowed_read_only=list(ctx.allowed_read_only),
        llm=view,
        trajectory=trajectory,
    )
    status: Literal["completed", "infra_error"] = "completed"
    databases = AsyncExitStack()
    try:
        templates = family.postgres_templates(task, data_dir) if data_dir is not None else None
        if data_dir is not None and templates is not None:
            env.postgres = await databases.enter_async_context(
                trial_databases(
                    ctx.postgres_url, data_dir, templates, f"{ctx.run.run_id}/{key.slug}"
                )
            )
        outcome = await asyncio.wait_for(agent.run(env), timeout=ctx.limits.wall_s)
    except TrialPostgresError as exc:
        status = "infra_error"
        outcome = AgentOutcome(termination="infra_error", error=f"{type(exc).__name__}: {exc}")
    except TimeoutError:
        outcome = AgentOutcome(
            termination="wall_clock", error=f"the trial ran past {ctx.limits.wall_s:g} s"
        )
    except (LlmInfrastructureError, SandboxError) as exc:
        status = "infra_error"
        outcome = AgentOutcome(termination="infra_error", error=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # the agent's own failure is its result, scored on what it left
        tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
        outcome = AgentOutcome(termination="agent_error", error=tb)
    finally:
        await databases.aclose()
    # Every step recorded up to the stop is kept; one still in flight (the model call or the
    # command the wall clock cut short) is recorded as interrupted.
    if outcome.termination == "wall_clock":
        interrupted = f"interrupted: the trial ran past its wall clock ({ctx.limits.wall_s:g} s)"
    else:
        interrupted = f"interrupted: {outcome.error or 'the agent stopped before the step ended'}"
    steps = env.trajectory.close(interrupted)
    # the view's ledger holds every call made through it; the model steps the agent recorded
    # itself are its calls made outside the view
    by_agent = env.trajectory.model_steps_by_agent()
    totals = llm_totals([*by_agent, *(view.ledger.records() if view is not None else [])])
    used_mock = any(s.used_mock for s in by_agent)
    if view is not None:
        used_mock = used_mock or view.ledger.used_mock()
    result = TrialResult(
        run_id=ctx.run.run_id,
        key=key,
        family=task.spec.family,
        status=status,
        termination=outcome.termination,
        answer=outcome.answer,
        error=outcome.error,
        materials=materials.key,
        trajectory=steps,
        llm=totals,
        used_mock_llm=used_mock,
        isolation=ctx.sandbox.isolation(),
        started_at=started_at,
        finished_at=datetime.now(UTC),
        wall_s=time.monotonic() - t0,
        attempt=ctx.previous_attempts.get(key.slug, 0) + 1,
    )
    if not env.workspace_used:  # nothing to collect: write the result here, no thread hop
        ctx.run.write_result(result)
        return result
    return await asyncio.to_thread(_finish, ctx, materials, workspace, result)


def _finish(
    ctx: RunContext, materials: Materials, workspace: Path, result: TrialResult
) -> TrialResult:
    """Stores what the agent left, then the result (last: the trial is now done)."""
    outputs = collect_outputs(materials, workspace)
    submission = None
    if outputs.archive is not None:
        submission = ctx.run.write_submission(result.key.slug, outputs.archive)
    result = result.model_copy(
        update={
            "output_files": outputs.changed,
            "deleted_files": outputs.deleted,
            "outputs": outputs.inline,
            "submission": submission,
        }
    )
    ctx.run.write_result(result)
    shutil.rmtree(workspace.parent, ignore_errors=True)
    return result


def _already_run(plan: TrialPlan, ctx: RunContext) -> TrialResult | None:
    """The trial's result if this attempt of it is already stored. A chunk runs again when
    its worker died before handing its summary back (a Dask worker killed mid-run: the
    scheduler recomputes every task whose result it lost, finished trials included); the
    trials it had finished keep their results and are not run twice."""
    slug = plan.key.slug
    if not ctx.run.has_result(slug):
        return None
    result = ctx.run.read_result(slug)
    return result if result.attempt > ctx.previous_attempts.get(slug, 0) else None


async def run_chunk(plans: Sequence[TrialPlan], ctx: RunContext) -> ChunkSummary:
    """Runs ``plans`` concurrently (bounded by the context's slots) in this event loop."""
    t0 = time.monotonic()
    tasks: dict[str, LoadedTask] = {}
    agents: dict[str, Agent] = {}
    clients: dict[str, LlmClient] = {}
    summary = ChunkSummary()

    def resources(plan: TrialPlan) -> tuple[LoadedTask, Agent, LlmClient | None]:
        if plan.task_folder not in tasks:
            tasks[plan.task_folder] = load_task(Path(plan.task_folder))
        if plan.agent_spec not in agents:
            agents[plan.agent_spec] = build_agent(plan.agent_spec, ctx.solutions)
        agent = agents[plan.agent_spec]
        client = None
        if agent.uses_model:
            model = plan.key.model
            if model not in clients:
                clients[model] = LlmClient(ctx.llm_configs[model])
            client = clients[model]
        return tasks[plan.task_folder], agent, client

    async def one(plan: TrialPlan) -> None:
        await ctx.trial_slots.acquire()
        try:
            result = await asyncio.to_thread(_already_run, plan, ctx)
            if result is None:
                task, agent, client = resources(plan)
                result = await run_trial(plan, task, agent, client, ctx)
        finally:
            ctx.trial_slots.release()
        summary.trials += 1
        summary.completed += result.status == "completed"
        summary.infra_errors += result.status == "infra_error"
        summary.terminations[result.termination] = (
            summary.terminations.get(result.termination, 0) + 1
        )
        for callback in ctx.on_trial_done:
            callback(result)

    try:
        outcomes = await asyncio.gather(*(one(plan) for plan in plans), return_exceptions=True)
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        if failures:  # the harness itself failed (e.g. the store); finished trials are kept
            raise failures[0]
    finally:
        for client in clients.values():
            await client.aclose()
    summary.seconds = time.monotonic() - t0
    return summary

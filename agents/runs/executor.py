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
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from agents.builtin.oracle import SolutionProvider
from agents.llm import LlmClient, LlmConfig, LlmInfrastructureError, LlmTotals, SharedSemaphore
from agents.protocol import Agent, AgentLimits, AgentOutcome, Step, TaskEnvironment, TrialResult
from agents.registry import build_agent
from agents.runs.models import ChunkSummary, TrialPlan
from agents.runs.store import RunStore
from agents.tools.de import DE_TOOLS, PROFILES_DIR
from benchforge.sandbox import (
    Isolation,
    SandboxBackend,
    SandboxError,
    SandboxRequest,
    SandboxResult,
)
from evaluation.dbt.runner import write_profile
from evaluation.de.tasks import workspace as materialize_workspace
from evaluation.tasks.loader import load_task
from evaluation.tasks.models import LoadedTask

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

    def isolation(self) -> Isolation:
        return self.backend.isolation()

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
    hidden: list[Path] = field(default_factory=list)
    previous_attempts: dict[str, int] = field(default_factory=dict)
    on_trial_done: list[object] = field(default_factory=list)


def llm_totals(steps: Sequence[Step]) -> LlmTotals:
    totals = LlmTotals()
    for step in steps:
        if step.kind != "model":
            continue
        totals.calls += 1
        totals.errors += not step.ok
        totals.cache_hits += bool(step.cache_hit)
        totals.attempts += step.attempts or 0
        totals.prompt_tokens += step.prompt_tokens or 0
        totals.completion_tokens += step.completion_tokens or 0
        if step.cost_usd is not None:
            totals.cost_usd += step.cost_usd
        elif step.ok:
            totals.unpriced_calls += 1
    return totals


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and not _excluded(path.relative_to(root)):
            stat = path.stat()
            found[path.relative_to(root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return found


def _excluded(relative: Path) -> bool:
    return any(part in EXCLUDED_NAMES for part in relative.parts)


def archive_workspace(root: Path) -> bytes:
    """The submission: every regular file of the workspace but build outputs; symlinks and
    special files are dropped (an agent could point one at a host path)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if path.is_symlink() or _excluded(relative) or not path.is_file():
                continue
            tar.add(path, arcname=relative.as_posix(), recursive=False)
    return buffer.getvalue()


def extract_submission(archive: bytes, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")
    return dest


def prepare_workspace(task: LoadedTask, workspace: Path) -> str:
    """A fresh private workspace with what the task exposes; returns the prompt."""
    if workspace.exists():
        shutil.rmtree(workspace)  # a trial that crashed half-way starts again from scratch
    workspace.mkdir(parents=True)
    materialize_workspace(task, None, workspace)
    write_profile(workspace / PROFILES_DIR, threads=1)
    listing = ", ".join(
        sorted(
            p.name + ("/" if p.is_dir() else "")
            for p in workspace.iterdir()
            if p.name != PROFILES_DIR
        )
    )
    return (workspace / "TASK.md").read_text() + f"\nYour workspace holds: {listing}\n"


async def run_trial(
    plan: TrialPlan, task: LoadedTask, agent: Agent, llm: LlmClient | None, ctx: RunContext
) -> TrialResult:
    key = plan.key
    started_at, t0 = datetime.now(UTC), time.monotonic()
    workspace = ctx.scratch / ctx.run.run_id / key.slug / "workspace"
    prompt = await asyncio.to_thread(prepare_workspace, task, workspace)
    before = await asyncio.to_thread(_snapshot, workspace)
    env = TaskEnvironment(
        key=key,
        family=task.spec.family,
        prompt=prompt,
        workspace=workspace,
        data_dir=Path(plan.dataset_dir) if plan.dataset_dir else None,
        tools=list(DE_TOOLS),
        limits=ctx.limits,
        sandbox=ctx.sandbox,
        hidden=list(ctx.hidden),
        llm=llm,
    )
    status = "completed"
    try:
        outcome = await asyncio.wait_for(agent.run(env), timeout=ctx.limits.wall_s)
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
    after = await asyncio.to_thread(_snapshot, workspace)
    archive = await asyncio.to_thread(archive_workspace, workspace)
    submission = await asyncio.to_thread(ctx.run.write_submission, key.slug, archive)
    totals = llm_totals(env.trajectory.steps)
    result = TrialResult(
        run_id=ctx.run.run_id,
        key=key,
        family=task.spec.family,
        status=status,
        termination=outcome.termination,
        answer=outcome.answer,
        error=outcome.error,
        output_files=sorted(rel for rel, sig in after.items() if before.get(rel) != sig),
        submission=submission,
        trajectory=env.trajectory.steps,
        llm=totals,
        used_mock_llm=any(s.used_mock for s in env.trajectory.steps),
        isolation=ctx.sandbox.isolation(),
        started_at=started_at,
        finished_at=datetime.now(UTC),
        wall_s=time.monotonic() - t0,
        attempt=ctx.previous_attempts.get(key.slug, 0) + 1,
    )
    await asyncio.to_thread(ctx.run.write_result, result)  # last: the trial is now done
    await asyncio.to_thread(shutil.rmtree, workspace.parent, True)
    return result


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
            if callable(callback):
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

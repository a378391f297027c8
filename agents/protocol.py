"""The agent protocol: what an agent is given (a task environment) and what a trial returns.

A trial is one agent configuration attempting one task version once (an epoch). It is keyed by
(suite, task id, task version, agent name, agent config hash, model, epoch) and is *done* when
its result artifact exists: the runner writes any submission archive first and ``result.json``
last, so a crash in between leaves a trial that is simply run again.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.llm import LlmClient, LlmTotals
from benchforge.core.sandbox import Isolation, SandboxBackend, SandboxLimits

Termination = Literal[
    "finished",  # the agent said it was done
    "no_action",  # the model answered without calling a tool
    "round_limit",
    "repeated_action",  # the same action three times in a row
    "wall_clock",  # the trial's wall-clock budget ran out
    "agent_error",  # the agent's own code failed (scored on what it left)
    "infra_error",  # the LLM endpoint or the sandbox failed: not the agent's fault, not scored
]


class AgentLimits(BaseModel):
    """Budgets of one trial. Defaults follow DAComp's ReAct baseline (120 s per action)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_rounds: int = Field(default=50, ge=1, description="model calls per trial")
    action_timeout_s: float = Field(default=120.0, gt=0, description="per tool call")
    wall_s: float = Field(default=1800.0, gt=0, description="whole trial")
    repeat_limit: int = Field(default=3, ge=2, description="same action this many times: stop")
    memory_mb: int = Field(default=4096, ge=64, description="per sandboxed command")
    max_processes: int = Field(default=256, ge=8)

    def sandbox_limits(self, wall_s: float | None = None) -> SandboxLimits:
        return SandboxLimits(
            wall_s=wall_s if wall_s is not None else self.action_timeout_s,
            memory_mb=self.memory_mb,
            max_processes=self.max_processes,
        )


class TrialKey(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str
    task_id: str
    task_version: str
    agent: str
    agent_config_hash: str
    model: str = Field(description="'-' when the agent calls no model")
    epoch: int = Field(ge=0)

    @property
    def slug(self) -> str:
        """A path-safe, unique name: ``suite/task@version/agent-hash/model/epoch-N``."""
        return "/".join(
            [
                _safe(self.suite),
                f"{_safe(self.task_id)}@{_safe(self.task_version)}",
                f"{_safe(self.agent)}-{self.agent_config_hash}",
                _safe(self.model),
                f"epoch-{self.epoch}",
            ]
        )


def _safe(part: str) -> str:
    """Model names like ``mock-script:x`` or ``org/model`` become one path segment."""
    cleaned = re.sub(r"[^A-Za-z0-9_.@=+-]", "_", part)
    return cleaned if cleaned not in ("", ".", "..") else "_"


def config_hash(config: BaseModel) -> str:
    """12 hex digits over the agent's canonical JSON config: another config is another agent."""
    payload = json.dumps(config.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


class Step(BaseModel):
    """One entry of a trajectory: a model call or a tool call."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["model", "tool"]
    index: int
    started_at: datetime
    seconds: float
    name: str = Field(description="the model, or the tool")
    arguments: dict[str, Any] | None = None
    output: str | None = Field(default=None, description="reply text or tool output (tail)")
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    ok: bool = True
    error: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    attempts: int | None = None
    cache_hit: bool | None = None
    used_mock: bool | None = None
    exit_code: int | None = None
    timed_out: bool | None = None
    interrupted: bool | None = Field(
        default=None, description="in flight when the trial stopped (wall clock, error)"
    )


Started = tuple[datetime, float]  # from Trajectory.start: wall-clock and monotonic start
_InFlight = tuple[Started, Literal["model", "tool"], str, dict[str, Any]]


class Trajectory:
    """Collects steps as they happen, so a trial that stops half-way keeps what it did.

    ``start(kind, name, ...)`` also registers the step as *in flight* until ``step`` records
    it; ``close`` (the runner, once the agent stopped) records any step still in flight as
    interrupted and freezes the trajectory, so a step finishing after the kill (a thread the
    cancellation could not stop) cannot change the stored record."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self._in_flight: dict[int, _InFlight] = {}  # id(started) -> what close() records
        self._closed = False
        self._lock = threading.Lock()  # a step may be recorded from a worker thread

    def start(
        self,
        kind: Literal["model", "tool"] | None = None,
        name: str | None = None,
        **fields: Any,
    ) -> Started:
        """The start of a step; with ``kind`` and ``name`` (and any ``Step`` fields known up
        front, e.g. ``arguments``) it is recorded as interrupted should the trial stop before
        ``step`` records it."""
        started = (datetime.now(UTC), time.monotonic())
        if kind is not None and name is not None:
            with self._lock:
                self._in_flight[id(started)] = (started, kind, name, fields)
        return started

    def add(self, step: Step) -> Step:
        with self._lock:
            if not self._closed:
                self.steps.append(step)
        return step

    def next_index(self) -> int:
        return len(self.steps)

    def step(
        self, kind: Literal["model", "tool"], name: str, started: Started, **fields: Any
    ) -> Step:
        """Appends a step that began at ``started`` (from ``start()``) and ends now."""
        with self._lock:
            open_step = self._in_flight.get(id(started))
            if open_step is not None and open_step[0] is started:
                del self._in_flight[id(started)]
        started_at, t0 = started
        return self.add(
            Step(
                kind=kind,
                index=self.next_index(),
                started_at=started_at,
                seconds=time.monotonic() - t0,
                name=name,
                **fields,
            )
        )

    def close(self, reason: str) -> list[Step]:
        """Records each step still in flight as interrupted (``ok=False``, ``error=reason``),
        in the order they started, stops recording, and returns the steps."""
        with self._lock:
            if not self._closed:
                now = time.monotonic()
                pending = sorted(self._in_flight.values(), key=lambda entry: entry[0][1])
                self._in_flight.clear()
                for (started_at, t0), kind, name, fields in pending:
                    self.steps.append(
                        Step(
                            **{
                                **fields,
                                "kind": kind,
                                "index": len(self.steps),
                                "started_at": started_at,
                                "seconds": now - t0,
                                "name": name,
                                "ok": False,
                                "error": reason,
                                "interrupted": True,
                            }
                        )
                    )
                self._closed = True
            return list(self.steps)


@dataclass
class TaskEnvironment:
    """What an agent receives (a runtime handle, not a record). The workspace is private to the
    trial and holds only what the task exposes; gold outputs and hidden checks live elsewhere
    and are listed in ``hidden`` so the sandbox masks them. ``data_dir`` (the dataset) is
    mounted read-only. ``env`` is extra environment for sandboxed commands.

    The workspace is materialized on first use of ``workspace``: an agent that never touches
    files (a single model call) costs no file copies."""

    key: TrialKey
    family: str
    prompt: str
    workspace_path: Path
    data_dir: Path | None
    tools: list[str]
    limits: AgentLimits
    sandbox: SandboxBackend
    hidden: list[Path] = field(default_factory=list)
    llm: LlmClient | None = None
    trajectory: Trajectory = field(default_factory=Trajectory)
    env: dict[str, str] = field(default_factory=dict)
    materialize: Callable[[Path], None] | None = None
    workspace_used: bool = False

    @property
    def workspace(self) -> Path:
        if not self.workspace_used:
            if self.materialize is not None:
                self.materialize(self.workspace_path)
            else:
                self.workspace_path.mkdir(parents=True, exist_ok=True)
            self.workspace_used = True
        return self.workspace_path


class AgentOutcome(BaseModel):
    termination: Termination
    answer: str | None = None
    error: str | None = None


class Agent(Protocol):
    """An agent. ``config`` is hashed into the trial key; ``run`` may raise
    ``LlmInfrastructureError`` (the runner records an infrastructure error)."""

    name: str

    @property
    def config(self) -> BaseModel: ...

    @property
    def uses_model(self) -> bool: ...

    async def run(self, env: TaskEnvironment) -> AgentOutcome: ...


class TrialResult(BaseModel):
    """Everything about one trial, written as ``result.json`` once the trial is over."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    key: TrialKey
    family: str
    status: Literal["completed", "infra_error"]
    termination: Termination
    answer: str | None = None
    error: str | None = None
    materials: str | None = Field(
        default=None, description="artifact key of the workspace as the task gave it"
    )
    output_files: list[str] = Field(
        default_factory=list, description="workspace files the agent created or changed"
    )
    deleted_files: list[str] = Field(default_factory=list)
    outputs: dict[str, str] = Field(
        default_factory=dict, description="small text outputs inline: path -> content"
    )
    submission: str | None = Field(
        default=None, description="archive of the changed files when they are not inline"
    )
    trajectory: list[Step] = Field(default_factory=list)
    llm: LlmTotals = Field(default_factory=LlmTotals)
    used_mock_llm: bool = False
    isolation: Isolation | None = None
    started_at: datetime
    finished_at: datetime
    wall_s: float
    attempt: int = Field(default=1, description="how many times this trial was started")

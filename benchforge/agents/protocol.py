"""The agent protocol: what an agent is given (a task environment) and what it returns.

The records around it (a trial's key, limits, trajectory steps and result) are in
:mod:`benchforge.core.records`; here are the runtime pieces: the environment handle, the
trajectory being recorded, the agent's outcome and the ``Agent`` protocol itself.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from benchforge.core.llm import LlmClientView
from benchforge.core.records import AgentLimits, Step, Termination, TrialKey
from benchforge.core.sandbox import SandboxBackend

if TYPE_CHECKING:
    from benchforge.agents.tools.toolsets import Toolset


def config_hash(config: BaseModel) -> str:
    """12 hex digits over the agent's canonical JSON config: another config is another agent."""
    payload = json.dumps(config.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:12]


Started = tuple[datetime, float]  # from Trajectory.start: wall-clock and monotonic start
_InFlight = tuple[Started, Literal["model", "tool"], str, dict[str, Any], bool]


class Trajectory:
    """Collects steps as they happen, so a trial that stops half-way keeps what it did.

    ``start(kind, name, ...)`` also registers the step as *in flight* until ``step`` records
    it; ``close`` (the runner, once the agent stopped) records any step still in flight as
    interrupted and freezes the trajectory, so a step finishing after the kill (a thread the
    cancellation could not stop) cannot change the stored record.

    Model steps come from the trial's LLM client view (``start(..., by_client=True)``); an
    agent that calls a model some other way may still record its own, and
    ``model_steps_by_agent`` lists those."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self._in_flight: dict[int, _InFlight] = {}  # id(started) -> what close() records
        self._by_client: set[int] = set()  # indices of the steps the client view recorded
        self._closed = False
        self._lock = threading.Lock()  # a step may be recorded from a worker thread

    def start(
        self,
        kind: Literal["model", "tool"] | None = None,
        name: str | None = None,
        *,
        by_client: bool = False,
        **fields: Any,
    ) -> Started:
        """The start of a step; with ``kind`` and ``name`` (and any ``Step`` fields known up
        front, e.g. ``arguments``) it is recorded as interrupted should the trial stop before
        ``step`` records it. ``by_client``: the LLM client view records this step (its call is
        in the view's ledger), not the agent."""
        started = (datetime.now(UTC), time.monotonic())
        if kind is not None and name is not None:
            with self._lock:
                self._in_flight[id(started)] = (started, kind, name, fields, by_client)
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
        by_client = False
        with self._lock:
            open_step = self._in_flight.get(id(started))
            if open_step is not None and open_step[0] is started:
                del self._in_flight[id(started)]
                by_client = open_step[4]
        started_at, t0 = started
        step = self.add(
            Step(
                kind=kind,
                index=self.next_index(),
                started_at=started_at,
                seconds=time.monotonic() - t0,
                name=name,
                **fields,
            )
        )
        if by_client:
            with self._lock:
                self._by_client.add(step.index)
        return step

    def model_steps_by_agent(self) -> list[Step]:
        """The model steps the agent recorded itself, not through the client view (a model
        called outside it): the harness adds them to the view's ledger."""
        with self._lock:
            return [s for s in self.steps if s.kind == "model" and s.index not in self._by_client]

    def close(self, reason: str) -> list[Step]:
        """Records each step still in flight as interrupted (``ok=False``, ``error=reason``),
        in the order they started, stops recording, and returns the steps."""
        with self._lock:
            if not self._closed:
                now = time.monotonic()
                pending = sorted(self._in_flight.values(), key=lambda entry: entry[0][1])
                self._in_flight.clear()
                for (started_at, t0), kind, name, fields, by_client in pending:
                    if by_client:
                        self._by_client.add(len(self.steps))
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
    mounted read-only; ``data_dirs`` holds every dataset of the task by role (a task with one
    dataset: ``primary`` -> ``data_dir``), all mounted read-only too (:meth:`data_folders`).
    ``allowed_read_only``: host paths the operator lets an agent config show although protected
    (the ``sandbox_allowed_read_only`` setting; see :class:`MountsHostPaths`). ``env`` is extra
    environment for sandboxed commands. ``llm`` is the trial's view of the shared client: it
    records each model call (ledger and model step) itself.

    The workspace is materialized on first use of ``workspace``: an agent that never touches
    files (a single model call) costs no file copies.

    ``tools``: the toolset the task's family names (``TaskFamily.toolset``); a tool-calling
    agent acts through it."""

    key: TrialKey
    family: str
    prompt: str
    workspace_path: Path
    data_dir: Path | None
    tools: Toolset
    limits: AgentLimits
    sandbox: SandboxBackend
    data_dirs: dict[str, Path] = field(default_factory=dict)
    hidden: list[Path] = field(default_factory=list)
    allowed_read_only: list[Path] = field(default_factory=list)
    llm: LlmClientView | None = None
    trajectory: Trajectory = field(default_factory=Trajectory)
    env: dict[str, str] = field(default_factory=dict)
    materialize: Callable[[Path], None] | None = None
    workspace_used: bool = False
    submission: str = "repo"  # the workspace folder holding the answer (the task family's)
    postgres: dict[str, str] = field(default_factory=dict)
    """Logical database -> the read-only conninfo of the trial's own PostgreSQL copy (made by
    the harness, ``benchforge.harness.postgres``): for the tools, never shown to the agent."""

    def data_folders(self) -> list[Path]:
        """Every data folder of the trial (``data_dir`` first), each once: what is mounted
        read-only for the agent."""
        found = [self.data_dir] if self.data_dir is not None else []
        return found + [p for p in self.data_dirs.values() if p not in found]

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


@runtime_checkable
class MountsHostPaths(Protocol):
    """An agent whose config asks its sandbox to show host paths (``command``'s ``read_only``,
    e.g. where its CLI is installed). The harness refuses any that is, lies inside or contains a
    protected path before a run starts (``benchforge.harness.sandbox_policy``), and the agent
    checks them again against ``TaskEnvironment.hidden`` when it builds its sandbox request."""

    @property
    def config_mounts(self) -> list[Path]: ...


@runtime_checkable
class ChoosesToolsets(Protocol):
    """An agent that can act only through some toolsets: the trial matrix pairs it only with
    tasks whose family names one of them. An agent without this method (oracle, null, command)
    is paired with every task."""

    def supports_toolset(self, name: str) -> bool: ...

"""One trial: its key, its budgets and its result.

A trial is one agent configuration attempting one task version once (an epoch). It is keyed by
(suite, task id, task version, agent name, agent config hash, model, epoch) and is *done* when
its result artifact exists: the runner writes any submission archive first and the result
last, so a crash in between leaves a trial that is simply run again.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.llm.records import LlmTotals
from benchforge.core.sandbox.models import Isolation, SandboxLimits

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


class Step(BaseModel):
    """One entry of a trajectory: a model call or a tool call."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["model", "tool"]
    index: int
    started_at: datetime
    seconds: float
    name: str = Field(description="the model, or the tool")
    role: str | None = Field(
        default=None,
        description="which part of the agent made this model call (ds-star: analyzer, planner, "
        "coder, ...); None for an agent with one role",
    )
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


SOLUTION_ANSWER_FILE = "ANSWER"
"""In a reference solution folder: the answer the oracle returns (for families that score an
answer); it is not copied into the submission."""


class TrialResult(BaseModel):
    """Everything about one trial, written as the trial's result artifact once it is over."""

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

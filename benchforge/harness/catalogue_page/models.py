"""What the catalogue page shows, as data: one :class:`CatalogueEntry` per task, with the
latest stored result of each agent that ran it (:class:`AgentResult`).

The models are plain and frozen so the page can be rendered (and tested) from them alone,
without a task folder or a run store at hand.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.records.verification import TaskVerification

Difficulty = Literal["easy", "medium", "hard", "unrated"]
DifficultySource = Literal["authored", "derived", "none"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DatasetInfo(_Frozen):
    """The dataset a task runs on: a shipped domain at a scale and seed, or a location (an
    imported dataset) when its spec names one."""

    domain: str | None = None
    scale: float | None = None
    seed: int | None = None
    location: str | None = None

    @property
    def label(self) -> str:
        if self.location:
            return f"{self.location}"
        parts = [self.domain or "?"]
        if self.scale is not None:
            parts.append(f"scale {self.scale:g}")
        if self.seed is not None:
            parts.append(f"seed {self.seed}")
        return " · ".join(parts)


class AgentResult(_Frozen):
    """One agent's (agent, model) trials of one task in the latest scored run that has any.

    ``metrics`` are means over the run's *scored* trials (epochs); infra errors and unscored
    trials are counted apart, never as 0, as on the leaderboard."""

    agent: str
    model: str = Field(description="'-' when the agent calls no model")
    run_id: str
    run_created_at: datetime
    task_version: str = Field(description="the task version the run scored")
    primary: str | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    trials: int = Field(ge=0, description="every trial of the task in the run, any status")
    scored: int = Field(ge=0)
    passed: int = Field(ge=0, description="scored trials with success (full marks)")
    infra_errors: int = Field(default=0, ge=0)
    unscored: int = Field(default=0, ge=0)
    mock_llm: bool = Field(default=False, description="some trial used the scripted mock LLM")
    last_scored_at: datetime | None = None

    @property
    def label(self) -> str:
        """How the page names the agent: ``agent`` alone when it calls no model."""
        return self.agent if self.model == "-" else f"{self.agent} · {self.model}"

    @property
    def primary_score(self) -> float | None:
        return self.metrics.get(self.primary) if self.primary is not None else None


class CatalogueEntry(_Frozen):
    """One task of the catalogue as the page lists it."""

    suite: str
    task_id: str
    version: str
    family: str
    title: str
    domain: str
    dataset: DatasetInfo
    tags: list[str] = Field(default_factory=list)
    difficulty: Difficulty
    difficulty_source: DifficultySource
    scored_unit: str | None = Field(
        default=None, description="what nodes_scored counts: models, changed models, rubric items"
    )
    scored_names: list[str] = Field(
        default_factory=list, description="the models or rubric item ids counted"
    )
    nodes_scored: int | None = Field(default=None, description="None: the family is unknown")
    folder: str
    results: list[AgentResult] = Field(default_factory=list)
    verification: TaskVerification | None = Field(
        default=None, description="its last stored verification (None: none stored, or not read)"
    )

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.task_id}@{self.version}"

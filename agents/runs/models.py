"""A run: the parameters it was started with and what each chunk reports back."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from agents.protocol import AgentLimits, TrialKey


class LlmOptions(BaseModel):
    """Client settings of a run's agent models (see ``LlmConfig``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=120.0, gt=0, description="per HTTP attempt")
    max_retries: int = Field(default=5, ge=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    requests_per_minute: float | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)


class RunSpec(BaseModel):
    """Written once as ``runs/<run_id>/run.json``; a rerun must ask for the same matrix."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    suites: list[str]
    tasks_root: str
    agents: list[str]
    models: list[str]
    epochs: int = Field(ge=1)
    limits: AgentLimits
    llm_base_url: str | None = None
    mock_llm: bool = False
    datasets: dict[str, str] = Field(
        default_factory=dict, description="task key -> local dataset folder it ran on"
    )
    heldout_datasets: dict[str, str] = Field(
        default_factory=dict,
        description="task key -> the held-out dataset its trials are scored on (same spec and "
        "scale, a secret seed); absent for tasks on a custom dataset",
    )
    created_at: datetime

    def matrix(self) -> tuple[object, ...]:
        """What a rerun under the same run id must ask for again."""
        return (sorted(self.suites), self.agents, self.models, self.epochs)


class TrialPlan(BaseModel):
    """One trial to run: its key, where its task lives and which agent spelling runs it."""

    model_config = ConfigDict(frozen=True)

    key: TrialKey
    task_folder: str
    agent_spec: str
    dataset_dir: str | None


class ChunkSummary(BaseModel):
    trials: int = 0
    completed: int = 0
    infra_errors: int = 0
    seconds: float = 0.0
    terminations: dict[str, int] = Field(default_factory=dict)

    def merge(self, other: ChunkSummary) -> ChunkSummary:
        terminations = dict(self.terminations)
        for reason, count in other.terminations.items():
            terminations[reason] = terminations.get(reason, 0) + count
        return ChunkSummary(
            trials=self.trials + other.trials,
            completed=self.completed + other.completed,
            infra_errors=self.infra_errors + other.infra_errors,
            seconds=max(self.seconds, other.seconds),
            terminations=terminations,
        )

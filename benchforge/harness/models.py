"""What a run's chunks are given (a trial plan) and report back (a summary). The run's own
record (``RunSpec``) is in :mod:`benchforge.core.records`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.records import TrialKey


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

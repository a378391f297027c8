"""What a run's chunks are given (a trial plan) and report back (a summary), and what a run
and a scoring of it report. The run's own record (``RunSpec``) is in
:mod:`benchforge.core.records`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.records import TrialKey
from benchforge.core.sandbox import Isolation
from benchforge.harness.infra_errors import InfraErrorTally
from benchforge.harness.judging import JudgeUsage


class TrialPlan(BaseModel):
    """One trial to run: its key, where its task lives and which agent spelling runs it."""

    model_config = ConfigDict(frozen=True)

    key: TrialKey
    task_folder: str
    agent_spec: str
    dataset_dir: str | None  # the task's (primary) dataset
    dataset_dirs: dict[str, str] = Field(
        default_factory=dict, description="role -> folder: every dataset of the task"
    )


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


class ChunkScores(BaseModel):
    """What one scoring chunk scored: trials per status, and the scoring errors; a chunk
    scored on a worker elsewhere also says what it cost (its own dbt commands, score-store
    hits and additions, judge usage)."""

    statuses: dict[str, int] = Field(default_factory=dict)
    scoring_errors: dict[str, str] = Field(default_factory=dict)  # slug -> type: message
    dbt_invocations: int = 0
    kept_scores_used: int = 0
    scores_kept: int = 0
    judge: JudgeUsage | None = None

    def plus(self, other: ChunkScores) -> ChunkScores:
        """Both chunks' outcome and cost."""
        statuses = dict(self.statuses)
        for status, count in other.statuses.items():
            statuses[status] = statuses.get(status, 0) + count
        judge = other.judge.plus(self.judge) if other.judge is not None else self.judge
        return ChunkScores(
            statuses=statuses,
            scoring_errors=self.scoring_errors | other.scoring_errors,
            dbt_invocations=self.dbt_invocations + other.dbt_invocations,
            kept_scores_used=self.kept_scores_used + other.kept_scores_used,
            scores_kept=self.scores_kept + other.scores_kept,
            judge=judge,
        )


class RunSummary(BaseModel):
    run_id: str
    uri: str
    trials: int
    skipped: int
    ran: int
    completed: int
    infra_errors: int
    seconds: float
    chunks: int
    mock_llm: bool
    isolation: Isolation
    terminations: dict[str, int] = Field(default_factory=dict)
    infra: InfraErrorTally = Field(
        description="infrastructure errors among all the run's finished trials, by reason "
        "(infra_errors counts those of the trials run now)"
    )

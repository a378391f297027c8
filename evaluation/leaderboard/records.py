"""What a scored trial looks like to the leaderboard: one record per trial, whatever the family.

``status`` decides where a trial counts:
- ``scored``: ``metrics`` hold its scores (0-100); it counts in every mean and in pass@k;
- ``infra_error``: the trial could not be run fairly (an LLM call still failing after its
  retries, the sandbox not starting); excluded from every score, listed in the report;
- ``unscored``: the task has no scorer yet (e.g. ``de_arch`` rubrics without a judge); listed.
An agent that crashes, loops or times out is *scored* on what it left: that is its result.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ScoreStatus = Literal["scored", "infra_error", "unscored"]


class TrialScore(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    trial: str = Field(description="the trial's key (path-like slug)")
    suite: str
    task_id: str
    task_version: str
    family: str
    agent: str
    agent_config_hash: str
    model: str = Field(description="'-' for agents that call no model")
    epoch: int = Field(ge=0)
    status: ScoreStatus
    metrics: dict[str, float] = Field(
        default_factory=dict, description="e.g. cs, cfs, sr for DE tasks (0-100)"
    )
    primary: str | None = Field(default=None, description="the metric the leaderboard ranks by")
    success: bool | None = Field(default=None, description="full marks; feeds pass@k")
    termination: str = Field(description="why the agent stopped: finished, round_limit, ...")
    detail: str | None = Field(default=None, description="infra error / unscored reason")
    used_mock_llm: bool = False
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    agent_wall_s: float = 0.0
    scored_at: datetime | None = None
    scored_on: str | None = Field(
        default=None,
        description="'heldout': metrics are on the held-out seed (visible-seed ones are "
        "suffixed _visible); 'visible': on the data the agent saw",
    )
    scoring_sandbox: str | None = Field(
        default=None,
        description="the sandbox backend that ran the candidate's code while scoring; "
        "'none' when scoring was explicitly unsandboxed",
    )

    @property
    def primary_score(self) -> float | None:
        if self.status != "scored" or self.primary is None:
            return None
        return self.metrics.get(self.primary)

"""A trial's milestones, end to end: excerpts by code, one judge call, the code rule, GPR/TPE."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.records import Step
from benchforge.evaluation.explore.excerpts import agent_steps, find_excerpts, step_texts
from benchforge.evaluation.explore.metrics import first_missed, gpr, tpe
from benchforge.evaluation.explore.milestone_judge import (
    MILESTONE_PROMPT_VERSION,
    judge_milestones,
)
from benchforge.evaluation.explore.models import Excerpt, GoldPath, MilestoneOutcome
from benchforge.evaluation.explore.outcomes import settle
from benchforge.evaluation.judges.client import Judge


class MilestoneScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["scored", "unscored"]
    outcomes: list[MilestoneOutcome] = Field(default_factory=list)
    gpr: float | None = None
    tpe: float | None = None
    first_missed: str | None = None
    agent_steps: int
    excerpts: list[Excerpt] = Field(default_factory=list)
    detail: str = ""
    infrastructure: bool = False
    attempts: int = 0
    prompt_version: str = MILESTONE_PROMPT_VERSION


def score_milestones(
    judge: Judge,
    *,
    question: str,
    gold: GoldPath,
    trajectory: Sequence[Step],
    answer: str | None,
) -> MilestoneScore:
    steps = agent_steps(trajectory)
    excerpts = find_excerpts(step_texts(trajectory, answer), gold.milestones)
    reply = judge_milestones(judge, question=question, gold=gold, excerpts=excerpts, steps=steps)
    if reply.value is None:
        return MilestoneScore(
            status="unscored",
            agent_steps=steps,
            excerpts=excerpts,
            detail=f"no valid milestone verdict after {reply.attempts} attempt(s): {reply.error}",
            infrastructure=reply.infrastructure,
            attempts=reply.attempts,
        )
    outcomes = settle(gold.milestones, reply.value.milestones, excerpts)
    return MilestoneScore(
        status="scored",
        outcomes=outcomes,
        gpr=gpr(outcomes),
        tpe=tpe(outcomes, len(gold.steps)),
        first_missed=first_missed(outcomes),
        agent_steps=steps,
        excerpts=excerpts,
        attempts=reply.attempts,
    )

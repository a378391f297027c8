"""The gold of an exploration task and the records its scoring produces."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Evidence = Literal["direct", "inferred", "final_answer"]
Source = Literal["model", "tool", "final_answer"]


class Milestone(BaseModel):
    """One checkpoint of the gold path: a key and the value computed on the way."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(min_length=1)
    value: float | str
    relative_tolerance: float = Field(default=0.01, ge=0)
    absolute_tolerance: float = Field(default=1e-6, ge=0)

    def matches(self, number: float) -> bool:
        if isinstance(self.value, str):
            return False
        gap = abs(number - self.value)
        return gap <= self.absolute_tolerance or gap <= self.relative_tolerance * abs(self.value)


class GoldPath(BaseModel):
    """The gold steps (their count N sets difficulty and EE) and the ordered milestones: a later
    milestone depends on the earlier ones, so reaching it implies them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: list[str] = Field(min_length=1)
    milestones: list[Milestone] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_keys(self) -> GoldPath:
        keys = [m.key for m in self.milestones]
        if len(set(keys)) != len(keys):
            raise ValueError(f"milestone keys must be unique, got {keys}")
        return self

    @property
    def difficulty(self) -> Literal["easy", "medium", "hard"]:
        n = len(self.steps)
        return "easy" if n <= 3 else "medium" if n <= 5 else "hard"


class Excerpt(BaseModel):
    """Text of one agent step that states a milestone's value (found by code)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    step: int = Field(ge=1, description="the agent step: one model turn with its tool results")
    source: Source
    text: str


class JudgedMilestone(BaseModel):
    """The milestone judge's reply for one milestone."""

    model_config = ConfigDict(extra="forbid")

    key: str
    achieved: bool
    evidence: Evidence | None = None
    first_step: int | None = None
    reason: str = ""


class MilestoneOutcome(BaseModel):
    """Whether a milestone counts, after the code rule, and from which step."""

    model_config = ConfigDict(extra="forbid")

    key: str
    judged_achieved: bool
    counted: bool
    evidence: Evidence | None = None
    step: int | None = None
    note: str = ""

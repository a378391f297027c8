"""The ``explore_milestone`` task spec: an exploratory question over a noisy exploration
environment (DataClawBench style), with its gold steps, ordered milestones and answer parts.

    task_specs/explore-<domain>/
      environment.yaml       the exploration environment the suite's tasks name
      <task_id>/task.yaml    this model

Milestone values and answer parts are never written by hand: each milestone is one SQL query
run read-only on the **clean** dataset's ``warehouse.duckdb`` (its ``raw`` tables by name), so
every seed has its own gold. An answer part is either a milestone's value (``milestone``) or a
query of its own (``sql``). Difficulty is the gold step count's (2-3 easy, 4-5 medium, 6+
hard), never declared.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchforge.evaluation.tasks.models import TaskSpecBase

Category = Literal[
    "enterprise_industry",
    "enterprise_industry_policy",
    "comprehensive_decision",
    "hypothesis_verification",
    "industry_planning",
    "risk_assessment",
]
DEFAULT_FALLBACK = "No relevant data found"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MilestoneQuery(_Strict):
    """One milestone: its key and the query giving its value (one row, one column)."""

    key: str = Field(pattern=r"^[a-z][a-z_]*$", description="Letters and _, no digits.")
    sql: str = Field(min_length=8)
    relative_tolerance: float = Field(default=0.01, ge=0)


class AnswerPartQuery(_Strict):
    """One part of the gold answer: a milestone's value, or a query of its own."""

    name: str = Field(min_length=1)
    milestone: str | None = None
    sql: str | None = None
    relative_tolerance: float = Field(default=0.005, ge=0)
    unit: str | None = Field(default=None, description="a validators unit name, e.g. percent")

    @model_validator(mode="after")
    def _one_source(self) -> AnswerPartQuery:
        if (self.milestone is None) == (self.sql is None):
            raise ValueError("give exactly one of milestone (its key) or sql")
        return self


class OutputGuidelines(_Strict):
    format: str = Field(min_length=5, description="How the answer is written (decimals, units).")
    fallback: str = Field(
        default=DEFAULT_FALLBACK, description="What to answer when the data does not say."
    )


class ExploreMilestoneTask(TaskSpecBase):
    family: Literal["explore_milestone"]
    question: str = Field(min_length=10)
    guidelines: OutputGuidelines
    category: Category
    instructions: str = Field(default="", description="By default the question and guidelines.")
    environment: str = Field(
        default="../environment.yaml",
        description="The exploration environment spec, relative to the task folder.",
    )
    steps: list[str] = Field(min_length=2, description="The gold steps, in order (their count N).")
    milestones: list[MilestoneQuery] = Field(min_length=1)
    answer: list[AnswerPartQuery] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _instructions_from_question(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("instructions") and data.get("question"):
            guidelines = data.get("guidelines") or {}
            data = {
                **data,
                "instructions": default_instructions(
                    str(data["question"]),
                    str(guidelines.get("format", "")),
                    str(guidelines.get("fallback", DEFAULT_FALLBACK)),
                ),
            }
        return data

    @model_validator(mode="after")
    def _milestones_named(self) -> ExploreMilestoneTask:
        keys = [m.key for m in self.milestones]
        if len(set(keys)) != len(keys):
            raise ValueError(f"milestone keys must be unique, got {keys}")
        for part in self.answer:
            if part.milestone is not None and part.milestone not in keys:
                raise ValueError(f"answer part {part.name!r} names no milestone {part.milestone!r}")
        return self

    @property
    def difficulty(self) -> Literal["easy", "medium", "hard"]:
        n = len(self.steps)
        return "easy" if n <= 3 else "medium" if n <= 5 else "hard"


def default_instructions(question: str, output_format: str, fallback: str) -> str:
    return (
        f"{question.strip()}\n\nOutput guidelines: {output_format.strip()} If the data does not "
        f'answer the question, answer "{fallback}".\n\nThe data is a folder of CSV tables and '
        "Markdown texts with no documentation; units, names and totals may be mixed. Explore it "
        "with the tools and compute every figure from the data; give the answer with "
        "return_answer, without hedging."
    )

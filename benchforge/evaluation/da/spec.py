"""The ``da_open`` task spec: an open business question over analysis-ready marts, judged on a
hierarchical rubric whose accuracy items cite anchors computed by code.

    task_specs/da-<domain>/<task_id>/
      task.yaml          this model
      reference.md       the reference report (a template: ``{{anchor}}`` placeholders)
      baselines/*.md     baseline reports for the Good-Same-Bad comparison (templates too)

Anchors are SQL over the analysis database the agent gets (the ``marts`` of the gold build on
the task's dataset, as tables of the same names), evaluated when the task is prepared: another
seed gives other values, so another rubric text and another rubric version.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchforge.evaluation.da.claims import ClaimSpec
from benchforge.evaluation.judges.length import DEFAULT_MAX_REPORT_WORDS
from benchforge.evaluation.judges.models import AnchorKind, AnchorUnit, HierarchicalRubric
from benchforge.evaluation.tasks.models import RepoTaskSpec

DaCategory = Literal["descriptive", "diagnostic", "strategic", "pattern_recognition", "profiling"]


class AnchorSpec(BaseModel):
    """A value the rubric cites, computed by code: ``sql`` returns one row, one column.

    ``unit`` and ``kind`` are required: they decide which written numbers state the anchor
    (``judges.anchor_rule``: "0.418 percent" is not 41.8%, "€18,256,544" is not USD, "declined
    by 41.8%" is not a rise of 41.8%), and a default guessed from ``format`` would silently
    read a change as a level."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sql: str = Field(min_length=8, description="one row, one column, over the task's marts")
    format: str = Field(
        default="{:,.2f}",
        description="Python format for the value as the rubric and reports show it, "
        "e.g. '{:.1f}%' or '{:,.0f}'",
    )
    unit: AnchorUnit = Field(
        description="what the value measures: usd, eur, gbp, cny, percent, percentage_points, "
        "multiple, count, days, hours, number or text"
    )
    kind: AnchorKind = Field(
        description="level (sign as written), change (signed: direction words count), gap "
        "(unsigned difference) or text"
    )
    tolerance: float = Field(
        default=0.01, ge=0, lt=1, description="relative: a stated value within it is correct"
    )
    description: str = ""

    @model_validator(mode="after")
    def _text_goes_with_text(self) -> AnchorSpec:
        if (self.unit == "text") != (self.kind == "text"):
            raise ValueError(
                f"unit {self.unit!r} and kind {self.kind!r}: a text anchor has both unit and "
                "kind 'text', a numeric anchor neither"
            )
        return self


class DaOpenTask(RepoTaskSpec):
    family: Literal["da_open"]
    category: DaCategory
    marts: list[str] = Field(
        min_length=1, description="gold models given to the agent as tables (analysis-ready)"
    )
    anchors: dict[str, AnchorSpec] = Field(default_factory=dict)
    claims: dict[str, ClaimSpec] = Field(
        default_factory=dict,
        description="data-dependent words of the reports (comparisons, rankings, directions), "
        "picked by code from SQL values and cited as {{name}} like anchors",
    )
    fixed_phrases: list[str] = Field(
        default_factory=list,
        description="phrases of the reference and baselines that keep a comparative word as "
        "fixed text because they state nothing about the data (a definition, a condition, a "
        "recommendation that names no group)",
    )
    rubric: HierarchicalRubric
    reference: str = Field(default="reference.md", description="reference report template")
    baselines: list[str] = Field(
        min_length=1, description="baseline report templates for GSB (files of the task folder)"
    )
    report: str = Field(default="report.md", description="the report the agent writes")
    gsb_alpha: float | None = Field(
        default=None, ge=0, le=1, description="Score_da weight of the rubric; None: the suite's"
    )
    max_report_words: int = Field(
        default=DEFAULT_MAX_REPORT_WORDS,
        ge=100,
        description="judges read the report's visible text up to this many words; the rest is "
        "cut (the score says so)",
    )

    @model_validator(mode="after")
    def _anchors_defined(self) -> DaOpenTask:
        missing = sorted(self.rubric.anchors_cited() - set(self.anchors) - set(self.claims))
        if missing:
            raise ValueError(f"rubric cites anchors with no SQL in 'anchors': {', '.join(missing)}")
        return self

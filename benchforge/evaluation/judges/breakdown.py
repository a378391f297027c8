"""What a judged score keeps of its judging (:class:`JudgeRecord`, its breakdown): which
judges (model, prompt and rubric versions, mode), at what cost, what could not be judged, and
every item and GSB pair as the report shows it. Built by :mod:`.record`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.records.scores import ScoreBreakdown, register_breakdown


class JudgedItem(BaseModel):
    """One rubric item (or GSB pair) of a judged trial, as the report shows it. ``earned``
    None: unscored (the judge never gave a valid reply), left out of the sums."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    group: str = Field(default="", description="standard/path, or the de_arch dimension")
    kind: str = Field(description="completeness, accuracy, insightfulness, a dimension, gsb")
    points: float
    earned: float | None
    status: Literal["scored", "unscored"]
    evidence: list[str] = Field(default_factory=list, description="quotes, truncated")
    flags: list[str] = Field(default_factory=list)
    reason: str = ""
    # The checks behind ``earned`` (None in scores stored before they were kept).
    judge_awarded: float | None = Field(default=None, description="the judge's award, unchecked")
    evidence_ok: bool | None = Field(default=None, description="every quote found by code")
    anchor: str | None = Field(default=None, description="the anchor the item cites")
    anchor_value: str | None = Field(default=None, description="as the rubric writes it")
    anchor_ok: bool | None = Field(default=None, description="the evidence states the anchor")
    code_found_anchor: bool | None = Field(
        default=None, description="the anchor value appears in the output (code, no judge)"
    )
    off_rubric: bool = Field(default=False, description="judged on an unlisted approach")


class JudgedPair(BaseModel):
    """One GSB comparison with a baseline on one dimension, judged in both orders: the
    candidate's raw score (-10..10) shown first and shown second; ``verdict`` None when the
    two orders disagree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    baseline_id: str
    dimension: str
    raw_first: float | None
    raw_second: float | None
    verdict: str | None
    consistent: bool
    status: Literal["scored", "unscored"]
    # The length-matched check (None: not run): the candidate cut to the baseline's length.
    matched_words: int | None = Field(default=None, description="the length it was cut to")
    matched_first: float | None = None
    matched_second: float | None = None


class JudgeIdentity(BaseModel):
    """One judge that judged the trial."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge: str
    model: str
    prompt_version: str
    mode: str = ""  # empty in records kept before modes were named
    rubric_version: str | None = None


@register_breakdown
class JudgeRecord(ScoreBreakdown):
    """How a judged trial was judged: by which judges (model, prompt and rubric versions),
    at what cost, and what could not be judged."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["judged"] = "judged"
    judges: list[JudgeIdentity] = Field(default_factory=list)
    requests: int = Field(default=0, description="calls sent to the endpoint (cache hits aside)")
    cache_hits: int = 0
    cost_usd: float | None = None
    unscored: list[str] = Field(default_factory=list, description="item ids / pairs")
    pairs: int = 0
    inconsistent_pairs: int = 0
    disagreements: list[str] = Field(
        default_factory=list, description="anchored items where judge and code disagree"
    )
    injection_flags: list[str] = Field(default_factory=list)
    items: list[JudgedItem] = Field(default_factory=list)
    used_mock_llm: bool = Field(
        default=False, description="the judge was the Benchforge mock server (scripted)"
    )
    output: str | None = Field(
        default=None, description="the judged file, relative to the workspace (report.md, ...)"
    )
    gsb_pairs: list[JudgedPair] = Field(default_factory=list)
    truncated: str | None = Field(
        default=None,
        description="'truncated: kept N of M words': the judges read only the output's start",
    )


def judge_record_of(score: object) -> JudgeRecord | None:
    """The judge record of a judged score (a trial's, a submission's) or breakdown; None for
    any other family's."""
    breakdown = score if isinstance(score, ScoreBreakdown) else getattr(score, "breakdown", None)
    return breakdown if isinstance(breakdown, JudgeRecord) else None

"""What a scored trial looks like to the leaderboard: one record per trial, whatever the family.

``status`` decides where a trial counts:
- ``scored``: ``metrics`` hold its scores (0-100); it counts in every mean and in pass@k;
- ``infra_error``: the trial could not be run fairly (an LLM call still failing after its
  retries, the sandbox not starting); excluded from every score, listed in the report;
- ``unscored``: the task has no scorer yet (e.g. ``de_arch`` rubrics without a judge); listed;
- ``scoring_error``: scoring this trial raised (a scorer or harness fault, e.g. a stored
  submission the scorer could not read); ``detail`` holds the exception's type and message
  (truncated). Like an infra error it is excluded from every score, never a 0, listed in the
  report, and scored again by the next ``score-run`` (it is not done).
An agent that crashes, loops or times out is *scored* on what it left: that is its result.

``nodes`` keeps, for a scored DE trial, why each node matched or not (``NodeDetail``): small
and bounded (a few example rows, truncated values), so a run browser can show the diff without
rescoring.

A score holds its trial's :class:`TrialKey` (``score.key.task_id``, ``score.key.slug``, ...), not
a copy of its fields. Scores stored before that had the key's fields flat beside the others, plus
``trial`` (the slug): :class:`TrialScore` still reads that layout (a ``mode="before"``
validator folds the flat fields into ``key`` and drops ``trial``, which the key derives), so
runs scored earlier load, render and rank unchanged; it always writes the nested one. Rescoring
(``score-run --rescore``) rewrites old scores in the new layout.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchforge.core.records.trials import TrialKey

ScoreStatus = Literal["scored", "infra_error", "unscored", "scoring_error"]


class NodeCheck(BaseModel):
    """One comparison of a node's output with its gold (CS: the model run alone on its gold
    parents; CFS: the end-to-end build). Values are rendered as the scorer shows them (SQL
    NULL as ``NULL``, text quoted); example rows hold only some columns of wide tables."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: str = Field(description="match, missing, build_error, schema_mismatch, data_mismatch")
    reason: str = ""
    missing_columns: list[str] = Field(default_factory=list)
    extra_columns: list[str] = Field(default_factory=list)
    type_mismatches: dict[str, tuple[str, str]] = Field(
        default_factory=dict, description="column -> (gold type, candidate type)"
    )
    gold_rows: int | None = None
    candidate_rows: int | None = None
    differing_rows: int | None = None
    column_mismatches: dict[str, int] = Field(
        default_factory=dict, description="column -> rows that differ in it"
    )
    mismatch_key: str | None = Field(default=None, description="the key rows were paired on")
    examples_gold: list[dict[str, str]] = Field(
        default_factory=list, description="gold rows missing from the candidate (a few)"
    )
    examples_candidate: list[dict[str, str]] = Field(
        default_factory=list, description="candidate rows not in the gold (a few)"
    )
    omitted_columns: int = Field(default=0, description="columns left out of the examples")
    examples_withheld: bool = Field(
        default=False,
        description="example rows left out: held-out data, shown only when the operator asks "
        "(--show-heldout-examples)",
    )

    @property
    def matched(self) -> bool:
        return self.status == "match"


class NodeDetail(BaseModel):
    """Why one node of a DE task scored what it did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    layer: str
    weight: float = Field(description="0: not scored (de_evol scores the changed nodes only)")
    cs_matched: bool
    cfs_matched: bool = Field(description="matched end to end and every gold ancestor matched")
    cs: NodeCheck
    cfs: NodeCheck
    cfs_blocked_by: list[str] = Field(
        default_factory=list, description="failed gold ancestors that zero this node in CFS"
    )


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


class JudgeRecord(BaseModel):
    """How a judged trial was judged: by which judges (model, prompt and rubric versions),
    at what cost, and what could not be judged."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judges: list[dict[str, str]] = Field(
        default_factory=list, description="judge, model, prompt_version, rubric_version, mode"
    )
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


class TrialScore(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    key: TrialKey
    family: str
    status: ScoreStatus
    metrics: dict[str, float] = Field(
        default_factory=dict, description="e.g. cs, cfs, sr for DE tasks (0-100)"
    )
    primary: str | None = Field(default=None, description="the metric the leaderboard ranks by")
    success: bool | None = Field(default=None, description="full marks; feeds pass@k")
    termination: str = Field(description="why the agent stopped: finished, round_limit, ...")
    detail: str | None = Field(
        default=None,
        description="infra error / unscored reason / scoring error (exception type: message)",
    )
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
    score_reused: bool = Field(
        default=False,
        description="the scores were kept from an earlier scoring of the identical submission "
        "(same task, gold build, dataset, sandbox and scorer code)",
    )
    nodes: list[NodeDetail] = Field(
        default_factory=list, description="per node, on the data the metrics are on (scored_on)"
    )
    nodes_visible: list[NodeDetail] = Field(
        default_factory=list,
        description="per node on the visible dataset, when the metrics are on the held-out one",
    )
    judged: JudgeRecord | None = Field(
        default=None, description="judged families: judges, cost, unscored items"
    )

    @model_validator(mode="before")
    @classmethod
    def _flat_key(cls, data: Any) -> Any:
        """The layout written before scores held their key: the key's fields flat, beside
        ``trial`` (the slug, which the key derives)."""
        if not isinstance(data, dict) or "key" in data or "task_id" not in data:
            return data
        flat = dict(data)
        slug = flat.pop("trial", None)
        key = TrialKey.model_validate(
            {name: flat.pop(name) for name in TrialKey.model_fields if name in flat}
        )
        if slug is not None and slug != key.slug:
            raise ValueError(f"trial {slug!r} is not its key's slug {key.slug!r}")
        flat["key"] = key
        return flat

    @property
    def primary_score(self) -> float | None:
        if self.status != "scored" or self.primary is None:
            return None
        return self.metrics.get(self.primary)

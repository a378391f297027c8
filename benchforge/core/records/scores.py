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

``breakdown`` keeps why the score is what it is, typed by the family that scored it (a
:class:`ScoreBreakdown` subclass it registers: DE's per-node comparisons, a judged family's
items), small and bounded so a run browser can show it without rescoring. A trial scored on a
held-out dataset keeps its score on the visible one in ``visible``: two scores, each with its
breakdown.

A score holds its trial's :class:`TrialKey` (``score.key.task_id``, ``score.key.slug``, ...), not
a copy of its fields. Scores stored before that had the key's fields flat beside the others, plus
``trial`` (the slug): :class:`TrialScore` still reads that layout (a ``mode="before"``
validator folds the flat fields into ``key`` and drops ``trial``, which the key derives), so
runs scored earlier load, render and rank unchanged; it always writes the nested one. In the
same way, scores written before breakdowns (``nodes``, ``nodes_visible`` and ``judged`` fields,
``<metric>_visible`` keys in ``metrics``) load into ``breakdown`` and ``visible``. Rescoring
(``score-run --rescore``) rewrites old scores in the new layout.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SerializeAsAny, model_validator

from benchforge.core.records.trials import TrialKey

ScoreStatus = Literal["scored", "infra_error", "unscored", "scoring_error"]
B = TypeVar("B", bound="ScoreBreakdown")


class ScoreBreakdown(BaseModel):
    """Why a score is what it is, in the terms of the family that scored it: DE's per-node
    comparisons, a judged family's items and verdicts, ... A family subclasses it with
    ``kind: Literal[...]`` and registers the subclass (:func:`register_breakdown`); a score read
    back gets its family's type again. A kind nobody registered (a family not installed here)
    still loads, as this base with its fields kept."""

    model_config = ConfigDict(frozen=True, extra="allow")

    kind: str

    def withheld(self) -> ScoreBreakdown:
        """This breakdown as a score on a held-out dataset keeps it: without what would show
        the held-out data itself (DE: example rows). The default keeps everything."""
        return self


_BREAKDOWNS: dict[str, type[ScoreBreakdown]] = {}


def register_breakdown(cls: type[B]) -> type[B]:
    """Registers a family's breakdown type under its ``kind`` default (a class decorator)."""
    kind = cls.model_fields["kind"].default
    if not isinstance(kind, str):
        raise TypeError(f"{cls.__name__}.kind needs a default: the kind it registers under")
    known = _BREAKDOWNS.get(kind)
    if known is not None and known.__qualname__ != cls.__qualname__:
        raise ValueError(f"a score breakdown of kind {kind!r} is already registered: {known}")
    _BREAKDOWNS[kind] = cls
    return cls


def _typed_breakdown(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("kind"), str):
        return _BREAKDOWNS.get(value["kind"], ScoreBreakdown).model_validate(value)
    return value


Breakdown = Annotated[SerializeAsAny[ScoreBreakdown], BeforeValidator(_typed_breakdown)]


class VisibleScore(BaseModel):
    """A trial's score on the visible dataset, kept beside its score on the held-out one: the
    gap shows answers fitted to the data the agent saw."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics: dict[str, float] = Field(default_factory=dict)
    success: bool | None = None
    breakdown: Breakdown | None = None


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
        "kept in ``visible``); 'visible': on the data the agent saw",
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
    breakdown: Breakdown | None = Field(
        default=None,
        description="the family's own detail, on the data the metrics are on (scored_on)",
    )
    visible: VisibleScore | None = Field(
        default=None, description="the score on the visible dataset, when scored_on is heldout"
    )

    @model_validator(mode="before")
    @classmethod
    def _old_layouts(cls, data: Any) -> Any:
        return _fold_visible(_fold_breakdown(_fold_key(data)))

    @property
    def primary_score(self) -> float | None:
        if self.status != "scored" or self.primary is None:
            return None
        return self.metrics.get(self.primary)

    def columns(self) -> dict[str, float]:
        """The metrics as a table shows them: the visible-seed score's beside the held-out
        one's, as ``<metric>_visible`` columns."""
        seen = self.visible.metrics if self.visible is not None else {}
        return self.metrics | {f"{k}{VISIBLE_SUFFIX}": v for k, v in seen.items()}


VISIBLE_SUFFIX = "_visible"


def _fold_key(data: Any) -> Any:
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


def _fold_breakdown(data: Any) -> Any:
    """Scores written before breakdowns: DE's ``nodes`` and a judged family's ``judged``
    record as fields of their own."""
    if not isinstance(data, dict) or not ({"nodes", "judged"} & data.keys()):
        return data
    out = dict(data)
    nodes, judged = out.pop("nodes", None), out.pop("judged", None)
    if judged is not None:
        out["breakdown"] = {"kind": "judged", **judged}
    elif nodes:
        out["breakdown"] = {"kind": "de_nodes", "nodes": nodes}
    return out


def _fold_visible(data: Any) -> Any:
    """Scores written before ``visible``: its metrics as ``<metric>_visible`` keys, DE's
    nodes on it as ``nodes_visible``."""
    if not isinstance(data, dict):
        return data
    metrics = data.get("metrics") or {}
    seen = {
        k.removesuffix(VISIBLE_SUFFIX): v for k, v in metrics.items() if k.endswith(VISIBLE_SUFFIX)
    }
    if not seen and "nodes_visible" not in data:
        return data
    out = dict(data)
    nodes = out.pop("nodes_visible", None)
    out["metrics"] = {k: v for k, v in metrics.items() if not k.endswith(VISIBLE_SUFFIX)}
    if seen and "visible" not in out:
        breakdown = {"kind": "de_nodes", "nodes": nodes} if nodes else None
        out["visible"] = {"metrics": seen, "breakdown": breakdown}
    return out

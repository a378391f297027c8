"""Judged evaluation: the rubric an output is judged on, and what a judge returns.

A *hierarchical rubric* (DA tasks, after DAComp) is requirement -> standard -> path -> item.
A standard is met along one of its paths (methodologically distinct valid strategies); the
judge picks the best-matching path and scores only that path's items. Items are typed
(completeness, accuracy, insightfulness), carry points (negative for penalties such as
"uses fabricated numbers"), and an accuracy item may cite an *anchor*: a value computed by
code on the task's dataset (a SQL expression of the task spec), substituted into the criterion
text (and into reference and baseline reports) as ``{{anchor_name}}`` before any judge sees it.

A *flat rubric* (``de_arch``) is a list of items with a dimension and points.

Scores here are fractions (0..1); families report them as 0-100 metrics.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchforge.core.records.verification import EMPTY, REFERENCE, VerificationCheck

ItemType = Literal["completeness", "accuracy", "insightfulness"]
ITEM_TYPES: tuple[ItemType, ...] = ("completeness", "accuracy", "insightfulness")
GsbDimension = Literal["readability", "depth"]
GSB_DIMENSIONS: tuple[GsbDimension, ...] = ("readability", "depth")
Verdict = Literal["good", "same", "bad"]
JudgeMode = Literal["per_item", "batched"]
ANCHOR_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------- rubric specs


class RubricItemSpec(_Strict):
    """One checkable point. ``criterion`` may cite anchors as ``{{name}}``; ``anchor`` names the
    anchor whose value the output must state for the point (accuracy items), checked by code
    within ``tolerance`` (relative; default the anchor's)."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    type: ItemType
    points: float = Field(description="negative: a penalty (e.g. fabricated numbers)")
    criterion: str = Field(min_length=10)
    anchor: str | None = None
    tolerance: float | None = Field(default=None, ge=0, lt=1)

    @model_validator(mode="after")
    def _nonzero(self) -> RubricItemSpec:
        if self.points == 0:
            raise ValueError(f"item {self.id}: points must not be 0")
        if self.anchor is not None and self.type != "accuracy":
            raise ValueError(f"item {self.id}: only accuracy items cite an anchor")
        return self


class RubricPathSpec(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    approach: str = Field(min_length=5, description="the strategy this path stands for")
    items: list[RubricItemSpec] = Field(min_length=1)

    @property
    def max_points(self) -> float:
        return sum(i.points for i in self.items if i.points > 0)


class RubricStandardSpec(_Strict):
    """Met along one of ``paths``; every path's positive points add up to ``max_points``."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    title: str = Field(min_length=5)
    max_points: float = Field(gt=0)
    paths: list[RubricPathSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _points_add_up(self) -> RubricStandardSpec:
        for path in self.paths:
            if abs(path.max_points - self.max_points) > 1e-9:
                raise ValueError(
                    f"standard {self.id}, path {path.id}: its items' points add up to "
                    f"{path.max_points:g}, not the standard's max_points {self.max_points:g}"
                )
        return self


class RubricRequirementSpec(_Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    title: str = Field(min_length=5)
    standards: list[RubricStandardSpec] = Field(min_length=1)


class HierarchicalRubric(_Strict):
    requirements: list[RubricRequirementSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> HierarchicalRubric:
        seen: set[str] = set()
        for item in self.items():
            if item.id in seen:
                raise ValueError(f"rubric item id {item.id!r} is used twice")
            seen.add(item.id)
        return self

    def standards(self) -> list[RubricStandardSpec]:
        return [s for r in self.requirements for s in r.standards]

    def items(self) -> list[RubricItemSpec]:
        return [i for s in self.standards() for p in s.paths for i in p.items]

    @property
    def max_points(self) -> float:
        return sum(s.max_points for s in self.standards())

    def anchors_cited(self) -> set[str]:
        """Anchor names the rubric needs: cited by ``anchor`` or as ``{{name}}`` in a criterion."""
        names = {i.anchor for i in self.items() if i.anchor is not None}
        for item in self.items():
            names |= set(ANCHOR_PLACEHOLDER.findall(item.criterion))
        return names

    @property
    def version(self) -> str:
        return content_hash(self.model_dump(mode="json"))


class FlatRubricItem(_Strict):
    """A ``de_arch`` rubric item (one dimension, points > 0)."""

    id: str
    dimension: Literal["business_alignment", "technical_feasibility", "design_quality"]
    criterion: str = Field(min_length=10)
    points: float = Field(gt=0)


def content_hash(payload: object) -> str:
    """12 hex digits over canonical JSON: prompt, rubric and judge versions."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# --------------------------------------------------------------------------- resolved rubric


AnchorUnit = Literal[
    "usd",
    "eur",
    "gbp",
    "cny",
    "percent",
    "percentage_points",
    "multiple",
    "count",
    "days",
    "hours",
    "number",
    "text",
]
"""What an anchor measures, as a report must write it (``evidence.states_anchor``): a currency
(``usd``...: a different currency or a percent/multiple mark does not state it), ``percent``
(needs a percent mark: ``%``, "percent", "per cent", "pct"), ``percentage_points`` (a gap
between two percents: bare, "pp" or "points"), ``multiple`` (a ratio such as ROAS: bare,
``x``, "times", or an amount per dollar), ``count`` / ``number`` (bare, any noun after it),
``days`` / ``hours`` (bare or with that unit), ``text`` (a name)."""

AnchorKind = Literal["level", "change", "gap", "text"]
"""How a number states the anchor: ``level`` (a value, its sign as written; a number written
as a change, "fell 4.2%", is not a level), ``change`` (a signed change: "fell/declined by 4.2%"
states -4.2, "rose/grew by 4.2%" +4.2), ``gap`` (an unsigned difference: "0.41 lower" and
"0.41 higher" both state 0.41), ``text`` (a text anchor)."""


def unit_from_text(text: str) -> AnchorUnit:
    """The unit an anchor's written form shows (``'12.4%'``: percent, ``'$1,204'``: usd,
    ``'1.23x'``: multiple, ``'4.5 days'``: days; a bare number: number). Only a default for
    anchors built without one (tests, mock judges): task specs declare theirs."""
    t = text.strip().lower()
    if t.endswith("%"):
        return "percent"
    if t.startswith(("$", "us$", "usd")) or t.endswith("usd"):
        return "usd"
    if t.startswith(("€", "eur")) or t.endswith("eur"):
        return "eur"
    if t.startswith(("£", "gbp")) or t.endswith("gbp"):
        return "gbp"
    if t.startswith(("¥", "cny", "rmb")) or t.endswith(("cny", "rmb", "yuan")):
        return "cny"
    if t.endswith(("x", "\u00d7")):
        return "multiple"
    if t.endswith(("days", "day")):
        return "days"
    if t.endswith(("hours", "hour", "hrs")):
        return "hours"
    if t.endswith(("pp", "points", "pts")):
        return "percentage_points"
    return "number"


class AnchorValue(_Strict):
    """An anchor evaluated on one dataset: the number (or text), how it is written, its unit
    and kind (from the task spec; derived from ``text`` and ``value`` when not given: a text
    value is unit and kind ``text``, a number is a ``level`` in ``unit_from_text``)."""

    name: str
    value: float | str
    text: str = Field(description="as substituted into the criterion, e.g. '12.4%' or '1,204'")
    tolerance: float = Field(default=0.01, ge=0, lt=1, description="relative")
    unit: AnchorUnit = "number"
    kind: AnchorKind = "level"

    @model_validator(mode="before")
    @classmethod
    def _derive_unit_and_kind(cls, data: object) -> object:
        if not isinstance(data, dict) or "value" not in data:
            return data
        data = dict(data)
        is_text = isinstance(data["value"], str)
        if data.get("unit") is None:
            data["unit"] = "text" if is_text else unit_from_text(str(data.get("text", "")))
        if data.get("kind") is None:
            data["kind"] = "text" if is_text else "level"
        return data

    @model_validator(mode="after")
    def _text_goes_with_text(self) -> AnchorValue:
        if isinstance(self.value, str) != (self.unit == "text") or (self.unit == "text") != (
            self.kind == "text"
        ):
            raise ValueError(
                f"anchor {self.name}: a text value has unit and kind 'text', a number neither "
                f"(value {self.value!r}, unit {self.unit}, kind {self.kind})"
            )
        return self


class ResolvedItem(_Strict):
    """An item with its anchors substituted: what the judge and the code checks see."""

    id: str
    standard_id: str
    path_id: str
    type: ItemType
    points: float
    criterion: str
    anchor: AnchorValue | None = None


class ResolvedRubric(_Strict):
    """A hierarchical rubric on one dataset (anchors substituted). ``version`` covers the
    rubric spec and the anchor values, so another seed is another rubric version."""

    task_key: str
    requirements: list[RubricRequirementSpec]
    items: list[ResolvedItem]
    anchors: dict[str, AnchorValue]
    version: str


# --------------------------------------------------------------------------- verdicts


class JudgeInfo(_Strict):
    """Recorded with every judged score."""

    judge: Literal["rubric", "gsb", "architecture"]
    model: str
    prompt_version: str
    rubric_version: str | None = None
    mode: JudgeMode = "per_item"


class ItemVerdict(_Strict):
    """One item after the judge *and* the code checks.

    ``status='unscored'``: the judge's reply never validated (after its retries) or the call
    failed; ``earned`` is None and the item is left out of both sums, listed, never 0.
    ``evidence_ok``: every quote was found verbatim in the (sanitized) output by code;
    ``anchor_ok``: the evidence states the anchor within tolerance and is not a hedge.
    A point counts only when both hold (``earned`` is the judge's award, then capped)."""

    item_id: str
    standard_id: str | None = None
    path_id: str | None = None
    type: ItemType | None = None
    dimension: str | None = None
    points: float
    status: Literal["scored", "unscored"]
    earned: float | None = None
    judge_awarded: float | None = Field(default=None, description="before the code checks")
    evidence: list[str] = Field(default_factory=list)
    evidence_ok: bool | None = None
    anchor_ok: bool | None = None
    code_found_anchor: bool | None = Field(
        default=None, description="the anchor value appears in the output (code, no judge)"
    )
    off_rubric: bool = Field(default=False, description="an unlisted valid approach")
    flags: list[str] = Field(
        default_factory=list,
        description="e.g. evidence_not_found, copies_rubric, hedge, injection, unlisted_path",
    )
    reason: str = ""


class StandardVerdict(_Strict):
    standard_id: str
    path_id: str | None = Field(description="the path judged best; None: an unlisted approach")
    max_points: float
    earned: float | None
    off_rubric: bool = False


class RubricScore(_Strict):
    """score = sum(earned) / sum(max) over scored standards; ``by_type`` per item type."""

    score: float | None
    by_type: dict[str, float | None]
    items: list[ItemVerdict]
    standards: list[StandardVerdict]
    unscored: list[str] = Field(default_factory=list, description="item ids")
    disagreements: list[str] = Field(
        default_factory=list, description="accuracy items where judge and code disagree"
    )
    injection_flags: list[str] = Field(default_factory=list)
    removed: list[str] = Field(
        default_factory=list,
        description="what the judge did not see, by kind: hidden content (comments, hidden "
        "elements, alt and title text, invisible Unicode...) and evaluator-addressed sentences",
    )
    truncated: str | None = Field(
        default=None, description="'truncated: kept N of M words': the report was cut"
    )
    info: JudgeInfo


class PairVerdict(_Strict):
    """One candidate-vs-baseline comparison on one dimension, judged in both orders.
    ``raw_first`` / ``raw_second``: the candidate's raw score (-10..10) with the candidate
    shown first / second; ``verdict`` None when the two orders disagree (inconsistent).

    A candidate much longer than the baseline is judged again cut to the baseline's length
    (``gsb``'s length-matched check): ``matched_words`` is the length it was cut to and
    ``matched_first`` / ``matched_second`` its raw scores there (all None: no such check); the
    verdict then rests, order by order, on the lower of the two raw scores."""

    baseline_id: str
    dimension: GsbDimension
    raw_first: float | None
    raw_second: float | None
    verdict: Verdict | None
    consistent: bool
    status: Literal["scored", "unscored"] = "scored"
    matched_words: int | None = None
    matched_first: float | None = None
    matched_second: float | None = None


class GsbScore(_Strict):
    """Score_gsb = max(0, G - B) / (G + S + B) over consistent pairs, per dimension and
    overall."""

    score: float | None
    by_dimension: dict[str, float | None]
    good: int
    same: int
    bad: int
    inconsistent: int
    unscored: int
    pairs: list[PairVerdict]
    info: JudgeInfo
    truncated: str | None = Field(
        default=None, description="'truncated: kept N of M words': the candidate was cut"
    )
    length_matched: int = Field(
        default=0,
        description="baselines the candidate was also judged against cut to the baseline's "
        "length (two more calls each)",
    )


class ArchitectureScore(_Strict):
    score: float | None
    by_dimension: dict[str, float | None]
    items: list[ItemVerdict]
    unscored: list[str] = Field(default_factory=list)
    injection_flags: list[str] = Field(default_factory=list)
    info: JudgeInfo
    truncated: str | None = Field(
        default=None, description="'truncated: kept N of M words': the blueprint was cut"
    )


class JudgedVerification(_Strict):
    """``benchforge task verify`` for a judged task: the reference output scores high, the
    empty output 0, and (DA tasks) a report whose anchor numbers are wrong loses exactly the
    accuracy items citing them."""

    reference_score: float | None = Field(description="0-100, the family's primary metric")
    empty_score: float | None
    wrong_anchor_score: float | None = None
    expected_lost: list[str] = Field(default_factory=list, description="item ids")
    lost: list[str] = Field(default_factory=list, description="item ids the wrong report lost")
    unscored: list[str] = Field(default_factory=list)
    judge_requests: int = 0
    hacks_tried: int = Field(default=0, description="judged reward-hack catalogue entries run")
    hacks_failed: list[str] = Field(
        default_factory=list, description="entries whose hostile report beat its honest source"
    )

    def checks(self, reference_min: float) -> list[VerificationCheck]:
        """The neutral checks: the reference scores at least ``reference_min`` with every
        item judged, the empty output 0, the wrong-anchor report loses exactly its items."""
        out = [
            VerificationCheck(
                name="reference",
                group=REFERENCE,
                expected=f">= {reference_min:g}",
                observed=_score_shown(self.reference_score),
                passed=self.reference_score is not None
                and self.reference_score >= reference_min
                and not self.unscored,
                detail=f"unscored items: {', '.join(self.unscored)}" if self.unscored else "",
                score=self.reference_score,
            ),
            VerificationCheck(
                name="empty",
                group=EMPTY,
                expected="0",
                observed=_score_shown(self.empty_score),
                passed=self.empty_score == 0.0,
                score=self.empty_score,
            ),
        ]
        if self.expected_lost:
            out.append(
                VerificationCheck(
                    name="wrong anchors",
                    group="wrong anchors",
                    expected=f"loses {', '.join(self.expected_lost)}",
                    observed=f"lost {', '.join(self.lost) or 'nothing'}",
                    passed=self.lost == self.expected_lost,
                )
            )
        return out


def _score_shown(score: float | None) -> str:
    return "unscored" if score is None else f"{score:.1f}"

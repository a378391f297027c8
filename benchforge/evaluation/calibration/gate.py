"""The promotion gate: may this judge model score leaderboards?

A judge is accepted when, on every kind of case it was calibrated on (rubric items, GSB pairs,
milestones):

- there are at least ``min_cases`` labelled cases of the kind (default 30: a correlation of
  0.7 has a 95% interval of about [0.45, 0.85] on 30 cases but [0.13, 0.92] on 10; a noisy
  judge once passed the point-estimate gate on 10 cases with r 0.904 [0.604, 0.989]);
- the **lower bound** of the judge's agreement interval (r on rubric items, kappa on GSB pairs,
  Cohen's kappa on milestones) is at least one rater's agreement minus ``max_agreement_gap``.
  Both sides are leave one out (:mod:`.stats`): a single judgment and a single rater, each
  against the mean of the other raters, so a judge noisier than a rater falls below and a
  point estimate lucky on few cases does not carry it;
- its GSB verdicts do not depend on the order the reports are shown in
  (``max_inconsistency``), and it leaves few cases unscored (``max_unscored``).

The minimum is per kind, not per item type: item types (accuracy, completeness, a de_arch
dimension, a GSB dimension) and tasks are reported with their own agreement and interval, and
the report marks those with fewer than ``min_cases`` cases, but 30 labelled cases per type
would multiply the labelling a calibration needs. Position bias (first-position win rate) and
length bias are reported, not gated: inconsistency already gates the order, and a length
preference is a judge's property to weigh, measured against the humans' own.

Every failed condition is a reason; an accepted judge has none.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.calibration.stats import KindStats

DEFAULT_MIN_CASES = 30


class GateSettings(BaseModel):
    """Thresholds of the promotion gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_agreement_gap: float = Field(
        default=0.1,
        ge=0,
        le=2,
        description="accepted only if the lower bound of the judge's agreement >= one rater's "
        "agreement (leave one out) - this",
    )
    max_inconsistency: float = Field(
        default=0.2, ge=0, le=1, description="share of GSB judgments whose orders disagree"
    )
    max_unscored: float = Field(
        default=0.1, ge=0, le=1, description="share of labelled cases the judge left unscored"
    )
    min_cases: int = Field(
        default=DEFAULT_MIN_CASES, ge=3, description="labelled cases per kind, at least"
    )


class GateDecision(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    accepted: bool
    reasons: list[str] = Field(default_factory=list, description="why not (empty: accepted)")
    checks: list[str] = Field(default_factory=list, description="every condition, as checked")


def _agreement(stats: KindStats, gate: GateSettings) -> tuple[str, bool]:
    """(the check as a line, passed?) of the agreement condition."""
    name = f"{stats.kind}: {stats.agreement_name}"
    judge, humans = stats.agreement.judge, stats.agreement.humans.value
    if judge.value is None:
        return f"{name} of the judge is not computable", False
    if humans is None:
        note = stats.agreement.humans.note or "one rater, or no overlap"
        return f"{name} between humans is not computable ({note})", False
    needed = humans - gate.max_agreement_gap
    if judge.low is None:
        return f"{name} {judge.text()} has no interval (too few cases)", False
    line = (
        f"{name} lower bound {judge.low:.3f} (judge {judge.text()}) vs one rater "
        f"{humans:.3f} (needs >= {needed:.3f})"
    )
    return line, judge.low >= needed


def decide(kinds: list[KindStats], gate: GateSettings) -> GateDecision:
    """The gate's decision on one judge's figures (one ``KindStats`` per kind of case)."""
    reasons: list[str] = []
    checks: list[str] = []
    if not kinds:
        reasons.append("no labelled cases to calibrate on")

    def check(line: str, passed: bool) -> None:
        checks.append(line)
        if not passed:
            reasons.append(line)

    for stats in kinds:
        check(
            f"{stats.kind}: {stats.cases} labelled cases (min {gate.min_cases})",
            stats.cases >= gate.min_cases,
        )
        check(*_agreement(stats, gate))
        unscored = 1 - stats.judged / stats.cases if stats.cases else 0.0
        check(
            f"{stats.kind}: unscored {unscored:.1%} (max {gate.max_unscored:.0%})",
            unscored <= gate.max_unscored,
        )
        if stats.inconsistency is not None and stats.inconsistency.value is not None:
            rate = stats.inconsistency.value
            check(
                f"{stats.kind}: position inconsistency {rate:.1%} "
                f"(max {gate.max_inconsistency:.0%})",
                rate <= gate.max_inconsistency,
            )
    return GateDecision(accepted=not reasons, reasons=reasons, checks=checks)

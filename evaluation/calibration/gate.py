"""The promotion gate: may this judge model score leaderboards?

A judge is accepted when, on every kind of case it was calibrated on, it agrees with the humans
about as well as the humans agree with each other (``max_agreement_gap`` below the inter-rater
figure at most: r for rubric items, kappa for GSB pairs), its GSB verdicts do not depend on the
order the reports are shown in (``max_inconsistency``) and it leaves few cases unscored
(``max_unscored``). Point estimates decide; the report shows their intervals beside them.
Every failed condition is a reason; an accepted judge has none.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.calibration.stats import KindStats


class GateSettings(BaseModel):
    """Thresholds of the promotion gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_agreement_gap: float = Field(
        default=0.1,
        ge=0,
        le=2,
        description="accepted only if judge agreement >= inter-rater agreement - this",
    )
    max_inconsistency: float = Field(
        default=0.2, ge=0, le=1, description="share of GSB judgments whose orders disagree"
    )
    max_unscored: float = Field(
        default=0.1, ge=0, le=1, description="share of labelled cases the judge left unscored"
    )
    min_cases: int = Field(default=10, ge=3, description="labelled cases per kind, at least")


class GateDecision(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    accepted: bool
    reasons: list[str] = Field(default_factory=list, description="why not (empty: accepted)")
    checks: list[str] = Field(default_factory=list, description="every condition, as checked")


def decide(kinds: list[KindStats], gate: GateSettings) -> GateDecision:
    """The gate's decision on one judge's figures (one ``KindStats`` per kind of case)."""
    reasons: list[str] = []
    checks: list[str] = []
    if not kinds:
        reasons.append("no labelled cases to calibrate on")
    for stats in kinds:
        name = f"{stats.kind}: {stats.agreement_name}"
        if stats.cases < gate.min_cases:
            reasons.append(f"{stats.kind}: only {stats.cases} labelled cases (< {gate.min_cases})")
        judge, humans = stats.agreement.judge.value, stats.agreement.humans.value
        if judge is None:
            reasons.append(f"{name} of the judge is not computable")
        elif humans is None:
            reasons.append(f"{name} between humans is not computable (one rater, or no overlap)")
        else:
            needed = humans - gate.max_agreement_gap
            line = f"{name} {judge:.3f} vs humans {humans:.3f} (needs >= {needed:.3f})"
            checks.append(line)
            if judge < needed:
                reasons.append(line)
        unscored = 1 - stats.judged / stats.cases if stats.cases else 0.0
        line = f"{stats.kind}: unscored {unscored:.1%} (max {gate.max_unscored:.0%})"
        checks.append(line)
        if unscored > gate.max_unscored:
            reasons.append(line)
        if stats.inconsistency is not None and stats.inconsistency.value is not None:
            rate = stats.inconsistency.value
            line = (
                f"{stats.kind}: position inconsistency {rate:.1%} "
                f"(max {gate.max_inconsistency:.0%})"
            )
            checks.append(line)
            if rate > gate.max_inconsistency:
                reasons.append(line)
    return GateDecision(accepted=not reasons, reasons=reasons, checks=checks)

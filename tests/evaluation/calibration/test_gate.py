"""The promotion gate decides on the lower bound of the judge's agreement, needs enough cases
per kind, and lists every condition it checked."""

from __future__ import annotations

from benchforge.evaluation.calibration.gate import GateSettings, decide
from benchforge.evaluation.calibration.stats import Figure, KindStats, Paired

NONE = Paired(judge=Figure(value=None), humans=Figure(value=None))


def _kind(judge: Figure, humans: float | None, cases: int = 120) -> KindStats:
    return KindStats(
        kind="rubric_item",
        cases=cases,
        judged=cases,
        repeats=1,
        agreement_name="pearson_r",
        agreement=Paired(judge=judge, humans=Figure(value=humans)),
        alpha=NONE,
        model_pearson=NONE,
        model_spearman=NONE,
        model_kendall=NONE,
    )


def test_the_lower_bound_decides_not_the_point_estimate() -> None:
    # the point estimate clears 0.9 - 0.1, the interval's lower bound does not
    lucky = decide([_kind(Figure(value=0.904, low=0.604, high=0.989, n=120), 0.9)], GateSettings())
    assert not lucky.accepted
    assert lucky.reasons == [
        "rubric_item: pearson_r lower bound 0.604 (judge 0.904 [0.604, 0.989]) vs one rater "
        "0.900 (needs >= 0.800)"
    ]
    tight = decide([_kind(Figure(value=0.85, low=0.81, high=0.88, n=120), 0.9)], GateSettings())
    assert tight.accepted and not tight.reasons
    assert tight.checks == [
        "rubric_item: 120 labelled cases (min 30)",
        "rubric_item: pearson_r lower bound 0.810 (judge 0.850 [0.810, 0.880]) vs one rater "
        "0.900 (needs >= 0.800)",
        "rubric_item: unscored 0.0% (max 10%)",
    ]


def test_too_few_cases_no_interval_or_one_rater_cannot_promote() -> None:
    few = decide([_kind(Figure(value=1.0, low=1.0, high=1.0, n=10), 0.9, cases=10)], GateSettings())
    assert few.reasons == ["rubric_item: 10 labelled cases (min 30)"]
    assert decide(
        [_kind(Figure(value=1.0, low=1.0, high=1.0, n=10), 0.9, cases=10)],
        GateSettings(min_cases=10),
    ).accepted
    bare = decide([_kind(Figure(value=0.95, n=120), 0.9)], GateSettings())
    assert bare.reasons == ["rubric_item: pearson_r 0.950 has no interval (too few cases)"]
    alone = _kind(Figure(value=0.95, low=0.9, high=0.97, n=120), None)
    alone = alone.model_copy(
        update={
            "agreement": Paired(
                judge=alone.agreement.judge,
                humans=Figure(value=None, note="needs >= 2 raters, 1 here"),
            )
        }
    )
    assert decide([alone], GateSettings()).reasons == [
        "rubric_item: pearson_r between humans is not computable (needs >= 2 raters, 1 here)"
    ]
    assert decide([], GateSettings()).reasons == ["no labelled cases to calibrate on"]

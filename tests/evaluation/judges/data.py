"""A small churn-analysis rubric on one dataset, and reports written against it.

Rubric (max 9): S1 overall churn level (3; paths p1 direct rate, p2 cohort survival), S2
regional breakdown (3), S3 revenue impact and actions (3, plus a -1 penalty). Types over the
first paths: completeness 2, accuracy 5, insightfulness 2 points.
"""

from __future__ import annotations

from benchforge.evaluation.judges.models import (
    AnchorValue,
    HierarchicalRubric,
    ResolvedItem,
    ResolvedRubric,
    content_hash,
)

QUESTION = "Why did customer churn rise last quarter, where, and what should we do about it?"

ANCHORS = {
    "churn_rate": AnchorValue(name="churn_rate", value=14.2, text="14.2%"),
    "top_region_churn": AnchorValue(name="top_region_churn", value=21.5, text="21.5%"),
    "at_risk_revenue": AnchorValue(
        name="at_risk_revenue", value=1_250_000.0, text="$1,250,000", tolerance=0.02
    ),
}

RUBRIC = HierarchicalRubric.model_validate(
    {
        "requirements": [
            {
                "id": "R1",
                "title": "Customer churn diagnosis",
                "standards": [
                    {
                        "id": "S1",
                        "title": "Overall churn level",
                        "max_points": 3,
                        "paths": [
                            {
                                "id": "p1",
                                "approach": "Direct rate over the active base",
                                "items": [
                                    {
                                        "id": "c1",
                                        "type": "completeness",
                                        "points": 1,
                                        "criterion": "Defines churn as customers cancelling "
                                        "during the quarter over the active base",
                                    },
                                    {
                                        "id": "a1",
                                        "type": "accuracy",
                                        "points": 2,
                                        "criterion": "Overall quarterly churn rate equals "
                                        "{{churn_rate}}",
                                        "anchor": "churn_rate",
                                    },
                                ],
                            },
                            {
                                "id": "p2",
                                "approach": "Cohort survival curve",
                                "items": [
                                    {
                                        "id": "c1b",
                                        "type": "completeness",
                                        "points": 1,
                                        "criterion": "Builds monthly signup cohorts and tracks "
                                        "survival curves",
                                    },
                                    {
                                        "id": "a1b",
                                        "type": "accuracy",
                                        "points": 2,
                                        "criterion": "Cohort survival implies quarterly churn "
                                        "of {{churn_rate}}",
                                        "anchor": "churn_rate",
                                    },
                                ],
                            },
                        ],
                    },
                    {
                        "id": "S2",
                        "title": "Regional breakdown",
                        "max_points": 3,
                        "paths": [
                            {
                                "id": "p1",
                                "approach": "Churn by region",
                                "items": [
                                    {
                                        "id": "a2",
                                        "type": "accuracy",
                                        "points": 2,
                                        "criterion": "Highest regional churn is EMEA at "
                                        "{{top_region_churn}}",
                                        "anchor": "top_region_churn",
                                    },
                                    {
                                        "id": "i2",
                                        "type": "insightfulness",
                                        "points": 1,
                                        "criterion": "Explains why EMEA churn exceeds other "
                                        "regions (pricing, support backlog)",
                                    },
                                ],
                            }
                        ],
                    },
                    {
                        "id": "S3",
                        "title": "Revenue impact and actions",
                        "max_points": 3,
                        "paths": [
                            {
                                "id": "p1",
                                "approach": "Revenue exposure then retention plan",
                                "items": [
                                    {
                                        "id": "a3",
                                        "type": "accuracy",
                                        "points": 1,
                                        "criterion": "Revenue at risk from churned accounts "
                                        "totals {{at_risk_revenue}}",
                                        "anchor": "at_risk_revenue",
                                    },
                                    {
                                        "id": "c3",
                                        "type": "completeness",
                                        "points": 1,
                                        "criterion": "Quantifies revenue exposure for the "
                                        "next quarter",
                                    },
                                    {
                                        "id": "i3",
                                        "type": "insightfulness",
                                        "points": 1,
                                        "criterion": "Recommends targeted retention offers for "
                                        "high value accounts",
                                    },
                                    {
                                        "id": "n3",
                                        "type": "accuracy",
                                        "points": -1,
                                        "criterion": "Presents invented customer counts or "
                                        "fabricated survey figures",
                                    },
                                ],
                            }
                        ],
                    },
                ],
            }
        ]
    }
)


def resolved_rubric() -> ResolvedRubric:
    """The rubric with the anchors substituted (the DA family does this from SQL values)."""
    items = []
    for standard in RUBRIC.standards():
        for path in standard.paths:
            for spec in path.items:
                criterion = spec.criterion
                for name, anchor in ANCHORS.items():
                    criterion = criterion.replace("{{" + name + "}}", anchor.text)
                items.append(
                    ResolvedItem(
                        id=spec.id,
                        standard_id=standard.id,
                        path_id=path.id,
                        type=spec.type,
                        points=spec.points,
                        criterion=criterion,
                        anchor=ANCHORS[spec.anchor] if spec.anchor else None,
                    )
                )
    return ResolvedRubric(
        task_key="da-test/churn-diagnosis@1",
        requirements=RUBRIC.requirements,
        items=items,
        anchors=ANCHORS,
        version=content_hash({"rubric": RUBRIC.version, "anchors": sorted(ANCHORS)}),
    )


# Meets S1 (path p1) and S2 in full, nothing of S3: 6 of 9 points; completeness 1/2, accuracy
# 4/5, insightfulness 1/2.
PARTIAL_REPORT = """\
# Quarterly churn review

## Churn level
Churn here means customers who cancel within a quarter, divided by the active base at its start.
Overall churn for the quarter came to 14.2% of active customers.

## Regions
EMEA has the highest regional churn at 21.5%.

| region | churn |
|---|---|
| EMEA | 21.5% |
| APAC | 11.0% |

EMEA churn runs above other regions because of a pricing change and a support backlog.

## Next steps
We will keep monitoring the numbers.
"""

# Everything: 9 of 9.
FULL_REPORT = PARTIAL_REPORT.replace(
    "We will keep monitoring the numbers.\n",
    "Revenue at risk from accounts that churned totals $1.25M this quarter.\n"
    "For the next quarter we quantify the revenue exposure at $0.4M of renewals.\n"
    "We recommend retention offers targeted at high-value accounts, starting with EMEA.\n",
)

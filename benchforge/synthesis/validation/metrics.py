"""Great Expectations' verdict on metrics computed elsewhere (in DuckDB, over a whole table).

GE validates an expectation in two halves: its execution engine computes the metrics the
expectation depends on (``table.row_count``, ``column_values.nonnull.unexpected_count``, the
map metric's ``unexpected_count`` and ``unexpected_values``, ``table.columns``...), then the
expectation's own ``_validate`` turns them into success, observed value and result. The second
half is kept here and the first is replaced: the metrics come from one SQL aggregate per table
instead of pandas frames, so a check costs one ``FILTER`` clause of a scan, and pass/fail, the
observed value and the Data Docs are still GE's. ``_validate`` is GE's own (private) entry point
for this; tests/importer/test_sql_validation.py pins its behaviour against GE's pandas engine.
"""

from __future__ import annotations

from typing import Any

from great_expectations.core import ExpectationValidationResult
from great_expectations.expectations.expectation import ColumnMapExpectation, Expectation

MAX_EXAMPLES = 5
RESULT_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": MAX_EXAMPLES}
NONNULL_UNEXPECTED = "column_values.nonnull.unexpected_count"


def judge(expectation: Expectation, metrics: dict[str, Any]) -> ExpectationValidationResult:
    """The expectation validated by GE on ``metrics`` (named as GE names them)."""
    raw = expectation._validate(
        metrics=metrics, runtime_configuration={"result_format": RESULT_FORMAT}
    )
    return expectation._build_evr(raw)


def column_map_metrics(
    expectation: ColumnMapExpectation,
    *,
    rows: int,
    missing: int,
    unexpected: int,
    examples: list[Any],
) -> dict[str, Any]:
    """What a column map expectation depends on: the table's rows, the column's missing values
    (NULL, and NaN as pandas counts it), the non-missing values that fail the check and a few of
    them (``examples``)."""
    metric = expectation.map_metric
    return {
        "table.row_count": rows,
        NONNULL_UNEXPECTED: missing,
        f"{metric}.unexpected_count": unexpected,
        f"{metric}.unexpected_values": examples[:MAX_EXAMPLES],
    }


def not_evaluated(expectation: Expectation, message: str) -> ExpectationValidationResult:
    """A failed result for a check that could not be computed (a missing table or column, a
    query that failed), with ``message`` as its exception."""
    return ExpectationValidationResult(
        success=False,
        expectation_config=expectation.configuration,
        result={},
        exception_info={
            "raised_exception": True,
            "exception_message": message,
            "exception_traceback": None,
        },
    )

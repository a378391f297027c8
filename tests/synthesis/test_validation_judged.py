"""A synthesized dataset's schema and aggregate checks are judged by GE on metrics computed by
the runner (benchforge.synthesis.validation.runner), not by a GE validation of a one-row frame
per table: the same verdicts and the same result documents as GE's pandas engine gives on that
frame, passing and failing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd
import pytest
from great_expectations.core import ExpectationValidationResult

from benchforge.synthesis.validation.gxrun import quiet_gx
from benchforge.synthesis.validation.metrics import RESULT_FORMAT
from benchforge.synthesis.validation.runner import _judge_schema, _judge_statistic
from benchforge.synthesis.validation.suite import RowCheck

ACTUAL = {"id": "BIGINT", "name": "VARCHAR", "amount": "DECIMAL(12,2)"}


@pytest.fixture(scope="module")
def reference() -> Iterator[Any]:
    """GE's pandas datasource in an ephemeral context (one per file: a context costs seconds)."""
    with quiet_gx():
        context = gx.get_context(mode="ephemeral")
        source = context.data_sources.add_pandas("reference")
        yield source.add_dataframe_asset("frame").add_batch_definition_whole_dataframe("frame")


def pandas_result(batch: Any, expectation: Any, frame: pd.DataFrame) -> ExpectationValidationResult:
    """GE's own validation of ``expectation`` on ``frame`` (the runner's former path)."""
    suite = gx.ExpectationSuite(name="reference", expectations=[expectation])
    with quiet_gx():
        got = batch.get_batch(batch_parameters={"dataframe": frame}).validate(
            suite, result_format=RESULT_FORMAT
        )
    (result,) = got.results
    return result


def comparable(result: ExpectationValidationResult) -> dict[str, Any]:
    data = result.to_json_dict()
    data["expectation_config"]["kwargs"].pop("batch_id", None)  # names GE's throwaway batch
    data.pop("meta", None)
    return data


@pytest.mark.parametrize(
    ("columns", "success"),
    [
        (["amount", "id", "name"], True),
        (["amount", "id"], False),  # a column the table has and the spec does not
        (["amount", "id", "name", "region"], False),  # a column the table lacks
    ],
)
def test_the_columns_check_is_ges_verdict(
    reference: Any, columns: list[str], success: bool
) -> None:
    expectation = gxe.ExpectTableColumnsToMatchSet(column_set=columns, exact_match=True)
    check = RowCheck("schema_columns", "t", None, expectation, "")
    mine = _judge_schema(check, ACTUAL)
    assert mine.success is success
    assert comparable(mine) == comparable(
        pandas_result(reference, expectation, pd.DataFrame([ACTUAL]))
    )


def test_a_missing_table_is_judged_on_no_columns(reference: Any) -> None:
    expectation = gxe.ExpectTableColumnsToMatchSet(column_set=["id"], exact_match=True)
    mine = _judge_schema(RowCheck("schema_columns", "t", None, expectation, ""), {})
    assert mine.success is False
    assert comparable(mine) == comparable(pandas_result(reference, expectation, pd.DataFrame()))


@pytest.mark.parametrize(
    ("column", "declared", "success"),
    [("id", "BIGINT", True), ("amount", "DECIMAL(18,2)", False), ("name", "INTEGER", False)],
)
def test_the_type_check_is_ges_verdict(
    reference: Any, column: str, declared: str, success: bool
) -> None:
    expectation = gxe.ExpectColumnValuesToBeInSet(column=column, value_set=[declared])
    mine = _judge_schema(RowCheck("schema_column_type", "t", column, expectation, ""), ACTUAL)
    assert mine.success is success
    reference = pandas_result(reference, expectation, pd.DataFrame([ACTUAL]))
    assert comparable(mine) == comparable(reference)
    if not success:
        assert mine.result["partial_unexpected_list"] == [ACTUAL[column]]


@pytest.mark.parametrize(
    ("kind", "observed", "low", "high", "success"),
    [
        (gxe.ExpectColumnSumToBeBetween, 0.0, 0.0, 0.0, True),
        (gxe.ExpectColumnSumToBeBetween, 3.0, 0.0, 0.0, False),
        (gxe.ExpectColumnSumToBeBetween, 1234.5, 1000.0, 1500.0, True),
        (gxe.ExpectColumnMeanToBeBetween, 0.1875, 0.15, 0.25, True),
        (gxe.ExpectColumnMeanToBeBetween, 0.3125, 0.15, 0.25, False),
        (gxe.ExpectColumnMeanToBeBetween, -2.5, -2.5, -2.5, True),
        # pandas sums a NaN as 0 and averages it as NaN: kept as GE's pandas engine had it
        (gxe.ExpectColumnSumToBeBetween, float("nan"), 0.0, 0.0, True),
        (gxe.ExpectColumnMeanToBeBetween, float("nan"), 0.0, 1.0, False),
    ],
)
def test_an_aggregate_check_is_ges_verdict_on_its_observed_value(
    reference: Any,
    kind: type[gxe.ExpectColumnSumToBeBetween | gxe.ExpectColumnMeanToBeBetween],
    observed: float,
    low: float,
    high: float,
    success: bool,
) -> None:
    expectation = kind(column="t: check", min_value=low, max_value=high)
    mine = _judge_statistic(expectation, observed)
    assert mine.success is success
    reference = pandas_result(reference, expectation, pd.DataFrame({"t: check": [observed]}))
    assert comparable(mine) == comparable(reference)

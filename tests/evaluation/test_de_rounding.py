"""Rounded gold columns (evaluation/de/rounding.py): found in the gold model's SQL or its DECIMAL
type, and compared within one unit of their last place, so a tie that float summation order
breaks either way (2646.235 -> 2646.24 or 2646.23) does not move a score, while a difference of
two units still does and unrounded columns keep the strict tolerance."""

from __future__ import annotations

import duckdb
import pytest

from benchforge.evaluation.de.compare import compare_relations
from benchforge.evaluation.de.rounding import column_tolerances, rounded_columns

MART = """
with opportunities as (select * from "gold"."intermediate"."int_opportunities"),
final as (
    select
        country,
        round(avg(amount), 2) as avg_amount,
        ROUND(sum(amount * (1 - discount)), 4) AS "Net Amount",
        round(sum(amount)) as total_amount,
        count(*) as deals,
        case when count(*) > 3 then round(avg(amount), 1) end as busy_avg
    from opportunities
    group by country
)
select * from final
"""


def test_rounded_aliases_are_found_with_their_decimals() -> None:
    # round() without digits and a round inside a CASE (its alias belongs to the CASE) are not
    assert rounded_columns(MART) == {"avg_amount": 2, "net amount": 4}


def test_tolerances_come_from_the_sql_and_decimal_scales() -> None:
    types = {
        "country": "VARCHAR",
        "avg_amount": "DOUBLE",
        "Net Amount": "DOUBLE",
        "total_amount": "DOUBLE",
        "fee": "DECIMAL(18,3)",
        "deals": "BIGINT",
        "ratio": "DECIMAL(9,0)",
    }
    tolerances = column_tolerances(MART, types)
    assert set(tolerances) == {"avg_amount", "Net Amount", "fee"}
    assert tolerances["avg_amount"] == pytest.approx(0.01, rel=1e-5)
    assert tolerances["Net Amount"] == pytest.approx(1e-4, rel=1e-5)
    assert tolerances["fee"] == pytest.approx(1e-3, rel=1e-5)


def _compare(gold: float, candidate: float, rounded: bool) -> bool:
    con = duckdb.connect()
    con.execute("CREATE TABLE g AS SELECT 'DE' AS country, ?::DOUBLE AS avg_amount, 7 AS n", [gold])
    con.execute(
        "CREATE TABLE c AS SELECT 'DE' AS country, ?::DOUBLE AS avg_amount, 7 AS n", [candidate]
    )
    tolerances = column_tolerances(MART, {"avg_amount": "DOUBLE"}) if rounded else None
    return compare_relations(con, "g", "c", column_abs_tol=tolerances).matched


@pytest.mark.parametrize(
    ("gold", "candidate", "rounded", "matched"),
    [
        (2646.24, 2646.23, True, True),  # the tie broken the other way: one unit
        (2646.23, 2646.24, True, True),
        (2646.24, 2646.22, True, False),  # two units: a different answer
        (2646.24, 2646.23, False, False),  # an unrounded column keeps the strict tolerance
        (0.01, 0.0, True, True),
        (0.02, 0.0, True, False),
    ],
)
def test_one_unit_of_the_last_place_is_equal_two_are_not(
    gold: float, candidate: float, rounded: bool, matched: bool
) -> None:
    assert _compare(gold, candidate, rounded) is matched


def test_many_rows_each_off_by_one_unit_still_pair() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE g AS SELECT i AS id, round(i * 1.005, 2) AS avg_amount FROM range(2000) r(i)"
    )
    con.execute(
        "CREATE TABLE c AS SELECT id, avg_amount + CASE WHEN id % 3 = 0 THEN 0.01 "
        "WHEN id % 3 = 1 THEN -0.01 ELSE 0 END AS avg_amount FROM g"
    )
    tolerances = column_tolerances(MART, {"avg_amount": "DOUBLE"})
    assert compare_relations(con, "g", "c", column_abs_tol=tolerances).matched
    assert not compare_relations(con, "g", "c").matched

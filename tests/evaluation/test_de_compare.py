"""Node comparison (evaluation/de/compare.py): the tolerance holds exactly at its boundary on
both sides, near zero, with NULLs, NaN and infinities and with duplicate rows, and a failing
node names the columns that differ and renders NULL apart from the strings 'None' / 'NULL'."""

from __future__ import annotations

import duckdb
import pytest

from benchforge.evaluation.de.compare import compare_relations


def _values(con: duckdb.DuckDBPyConnection, name: str, values: list[float | None]) -> None:
    con.execute(f"CREATE OR REPLACE TABLE {name} (x DOUBLE)")
    if values:
        con.executemany(f"INSERT INTO {name} VALUES (?)", [(v,) for v in values])


def _matches(a: list[float | None], b: list[float | None], **kwargs: float) -> bool:
    con = duckdb.connect()
    _values(con, "g", a)
    _values(con, "c", b)
    result = compare_relations(con, "g", "c", **kwargs)
    assert result.status in ("match", "data_mismatch"), result
    return result.matched


def test_the_rounding_bucket_no_longer_hides_a_difference_beyond_the_tolerance() -> None:
    # both round to 1.00000001 at 9 significant digits, yet differ by ~1e-8 = 10x the tolerance
    assert not _matches([1.0000000051], [1.0000000149])
    assert not _matches([1.0000000051], [1.0000000149], rel_tol=1e-9)


@pytest.mark.parametrize("rel_tol", [1e-9, 1e-6])
@pytest.mark.parametrize("x", [1.0, 1.0000000051, 7.5, 123456.789, -98765.4321, 3.3e12, -2e-3])
def test_the_relative_tolerance_boundary_on_both_sides(rel_tol: float, x: float) -> None:
    scale = max(abs(x), 1.0)  # below 1 in magnitude the tolerance is absolute (see below)
    for sign in (1, -1):
        inside = x + sign * 0.98 * rel_tol * scale
        outside = x + sign * 1.02 * rel_tol * scale
        assert _matches([x], [inside], rel_tol=rel_tol), (x, inside)
        assert _matches([inside], [x], rel_tol=rel_tol), (inside, x)
        assert not _matches([x], [outside], rel_tol=rel_tol), (x, outside)
        assert not _matches([outside], [x], rel_tol=rel_tol), (outside, x)


@pytest.mark.parametrize("rel_tol", [1e-9, 1e-6])
def test_near_zero_the_tolerance_is_absolute(rel_tol: float) -> None:
    """|a - b| <= max(rel_tol * max(|a|, |b|), abs_tol), abs_tol = rel_tol by default."""
    assert _matches([0.0], [0.98 * rel_tol], rel_tol=rel_tol)
    assert _matches([-0.49 * rel_tol], [0.49 * rel_tol], rel_tol=rel_tol)
    assert not _matches([0.0], [1.02 * rel_tol], rel_tol=rel_tol)
    assert not _matches([-0.51 * rel_tol], [0.51 * rel_tol], rel_tol=rel_tol)
    assert _matches([0.5], [0.5 + 0.98 * rel_tol], rel_tol=rel_tol)
    assert not _matches([0.5], [0.5 + 1.02 * rel_tol], rel_tol=rel_tol)
    assert _matches([1e-12], [-1e-12], rel_tol=rel_tol)
    assert _matches([0.0], [-0.0], rel_tol=rel_tol)


def test_abs_tol_can_be_set_or_switched_off() -> None:
    assert _matches([0.0], [0.9e-6], rel_tol=1e-9, abs_tol=1e-6)
    assert not _matches([0.0], [1.1e-6], rel_tol=1e-9, abs_tol=1e-6)
    # purely relative: nothing is close to 0 but 0, tiny values keep their relative tolerance
    assert not _matches([0.0], [1e-300], rel_tol=1e-9, abs_tol=0.0)
    assert _matches([0.0], [-0.0], rel_tol=1e-9, abs_tol=0.0)
    assert _matches([1e-300], [1e-300 * (1 + 0.98e-9)], rel_tol=1e-9, abs_tol=0.0)
    assert not _matches([1e-300], [1e-300 * (1 + 1.02e-9)], rel_tol=1e-9, abs_tol=0.0)
    assert not _matches([0.5], [0.5 * (1 + 1.02e-9)], rel_tol=1e-9, abs_tol=0.0)
    # rel_tol 0: exact equality (as DOUBLE: 1 = 1.0)
    assert _matches([1.5, 2.0], [2.0, 1.5], rel_tol=0.0)
    assert not _matches([1.5], [1.5000000000000002], rel_tol=0.0)


def test_nulls_nan_and_infinities() -> None:
    nan, inf = float("nan"), float("inf")
    assert _matches([None, 1.0], [1.0, None])
    assert not _matches([None], [0.0])
    assert not _matches([0.0], [None])
    assert _matches([nan], [nan])
    assert not _matches([nan], [None])
    assert not _matches([nan], [1.0])
    assert _matches([inf, -inf], [-inf, inf])
    assert not _matches([inf], [-inf])
    assert not _matches([inf], [1.7e308])
    assert not _matches([1.7e308], [-1.7e308])


def test_duplicate_rows_are_a_multiset() -> None:
    assert _matches([1.0, 1.0, 2.0], [2.0, 1.0 + 1e-12, 1.0])
    assert not _matches([1.0, 1.0, 2.0], [1.0, 2.0, 2.0])
    assert not _matches([1.0, 1.0], [1.0])
    assert not _matches([1.0], [1.0, 1.0])
    assert _matches([], [])
    con = duckdb.connect()
    con.execute("CREATE TABLE g AS SELECT range % 3 AS k, 'x' AS s FROM range(6)")
    con.execute("CREATE TABLE c AS SELECT range % 3 AS k, 'x' AS s FROM range(7)")
    result = compare_relations(con, "g", "c")
    assert result.status == "data_mismatch" and "delta +1" in result.reason
    assert (result.gold_rows, result.candidate_rows, result.differing_rows) == (6, 7, 1)


def test_tolerant_pairs_straddling_any_rounding_boundary_still_pair() -> None:
    """300 distinct values 1.7e-9 apart (so each has one counterpart) moved by +-0.45e-9 and
    relabelled in another order: they cross many rounding boundaries, and a pairing that sorts
    by rounded values could pair the wrong labels."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE g AS SELECT 1 + range * 1.7e-9 AS v, (range * 7) % 300 AS label "
        "FROM range(300)"
    )
    con.execute(
        "CREATE TABLE c AS SELECT v + CASE WHEN label % 2 = 0 THEN 0.45e-9 "
        "ELSE -0.45e-9 END AS v, label FROM g ORDER BY hash(label)"
    )
    assert compare_relations(con, "g", "c").matched
    con.execute("UPDATE c SET v = v + 1e-9 WHERE label = 120")  # now 1.45e-9 from its pair
    result = compare_relations(con, "g", "c")
    assert result.status == "data_mismatch" and result.differing_rows == 1


@pytest.mark.parametrize("with_key", [True, False])
def test_float_noise_on_every_row_of_several_columns_still_matches(with_key: bool) -> None:
    """Noise far inside the tolerance on every value of three float columns: values sit on
    every kind of cell boundary (whole numbers, x.5, decades), in one row on different ones."""
    con = duckdb.connect()
    key = "range AS id, " if with_key else ""
    con.execute(
        f"CREATE TABLE g AS SELECT {key}range / 7.0 AS a, sqrt(range) AS b, "
        "CAST(range % 10 AS DOUBLE) - 4.5 AS c FROM range(20000)"
    )
    con.execute(
        "CREATE TABLE c AS SELECT * REPLACE (a * (1 + 1e-12) AS a, b * (1 - 1e-12) "
        "AS b, c * (1 - 1e-13) AS c) FROM g ORDER BY hash(a)"
    )
    assert compare_relations(con, "g", "c").matched
    con.execute("UPDATE c SET b = b * (1 + 2e-9) WHERE a BETWEEN 1000 AND 1000.1")
    result = compare_relations(con, "g", "c")
    assert result.status == "data_mismatch" and result.differing_rows == 1
    assert result.column_mismatches == {"b": 1}


def test_int_and_double_columns_compare_by_value() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE g AS SELECT range AS id, range * 2 AS n FROM range(1000)")
    con.execute(
        "CREATE TABLE c AS SELECT CAST(id AS DOUBLE) AS id, CAST(n AS DECIMAL(18, 3)) "
        "AS n FROM g ORDER BY hash(id)"
    )
    result = compare_relations(con, "g", "c")
    assert result.matched and result.differing_rows == 0


# -- the report of a failing node ------------------------------------------------------------


def _orders(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("""
        CREATE TABLE g AS SELECT range AS id, CAST(range * 10.25 AS DECIMAL(12, 2)) AS amount,
            CASE WHEN range % 2 = 0 THEN 'open' ELSE 'won' END AS status,
            DATE '2024-01-01' + CAST(range AS INTEGER) AS day
        FROM range(100)""")


def test_column_mismatches_on_a_unique_key() -> None:
    con = duckdb.connect()
    _orders(con)
    con.execute("CREATE TABLE c AS SELECT * FROM g ORDER BY hash(id)")
    con.execute("UPDATE c SET amount = amount + 1 WHERE id IN (3, 14, 15, 26, 53, 58, 97)")
    con.execute("UPDATE c SET status = 'lost' WHERE id IN (7, 9, 32)")
    result = compare_relations(con, "g", "c")
    assert result.status == "data_mismatch"
    assert result.column_mismatches == {"amount": 7, "status": 3}
    assert result.mismatch_key == "id"
    assert result.differing_rows == 10
    assert "amount (7 rows)" in result.reason and "status (3 rows)" in result.reason
    assert "key id" in result.reason
    # the examples of both sides line up by key
    assert [e["id"] for e in result.examples_gold] == ["3", "7", "9"]
    assert [e["id"] for e in result.examples_candidate] == ["3", "7", "9"]
    assert result.examples_gold[0]["amount"] == "30.75"
    assert result.examples_candidate[0]["amount"] == "31.75"
    assert result.examples_gold[1]["status"] == "'won'"
    assert result.examples_candidate[1]["status"] == "'lost'"


def test_a_row_changed_in_two_columns_counts_in_both_and_extra_rows_in_none() -> None:
    con = duckdb.connect()
    _orders(con)
    con.execute("CREATE TABLE c AS SELECT * FROM g")
    con.execute("UPDATE c SET amount = 0, status = 'x', day = day + 1 WHERE id = 5")
    con.execute("UPDATE c SET day = day + 1 WHERE id = 6")
    con.execute(
        "INSERT INTO c VALUES (100, 1, 'new', DATE '2025-01-01'), "
        "(101, 2, 'new', DATE '2025-01-02')"
    )
    result = compare_relations(con, "g", "c")
    assert result.column_mismatches == {"amount": 1, "status": 1, "day": 2}
    assert result.mismatch_key == "id"
    assert "2 gold rows missing" in result.reason and "4 unexpected" in result.reason
    assert "delta +2" in result.reason


def test_the_key_is_the_unique_column_that_pairs_most_rows() -> None:
    """``amount`` is unique too, but pairs only the rows whose amount did not change."""
    con = duckdb.connect()
    _orders(con)
    con.execute("CREATE TABLE c AS SELECT * FROM g")
    con.execute("UPDATE c SET amount = amount + 1 WHERE id < 6")
    con.execute("UPDATE c SET status = 'lost' WHERE id IN (50, 51)")
    result = compare_relations(con, "g", "c")
    assert result.mismatch_key == "id"
    assert result.column_mismatches == {"amount": 6, "status": 2}


def test_column_mismatches_without_a_unique_key_leave_one_column_out() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE g AS SELECT range % 5 AS region, range % 3 AS tier, "
        "CAST(range % 4 AS DOUBLE) / 8 AS rate, 'p' || (range % 2) AS product "
        "FROM range(60)"
    )
    con.execute("CREATE TABLE c AS SELECT * FROM g")
    con.execute("UPDATE c SET rate = rate + 0.5 WHERE region = 1 AND tier = 2")  # 4 rows
    con.execute("UPDATE c SET product = 'p9' WHERE region = 0 AND tier = 0")  # 4 rows
    result = compare_relations(con, "g", "c")
    assert result.status == "data_mismatch" and result.differing_rows == 8
    assert result.mismatch_key is None
    assert result.column_mismatches == {"rate": 4, "product": 4}
    assert "rate (4 rows)" in result.reason and "one column" in result.reason


def test_examples_render_null_apart_from_the_strings_none_and_null() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE g (id INTEGER, label VARCHAR, note VARCHAR, v DOUBLE)")
    con.execute("CREATE TABLE c (id INTEGER, label VARCHAR, note VARCHAR, v DOUBLE)")
    con.execute("INSERT INTO g VALUES (1, NULL, 'NULL', NULL), (2, 'it''s', 'a', 2.5)")
    con.execute("INSERT INTO c VALUES (1, 'None', NULL, 0), (2, 'it''s', 'a', 2.5)")
    result = compare_relations(con, "g", "c")
    assert result.status == "data_mismatch"
    assert result.column_mismatches == {"label": 1, "note": 1, "v": 1}
    assert result.examples_gold == [{"id": "1", "label": "NULL", "note": "'NULL'", "v": "NULL"}]
    assert result.examples_candidate == [{"id": "1", "label": "'None'", "note": "NULL", "v": "0.0"}]
    con.execute("UPDATE c SET label = 'it''s ok' WHERE id = 2")
    assert compare_relations(con, "g", "c").examples_candidate[1]["label"] == "'it''s ok'"


def test_schema_mismatch_is_unchanged() -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE g AS SELECT 1 AS a, 'x' AS b")
    con.execute("CREATE TABLE c AS SELECT '1' AS A, 'x' AS b, 2 AS extra")
    result = compare_relations(con, "g", "c")
    assert result.status == "schema_mismatch"
    assert result.extra_columns == ["extra"] and result.type_mismatches == {
        "a": ("INTEGER", "VARCHAR")
    }
    assert result.column_mismatches == {}

"""Profile -> expectations on a tiny table with a known answer, and the same expectations
failing, naming table and column, once the data no longer matches them."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from benchforge.synthesis.importer import Expectation, profile_warehouse
from benchforge.synthesis.importer.profile import looks_like_key
from benchforge.synthesis.importer.validate import validate_warehouse
from benchforge.synthesis.validation import DatasetValidationError

TABLE = """
CREATE SCHEMA raw;
CREATE TABLE raw.orders AS SELECT * FROM (VALUES
    (1, 'C1', 'open',   10.5, DATE '2024-01-02', 'a note', 0.5::DOUBLE),
    (2, 'C2', 'closed',  3.25, DATE '2024-02-03', NULL,     'NaN'::DOUBLE),
    (3, 'C1', 'open',   NULL, DATE '2024-03-04', 'b note', 1.5::DOUBLE),
    (4, 'C3', 'open',    7.0, DATE '2024-03-05', 'c note', 2.5::DOUBLE)
) AS t(order_id, customer_code, status, amount, ordered_on, note, ratio);
"""


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(TABLE)
    return path


def expectations(path: Path) -> list[Expectation]:
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{path}' AS wh (READ_ONLY)")
        return profile_warehouse(con, "shop", "wh").expectations


def test_the_profile_implies_exactly_these_expectations(warehouse: Path) -> None:
    found = {
        (e.kind, e.column): e.model_dump(exclude_none=True, exclude={"kind", "table", "column"})
        for e in expectations(warehouse)
    }
    columns = ["order_id", "customer_code", "status", "amount", "ordered_on", "note", "ratio"]
    assert found == {
        ("columns", None): {"columns": columns},
        ("row_count", None): {"rows": 4},
        ("type", "order_id"): {"type": "INTEGER"},
        ("type", "customer_code"): {"type": "VARCHAR"},
        ("type", "status"): {"type": "VARCHAR"},
        ("type", "amount"): {"type": "DECIMAL(4,2)"},
        ("type", "ordered_on"): {"type": "DATE"},
        ("type", "note"): {"type": "VARCHAR"},
        ("type", "ratio"): {"type": "DOUBLE"},
        ("not_null", "order_id"): {},
        ("unique", "order_id"): {},  # unique and named like a key
        ("between", "order_id"): {"min": 1, "max": 4},
        ("not_null", "customer_code"): {},  # a key name, but not unique: no uniqueness
        ("not_null", "status"): {},
        ("in_set", "status"): {"values": ["closed", "open"]},  # 2 values over 4 rows
        ("between", "amount"): {"min": 3.25, "max": 10.5},  # NULLs allowed: no not_null
        ("not_null", "ordered_on"): {},
        ("between", "ordered_on"): {"min": "2024-01-02", "max": "2024-03-05"},
        # note: 3 distinct values over 3 rows is free text, not a category; ratio: a NaN
        # (missing to pandas) and NaN as its max: neither not_null nor between
    }


def test_distinct_counts_are_exact_where_they_decide_an_expectation(tmp_path: Path) -> None:
    """Estimates (approx_count_distinct) everywhere else: a key-like column far from unique,
    numbers, text with too many values to be a category."""
    path = tmp_path / "many.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(
            "CREATE SCHEMA raw; CREATE TABLE raw.lines AS SELECT i AS line_id, "
            "i % 300 AS order_id, i * 1.5 AS amount, ['a', 'b', 'c'][1 + i % 3] AS status, "
            "'L' || (i % 30) AS label, 'N' || (i % 100) AS note FROM range(1000) AS t(i)"
        )
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{path}' AS wh (READ_ONLY)")
        suite = profile_warehouse(con, "shop", "wh")
    columns = {c.name: c for c in suite.profile[0].columns}
    exact = {name: (c.distinct_exact, c.distinct) for name, c in columns.items()}
    assert {n: e for n, (e, _) in exact.items()} == {
        "line_id": True,  # may be unique: counted, and it is
        "order_id": False,  # a key's name, but ~300 values over 1000 rows: never unique
        "amount": False,
        "status": True,  # may be a category: counted, and it is
        "label": True,  # 30 values: counted, too many for a category
        "note": False,  # ~100 values: far above any category
    }
    assert exact["line_id"][1] == 1000 and exact["status"][1] == 3 and exact["label"][1] == 30
    assert 250 < exact["order_id"][1] < 350
    kinds = {(e.kind, e.column) for e in suite.expectations}
    assert ("unique", "line_id") in kinds and ("unique", "order_id") not in kinds
    assert ("in_set", "status") in kinds and ("in_set", "label") not in kinds


def test_key_names() -> None:
    keys = ["id", "order_id", "customerId", "ORDER_KEY", "sku", "country_code", "uuid"]
    assert all(looks_like_key(k) for k in keys)
    assert not any(looks_like_key(k) for k in ["idea", "paid", "status", "name", "valid"])


def test_changed_data_fails_the_expectations_naming_table_and_column(warehouse: Path) -> None:
    suite = expectations(warehouse)
    with duckdb.connect(str(warehouse)) as con:
        con.execute(
            "INSERT INTO raw.orders VALUES (4, 'C9', 'lost', 99, DATE '2030-01-01', 'x', 1)"
        )
    from benchforge.synthesis.importer import ProfileSuite

    report = validate_warehouse(
        warehouse, ProfileSuite(dataset="shop", profile=[], expectations=suite)
    )
    failed = {(r.check, r.column): r for r in report.failures()}
    assert set(failed) == {
        ("row_count", None),
        ("unique", "order_id"),  # both rows holding 4 are duplicates
        ("in_set", "status"),
        ("between", "amount"),
        ("between", "ordered_on"),
    }
    assert failed[("in_set", "status")].examples == ["lost"]
    assert failed[("unique", "order_id")].unexpected_count == 2
    with pytest.raises(DatasetValidationError, match=r"in_set .* on orders\.status"):
        report.raise_for_failures()

"""The importer's checks as SQL aggregates that GE judges (benchforge.synthesis.validation.metrics):
the same verdicts, counts and examples as GE's own pandas engine on the same rows; known numbers
on a small table; a bad CSV fails the import naming its check, a good one passes, and the Data
Docs hold every check."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import duckdb
import great_expectations as gx
import pytest

from benchforge.synthesis.importer import ProfileSuite, build, import_dataset
from benchforge.synthesis.importer.profile import Expectation, column_types, value_sql
from benchforge.synthesis.importer.validate import gx_expectation, validate_warehouse
from benchforge.synthesis.validation import DatasetValidationError
from benchforge.synthesis.validation.gxrun import jsonable, quiet_gx
from benchforge.synthesis.validation.metrics import RESULT_FORMAT

TABLE = """
CREATE SCHEMA raw;
CREATE TABLE raw.t AS SELECT * FROM (VALUES
    (1, 'a', 1.50,   0.5::DOUBLE,   DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00',
        TIMESTAMPTZ '2024-01-01 10:00:00+00', 'x'),
    (2, 'b', NULL,   'NaN'::DOUBLE, DATE '2024-01-02', TIMESTAMP '2024-01-02 10:00:00',
        TIMESTAMPTZ '2024-01-02 10:00:00+02', NULL),
    (2, 'zz', 12.25, 'inf'::DOUBLE, DATE '2023-12-31', NULL,
        TIMESTAMPTZ '2024-01-09 00:00:00+00', 'y'),
    (3, NULL, 3.00,  -0.5::DOUBLE,  NULL,              TIMESTAMP '2024-01-05 00:00:00',
        NULL,                                 NULL),
    (2, 'a', 9.99,   NULL,          DATE '2024-02-01', TIMESTAMP '2024-01-01 09:59:59',
        TIMESTAMPTZ '2024-01-01 00:00:00+00', 'z'),
    (NULL, 'q', 0.00, 1.0::DOUBLE,  DATE '2024-01-03', TIMESTAMP '2024-01-03 00:00:00',
        TIMESTAMPTZ '2024-01-03 00:00:00+00', 'w')
) AS v(id, code, amount, ratio, day, seen_at, seen_tz, note);
"""
COLUMNS = ["id", "code", "amount", "ratio", "day", "seen_at", "seen_tz", "note"]


def suite() -> list[Expectation]:
    """Checks, some passing and some failing on TABLE, over every column type."""
    e = Expectation
    return [
        e(kind="columns", table="t", columns=COLUMNS),
        e(kind="row_count", table="t", rows=6),
        e(kind="type", table="t", column="amount", type="DECIMAL(4,2)"),
        e(kind="type", table="t", column="id", type="BIGINT"),  # INTEGER
        *(e(kind="not_null", table="t", column=c) for c in ["id", "code", "ratio", "note"]),
        e(kind="unique", table="t", column="id"),
        e(kind="unique", table="t", column="note"),
        e(kind="between", table="t", column="id", min=1, max=2),
        e(kind="between", table="t", column="amount", min=0, max=10.0),
        e(kind="between", table="t", column="ratio", min=-0.5, max=1.0),
        e(kind="between", table="t", column="day", min="2024-01-01", max="2024-01-31"),
        e(kind="between", table="t", column="seen_at", min="2024-01-01T10:00:00", max="2024-02-01"),
        e(kind="between", table="t", column="seen_tz", min="2024-01-01T00:00:00", max="2024-01-05"),
        e(kind="in_set", table="t", column="code", values=["a", "b", "q"]),
        e(kind="in_set", table="t", column="note", values=["w", "x", "y", "z"]),
    ]


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(TABLE)
    return path


def pandas_results(
    warehouse: Path, checks: list[Expectation]
) -> dict[tuple[str, str | None], dict[str, Any]]:
    """GE's own verdicts on the row checks, by (check, column): the whole table as one pandas
    frame (each column as the checks read it), validated by GE's pandas engine."""
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"ATTACH '{warehouse}' AS wh (READ_ONLY)")
        types = column_types(con, "wh", "raw")["t"]
        select = ", ".join(f"{value_sql(c, types[c])} AS {c}" for c in COLUMNS)
        frame = con.execute(f"SELECT {select} FROM wh.raw.t").fetch_df()
    with quiet_gx():
        context = gx.get_context(mode="ephemeral")
        batch = (
            context.data_sources.add_pandas("reference")
            .add_dataframe_asset(name="t")
            .add_batch_definition_whole_dataframe("frame")
            .get_batch(batch_parameters={"dataframe": frame})
        )
        expectations = [gx_expectation(e) for e in checks]
        outcome = batch.validate(
            gx.ExpectationSuite(name="reference", expectations=expectations),
            result_format=RESULT_FORMAT,
        )
    found = {}
    for r in outcome.results:
        meta = r.expectation_config.meta if r.expectation_config else None
        assert meta is not None
        found[(meta["check"], meta["column"])] = _row_result(bool(r.success), r.result)
    return found


def _row_result(success: bool, result: dict[str, Any]) -> dict[str, Any]:
    keys = ("element_count", "unexpected_count", "missing_count")
    return {"success": success, **{k: result.get(k) for k in keys}}


def test_sql_counts_judged_by_ge_equal_ges_pandas_engine(warehouse: Path) -> None:
    checks = [e for e in suite() if e.kind in {"not_null", "unique", "between", "in_set"}]
    report = validate_warehouse(
        warehouse, ProfileSuite(dataset="shop", profile=[], expectations=checks)
    )
    expected = pandas_results(warehouse, checks)
    stored = json.loads(report.model_dump_json())["results"]
    assert len(stored) == len(expected) == len(checks)
    for mine in report.results:
        reference = expected[(mine.check, mine.column)]
        got = {
            "success": mine.success,
            "element_count": mine.element_count,
            "unexpected_count": mine.unexpected_count,
        }
        want = {k: reference[k] for k in got}
        assert got == want, (mine.check, mine.column)
    # a mix of verdicts, so the comparison means something
    assert {r.success for r in report.results} == {True, False}


def test_known_counts_examples_and_observed_values(warehouse: Path) -> None:
    report = validate_warehouse(
        warehouse, ProfileSuite(dataset="shop", profile=[], expectations=suite())
    )
    found = {(r.check, r.column): r for r in report.results}
    summary = {
        key: (r.success, r.observed, r.examples) for key, r in found.items() if not r.success
    }
    assert summary == {
        ("type", "id"): (False, "INTEGER", []),
        ("not_null", "id"): (False, "1 unexpected of 6 rows", [None]),
        ("not_null", "code"): (False, "1 unexpected of 6 rows", [None]),
        ("not_null", "ratio"): (False, "2 unexpected of 6 rows", [None, None]),  # NaN, NULL
        ("not_null", "note"): (False, "2 unexpected of 6 rows", [None, None]),
        ("unique", "id"): (False, "3 unexpected of 6 rows", [2, 2, 2]),
        ("between", "id"): (False, "1 unexpected of 6 rows", [3]),
        ("between", "amount"): (False, "1 unexpected of 6 rows", [12.25]),
        ("between", "ratio"): (False, "1 unexpected of 6 rows", [math.inf]),  # NaN: missing
        ("between", "day"): (False, "2 unexpected of 6 rows", ["2023-12-31", "2024-02-01"]),
        ("between", "seen_at"): (False, "1 unexpected of 6 rows", ["2024-01-01T09:59:59"]),
        ("between", "seen_tz"): (False, "1 unexpected of 6 rows", ["2024-01-09T00:00:00"]),
        ("in_set", "code"): (False, "1 unexpected of 6 rows", ["zz"]),
    }
    assert found[("unique", "note")].success and found[("in_set", "note")].success
    assert found[("row_count", None)].observed == "6"
    assert found[("columns", None)].observed == ", ".join(COLUMNS)
    assert found[("type", "amount")].observed == "DECIMAL(4,2)"
    assert found[("between", "ratio")].element_count == 6
    assert report.table_rows == {"t": 6} and report.chunk_rows is None


def test_a_missing_table_or_column_fails_its_checks(warehouse: Path) -> None:
    checks = [
        Expectation(kind="not_null", table="t", column="gone"),
        Expectation(kind="row_count", table="nowhere", rows=1),
        Expectation(kind="between", table="t", column="id", min="2024-01-01", max="2024-02-01"),
        Expectation(kind="not_null", table="t", column="code"),
    ]
    report = validate_warehouse(
        warehouse, ProfileSuite(dataset="shop", profile=[], expectations=checks)
    )
    observed = [(r.table, r.column, r.success, r.observed) for r in report.results]
    assert observed[:2] == [
        ("nowhere", None, False, "error: table raw.nowhere is missing"),
        ("t", "gone", False, "error: column gone is missing"),
    ]
    # ISO bounds on an integer column: that check fails as an error, the others still run
    assert observed[2][:3] == ("t", "id", False) and str(observed[2][3]).startswith("error: ")
    assert observed[3] == ("t", "code", False, "1 unexpected of 6 rows")


GOOD = "order_id,status,amount\n1,open,10.5\n2,closed,3.25\n3,open,7\n4,open,1\n"
BAD = "order_id,status,amount\n1,open,10.5\n2,lost,3.25\n2,open,\n4,open,99\n"


def test_a_good_csv_passes_and_every_check_is_in_the_data_docs(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "orders.csv").write_text(GOOD)
    out = tmp_path / "shop"
    record = import_dataset(str(src), name="shop", out=str(out))
    results = json.loads((out / "validation" / "results.json").read_text())
    assert record.validation_success and results["success"]
    assert results["docs_mode"].startswith("GE Data Docs") and results["chunk_rows"] is None
    checks = {(r["check"], r["column"]) for r in results["results"]}
    assert {("unique", "order_id"), ("in_set", "status"), ("between", "amount")} <= checks
    pages = [
        p for p in (out / "validation" / "validations").rglob("*.html") if "orders" in p.as_posix()
    ]
    assert len(pages) == 1
    html = pages[0].read_text()
    evaluated = re.search(r"Evaluated Expectations</div></td><td[^>]*><div[^>]*>(\d+)<", html)
    assert evaluated is not None and int(evaluated.group(1)) == len(results["results"])
    for r in results["results"]:
        assert r["success"]
        assert r["column"] is None or r["column"] in html


def test_a_bad_csv_fails_naming_its_checks_and_publishes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The contract of the good file (its expectations.json) checked on a bad one: the import
    derives no new checks from the bad data but is held to the good data's."""
    good, bad = tmp_path / "good", tmp_path / "bad"
    for folder, text in ((good, GOOD), (bad, BAD)):
        folder.mkdir()
        (folder / "orders.csv").write_text(text)
    import_dataset(str(good), name="shop", out=str(tmp_path / "v1"))
    contract = ProfileSuite.model_validate_json(
        (tmp_path / "v1" / "validation" / "expectations.json").read_text()
    )
    monkeypatch.setattr(build, "profile_step", lambda _staging, _name: contract)
    out = tmp_path / "v2"
    with pytest.raises(DatasetValidationError) as raised:
        import_dataset(str(bad), name="shop", out=str(out))
    failed = {(r.check, r.column): r for r in raised.value.report.failures()}
    assert set(failed) == {
        ("unique", "order_id"),
        ("in_set", "status"),
        ("not_null", "amount"),
        ("between", "amount"),
    }
    assert failed[("unique", "order_id")].unexpected_count == 2
    assert failed[("in_set", "status")].examples == ["lost"]
    assert jsonable(failed[("between", "amount")].examples) == [99.0]
    message = str(raised.value)
    assert "4 of " in message
    assert "unique (expect_column_values_to_be_unique) on orders.order_id" in message
    assert "in_set (expect_column_values_to_be_in_set) on orders.status" in message
    assert not out.exists() and not list(tmp_path.glob(".v2*"))

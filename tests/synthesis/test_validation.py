"""The spec-derived Great Expectations suite: hand-built warehouses that must pass or must fail
naming the broken expectation, chunking, Data Docs, and the engine's own output."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchforge.synthesis.spec import DomainSpec, load_spec
from benchforge.synthesis.spec.loader import parse_spec
from benchforge.synthesis.validation import (
    DatasetValidationError,
    ValidationReport,
    validate_dataset,
)
from tests.paths import FIXTURES

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

MINI = FIXTURES / "mini_domain.yaml"
CUSTOMERS = 400
ORDERS = 2000

SPEC: dict[str, Any] = {
    "domain": "tiny",
    "calendars": {"default": {"start": "2022-01-01", "end": "2022-12-31"}},
    "tables": [
        {
            "name": "customers",
            "rows": CUSTOMERS,
            "primary_key": "customer_id",
            "columns": [
                {
                    "name": "customer_id",
                    "unique": True,
                    "not_null": True,
                    "generator": {"kind": "sequence", "prefix": "CUS-", "width": 4},
                },
                {
                    "name": "segment",
                    "accepted_values": ["retail", "business"],
                    "generator": {
                        "kind": "categorical",
                        "values": ["retail", "business"],
                        "weights": [1, 1],
                    },
                },
                {
                    "name": "score",
                    "type": "double",
                    "min": 0,
                    "max": 100,
                    "generator": {"kind": "uniform", "low": 0, "high": 100},
                },
            ],
        },
        {
            "name": "orders",
            "rows": ORDERS,
            "primary_key": "order_id",
            "columns": [
                {
                    "name": "order_id",
                    "type": "bigint",
                    "unique": True,
                    "not_null": True,
                    "generator": {"kind": "sequence"},
                },
                {
                    "name": "customer_id",
                    "not_null": True,
                    "generator": {"kind": "foreign_key", "table": "customers"},
                },
                {
                    "name": "amount",
                    "type": "double",
                    "min": 0,
                    "generator": {"kind": "uniform", "low": 10, "high": 20},
                },
                {
                    "name": "is_paid",
                    "type": "boolean",
                    "generator": {"kind": "boolean", "p_true": 0.5},
                },
            ],
        },
    ],
    "stressors": [
        {"kind": "key_drift", "table": "orders", "column": "customer_id", "rate": 0.1},
        {"kind": "missing_values", "table": "orders", "column": "amount", "rate": 0.1},
    ],
}

# Clean, spec-consistent data: every 10th order (i % 10 == 3) has a drifted key, every 10th
# (i % 10 == 7) a blanked amount; both are listed in the manifest.
CUSTOMERS_SQL = f"""
    SELECT 'CUS-' || lpad(CAST(i AS VARCHAR), 4, '0') AS customer_id,
           CASE WHEN i % 2 = 0 THEN 'retail' ELSE 'business' END AS segment,
           CAST((i * 37) % 100 AS DOUBLE) AS score
    FROM range(1, {CUSTOMERS + 1}) r(i)"""
ORDERS_SQL = f"""
    SELECT CAST(i AS BIGINT) AS order_id,
           CASE WHEN i % 10 = 3 THEN lower(k) ELSE k END AS customer_id,
           CASE WHEN i % 10 = 7 THEN NULL ELSE 10 + ((i * 7919) % 1000) / 100 END AS amount,
           i % 2 = 0 AS is_paid
    FROM (SELECT i, 'CUS-' || lpad(CAST(1 + i % {CUSTOMERS} AS VARCHAR), 4, '0') AS k
          FROM range(1, {ORDERS + 1}) r(i))"""
MANIFEST_SQL = """
    SELECT 'orders' AS table_name, 'customer_id' AS column_name,
           CAST(order_id AS VARCHAR) AS row_key, 'key_drift' AS kind, 'lower-cased' AS detail
    FROM raw.orders WHERE order_id % 10 = 3
    UNION ALL
    SELECT 'orders', 'amount', CAST(order_id AS VARCHAR), 'missing_values', 'set to NULL'
    FROM raw.orders WHERE order_id % 10 = 7"""

Mutation = Callable[[duckdb.DuckDBPyConnection], None]


@pytest.fixture(scope="module")
def spec() -> DomainSpec:
    return parse_spec(SPEC, "tiny.yaml")


def build(root: Path, *mutations: Mutation, manifest_sql: str = MANIFEST_SQL) -> Path:
    """A dataset folder like the engine's; ``mutations`` run on the warehouse before the
    manifest is exported (they may also edit the ``manifest`` table)."""
    root.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(root / "warehouse.duckdb"))
    try:
        con.execute("CREATE SCHEMA raw")
        con.execute(f"CREATE TABLE raw.customers AS {CUSTOMERS_SQL}")
        con.execute(f"CREATE TABLE raw.orders AS {ORDERS_SQL}")
        con.execute(f"CREATE TEMP TABLE manifest AS {manifest_sql}")
        for mutate in mutations:
            mutate(con)
        con.execute(f"COPY manifest TO '{root / 'anomalies.parquet'}' (FORMAT parquet)")
    finally:
        con.close()
    return root


def failed(report: ValidationReport) -> set[tuple[str, str, str | None]]:
    return {(r.check, r.table, r.column) for r in report.failures()}


def test_clean_dataset_passes(spec: DomainSpec, tmp_path: Path) -> None:
    report = validate_dataset(spec, build(tmp_path / "ds"))
    assert report.success, report.summary()
    report.raise_for_failures()  # no error
    checks = {r.check for r in report.results}
    assert {
        "schema_columns",
        "primary_key_unique",
        "primary_key_not_null",
        "fk_no_orphans_outside_manifest",
        "fk_orphans_match_manifest",
        "not_null_outside_manifest",
        "nulls_match_manifest",
        "min_max_outside_manifest",
        "accepted_values_outside_manifest",
        "categorical_share",
        "boolean_p_true",
        "distribution_mean",
        "stressor_rate_matches_spec",
        "stressor_rows_changed",
        "manifest_rows_exist",
    } <= checks
    orphans = next(
        r
        for r in report.results
        if r.check == "fk_orphans_match_manifest" and r.column == "customer_id"
    )
    assert orphans.observed == ORDERS // 10
    assert report.table_rows == {"customers": CUSTOMERS, "orders": ORDERS}


def test_duplicate_primary_key_fails(spec: DomainSpec, tmp_path: Path) -> None:
    def duplicate(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("UPDATE raw.orders SET order_id = 1 WHERE order_id = 2")

    report = validate_dataset(spec, build(tmp_path / "ds", duplicate))
    assert failed(report) >= {("primary_key_unique", "orders", "order_id")}
    unique = next(r for r in report.failures() if r.check == "primary_key_unique")
    assert unique.unexpected_count == 2
    assert {e["order_id"] for e in unique.examples} == {1}
    with pytest.raises(DatasetValidationError) as err:
        report.raise_for_failures()
    assert "primary_key_unique (expect_column_values_to_be_unique) on orders.order_id" in str(
        err.value
    )


def test_orphan_outside_manifest_fails(spec: DomainSpec, tmp_path: Path) -> None:
    def orphan(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("UPDATE raw.orders SET customer_id = 'CUS-9999' WHERE order_id = 5")

    report = validate_dataset(spec, build(tmp_path / "ds", orphan))
    assert failed(report) >= {
        ("fk_no_orphans_outside_manifest", "orders", "customer_id"),
        ("fk_orphans_match_manifest", "orders", "customer_id"),
    }
    no_orphans = next(r for r in report.failures() if r.check == "fk_no_orphans_outside_manifest")
    assert no_orphans.unexpected_count == 1
    assert no_orphans.examples[0]["order_id"] == 5
    counts = next(r for r in report.failures() if r.check == "fk_orphans_match_manifest")
    assert (counts.observed, counts.expected) == (ORDERS // 10 + 1, f"== {ORDERS // 10}")
    with pytest.raises(DatasetValidationError, match=r"fk_orphans_match_manifest .* observed 201"):
        report.raise_for_failures()


def test_manifest_count_disagreeing_with_data_fails(spec: DomainSpec, tmp_path: Path) -> None:
    def extra_row(con: duckdb.DuckDBPyConnection) -> None:
        # Claims order 1's amount was blanked, but it is not NULL.
        con.execute("INSERT INTO manifest VALUES ('orders', 'amount', '1', 'missing_values', '')")

    report = validate_dataset(spec, build(tmp_path / "ds", extra_row))
    assert failed(report) >= {
        ("nulls_match_manifest", "orders", "amount"),
        ("stressor_rows_changed", "orders", "amount"),
    }
    nulls = next(r for r in report.failures() if r.check == "nulls_match_manifest")
    assert (nulls.observed, nulls.expected) == (ORDERS // 10, f"== {ORDERS // 10 + 1}")


def test_rate_far_from_spec_fails(spec: DomainSpec, tmp_path: Path) -> None:
    def blank_more(con: duckdb.DuckDBPyConnection) -> None:  # 40% instead of 10%, all listed
        con.execute("UPDATE raw.orders SET amount = NULL WHERE order_id % 10 IN (0, 1, 2)")
        con.execute(
            "INSERT INTO manifest SELECT 'orders', 'amount', CAST(order_id AS VARCHAR), "
            "'missing_values', '' FROM raw.orders WHERE order_id % 10 IN (0, 1, 2)"
        )

    report = validate_dataset(spec, build(tmp_path / "ds", blank_more))
    assert failed(report) == {("stressor_rate_matches_spec", "orders", "amount")}


def test_out_of_range_clean_value_fails(spec: DomainSpec, tmp_path: Path) -> None:
    def too_big(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("UPDATE raw.customers SET score = 150 WHERE customer_id = 'CUS-0010'")

    report = validate_dataset(spec, build(tmp_path / "ds", too_big))
    assert ("min_max_outside_manifest", "customers", "score") in failed(report)
    check = next(r for r in report.failures() if r.check == "min_max_outside_manifest")
    assert check.examples == [{"customer_id": "CUS-0010", "score": 150.0}]


def test_out_of_range_value_listed_in_manifest_passes(spec: DomainSpec, tmp_path: Path) -> None:
    """An anomaly the manifest records is not an error: range checks skip manifest rows."""

    def outlier(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("UPDATE raw.orders SET amount = -5 WHERE order_id = 7")  # a blanked row

    report = validate_dataset(spec, build(tmp_path / "ds", outlier))
    # The row is listed (missing_values), so the range check ignores it; the value is not NULL
    # though, which the stressor checks do notice.
    assert ("min_max_outside_manifest", "orders", "amount") not in failed(report)
    assert ("stressor_rows_changed", "orders", "amount") in failed(report)


def test_skewed_categorical_distribution_fails(spec: DomainSpec, tmp_path: Path) -> None:
    def skew(con: duckdb.DuckDBPyConnection) -> None:  # 80% retail for weights 1:1
        con.execute(
            "UPDATE raw.customers SET segment = CASE WHEN hash(customer_id) % 5 = 0 "
            "THEN 'business' ELSE 'retail' END"
        )

    report = validate_dataset(spec, build(tmp_path / "ds", skew))
    assert failed(report) == {("categorical_share", "customers", "segment")}
    shares = {r.label: r for r in report.results if r.check == "categorical_share"}
    assert not shares["retail"].success and not shares["business"].success
    assert isinstance(shares["retail"].observed, float) and shares["retail"].observed > 0.7
    assert shares["retail"].expected.startswith("between 0.3")


def test_uniqueness_is_exact_across_chunks(spec: DomainSpec, tmp_path: Path) -> None:
    """Rows far apart in the table (and in insertion order) land in the same hash partition."""

    def far_duplicate(con: duckdb.DuckDBPyConnection) -> None:
        con.execute(f"UPDATE raw.orders SET order_id = 3 WHERE order_id = {ORDERS - 1}")
        con.execute("UPDATE raw.orders SET order_id = NULL WHERE order_id = 1500")

    dataset = build(tmp_path / "ds", far_duplicate)
    small = validate_dataset(spec, dataset, chunk_rows=97)
    unique = next(
        r for r in small.results if r.check == "primary_key_unique" and r.table == "orders"
    )
    assert not unique.success and unique.unexpected_count == 2
    assert unique.element_count == ORDERS
    not_null = next(
        r for r in small.results if r.check == "primary_key_not_null" and r.table == "orders"
    )
    assert (not_null.unexpected_count, not_null.element_count) == (1, ORDERS)
    big = validate_dataset(spec, dataset)
    # Every merged count is the same whatever the chunk size.
    assert [(r.check, r.column, r.label, r.observed, r.success) for r in small.results] == [
        (r.check, r.column, r.label, r.observed, r.success) for r in big.results
    ]


def test_missing_table_and_column_fail_schema(spec: DomainSpec, tmp_path: Path) -> None:
    def drop(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("ALTER TABLE raw.orders DROP COLUMN is_paid")

    report = validate_dataset(spec, build(tmp_path / "ds", drop))
    assert ("schema_columns", "orders", None) in failed(report)
    assert not any(r.table == "orders" and r.check == "primary_key_unique" for r in report.results)
    assert any(r.table == "customers" and r.check == "primary_key_unique" for r in report.results)


def test_data_docs_and_results_json(spec: DomainSpec, tmp_path: Path) -> None:
    def orphan(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("UPDATE raw.orders SET customer_id = 'CUS-9999' WHERE order_id = 5")

    docs = tmp_path / "docs"
    report = validate_dataset(spec, build(tmp_path / "ds", orphan), docs_dir=docs)
    assert report.docs_index == str(docs / "index.html")
    assert (docs / "index.html").is_file()
    pages = sorted(p.relative_to(docs).parts[1] for p in docs.glob("validations/**/*.html"))
    assert pages == ["anomaly_manifest", "customers", "orders"]
    orders_page = next(docs.glob("validations/orders/**/*.html")).read_text()
    assert "references an existing customers.customer_id" in orders_page
    saved = json.loads((docs / "results.json").read_text())
    assert saved["success"] is False
    assert len(saved["results"]) == len(report.results)


@pytest.fixture(scope="module")
def engine_dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[DomainSpec, Path]:
    from benchforge.synthesis import engine  # the project's own: an import error fails

    spec = load_spec(MINI)
    out = tmp_path_factory.mktemp("engine") / "mini"
    engine.generate_dataset(spec, scale=1, seed=7, out=out)
    return spec, out


def test_engine_output_passes(engine_dataset: tuple[DomainSpec, Path], tmp_path: Path) -> None:
    spec, out = engine_dataset
    report = validate_dataset(spec, out, docs_dir=tmp_path / "docs", chunk_rows=3000)
    assert report.success, report.summary()
    kinds = {r.label for r in report.results if r.check == "stressor_rate_matches_spec"}
    assert kinds == {s.kind for s in spec.stressors}
    detected = {r.label for r in report.results if r.check == "stressor_detected_matches_manifest"}
    assert detected == {"type_coercion", "duplicate_current", "currency_conflict"}


def test_engine_output_with_a_lost_anomaly_fails(
    engine_dataset: tuple[DomainSpec, Path], tmp_path: Path
) -> None:
    """Dropping one manifest row (the data keeps the anomaly) is caught."""
    spec, out = engine_dataset
    copy = tmp_path / "mini"
    copy.mkdir()
    (copy / "warehouse.duckdb").write_bytes((out / "warehouse.duckdb").read_bytes())
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * FROM '{out / 'anomalies.parquet'}' WHERE NOT (kind = 'duplicate_current'"
        f" AND row_key = (SELECT min(row_key) FROM '{out / 'anomalies.parquet'}' "
        f"WHERE kind = 'duplicate_current'))) TO '{copy / 'anomalies.parquet'}' (FORMAT parquet)"
    )
    con.close()
    report = validate_dataset(spec, copy)
    assert ("stressor_detected_matches_manifest", "account_history", None) in failed(report)
    assert ("stressor_rows_changed", "account_history", None) not in failed(report)

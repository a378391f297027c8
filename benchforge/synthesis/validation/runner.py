"""Runs the spec-derived expectations over a generated dataset with Great Expectations.

Memory stays bounded by ``chunk_rows``: tables are never loaded whole into pandas. Row checks
read ``hash(pk) % P`` partitions of a table (plus per-row helper columns computed in DuckDB),
validate each partition with GE's pandas datasource and merge the results (counts summed, a few
unexpected examples kept). Aggregate checks are computed in DuckDB, and they and the schema
checks (the table's columns and types, from the catalogue) are judged by GE's own verdict on
those metrics (:func:`~benchforge.synthesis.validation.metrics.judge`): a GE validation per table
of a one-row frame cost most of a small dataset's validation. GE's SQL datasource is not used
(with duckdb_engine, results are lost when GE closes its connection). DuckDB itself runs under
``memory_limit`` and spills to a temp folder.
"""

from __future__ import annotations

import json
import logging
import math
import time
from pathlib import Path
from typing import Any

import duckdb
import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd
from great_expectations.core import ExpectationValidationResult
from great_expectations.expectations.expectation import Expectation

from benchforge.synthesis.spec.models import DomainSpec, Table
from benchforge.synthesis.spec.stressors import AnomalyKind
from benchforge.synthesis.validation.docs import TableDocs
from benchforge.synthesis.validation.gxrun import (
    GxRun,
    RowAccumulator,
    attached_warehouse,
    jsonable,
)
from benchforge.synthesis.validation.metrics import column_map_metrics, judge
from benchforge.synthesis.validation.report import CheckResult, ValidationReport
from benchforge.synthesis.validation.sqltext import (
    MANIFEST_TABLE,
    RAW_SCHEMA,
    WAREHOUSE_ALIAS,
    lit,
    q,
)
from benchforge.synthesis.validation.suite import (
    AggregateCheck,
    GenerationInfo,
    MissingDependency,
    RowCheck,
    TablePlan,
    build_plan,
    expected_columns,
)

WAREHOUSE_FILE = "warehouse.duckdb"
ANOMALIES_FILE = "anomalies.parquet"
GENERATION_MANIFEST_FILE = "manifest.json"
MANIFEST_COLUMNS = (
    "table_name VARCHAR, column_name VARCHAR, row_key VARCHAR, kind VARCHAR, detail VARCHAR"
)
GLOBAL = "(manifest)"

log = logging.getLogger(__name__)


def validate_dataset(
    spec: DomainSpec,
    dataset_dir: Path,
    docs_dir: Path | None = None,
    chunk_rows: int = 250_000,
    *,
    memory_limit: str = "512MB",
    threads: int | None = None,
) -> ValidationReport:
    """Validates ``dataset_dir`` (``warehouse.duckdb`` + ``anomalies.parquet``, and the engine's
    ``manifest.json`` when present) against ``spec``.

    Failed expectations are reported, not raised (see ``ValidationReport.raise_for_failures``);
    a missing warehouse raises ``FileNotFoundError``. With ``docs_dir``, GE Data Docs
    (``index.html``) and ``results.json`` are written there. Memory: at most ``chunk_rows`` rows
    are in pandas at a time, and DuckDB works within ``memory_limit`` (spilling to disk).
    """
    started = time.perf_counter()
    dataset_dir = Path(dataset_dir)
    warehouse = dataset_dir / WAREHOUSE_FILE
    if not warehouse.is_file():
        raise FileNotFoundError(f"no {WAREHOUSE_FILE} in {dataset_dir}")
    settings = ["SET preserve_insertion_order = false"]
    if threads:
        settings.append(f"SET threads = {int(threads)}")
    with attached_warehouse(
        warehouse, spill_prefix="bf-validate-", memory_limit=memory_limit, settings=settings
    ) as con:
        run = _Run(spec, con, chunk_rows)
        run.load_manifest(dataset_dir / ANOMALIES_FILE)
        run.execute(_generation_info(dataset_dir / GENERATION_MANIFEST_FILE))
    return run.report(
        domain=spec.domain,
        dataset_dir=dataset_dir,
        started=started,
        docs_dir=None if docs_dir is None else Path(docs_dir),
        run_name=f"{spec.domain}-validation",
        docs_mode=(
            "GE Data Docs built from merged per-table ExpectationSuiteValidationResults "
            "(chunk results merged, stored in a file-mode GE context, build_data_docs)"
        ),
    )


def _generation_info(path: Path) -> GenerationInfo | None:
    """Row and anomaly counts from the engine's ``manifest.json``, read as plain JSON."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        anomalies = {
            table: sum(int(n) for kinds in cols.values() for n in kinds.values())
            for table, cols in data.get("anomaly_counts", {}).items()
        }
        return GenerationInfo(
            scale=float(data["scale"]),
            table_rows={t: int(v["rows"]) for t, v in data.get("tables", {}).items()},
            anomaly_counts=anomalies,
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        log.warning("ignoring unreadable %s", path)
        return None


def _vectorizable(frame: pd.DataFrame, columns: set[str]) -> None:
    """GE's between check is vectorized only for numpy int/float and datetime64[ns] columns
    (pandas nullable integers and DuckDB's datetime64[us] take a per-value Python path)."""
    for c in columns:
        series = frame[c]
        dtype = series.dtype
        try:
            if pd.api.types.is_datetime64_any_dtype(dtype) and dtype != "datetime64[ns]":
                frame[c] = series.astype("datetime64[ns]")
            elif isinstance(dtype, pd.api.extensions.ExtensionDtype) and (
                pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype)
            ):
                has_na = bool(series.isna().any())
                if pd.api.types.is_integer_dtype(dtype) and not has_na:
                    frame[c] = series.astype("int64")
                else:
                    frame[c] = series.astype("float64")
        except (TypeError, ValueError, OverflowError):
            pass  # keep the slow but exact path


def _number(x: float) -> float | int:
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else round(float(x), 6)


def _bounds_text(low: float, high: float) -> str:
    if low == high:
        return f"== {_number(low)}"
    return f"between {_number(low)} and {_number(high)}"


def _judge_schema(rc: RowCheck, actual: dict[str, str]) -> ExpectationValidationResult:
    """A schema check judged by GE on the metrics of the one-row frame of the table's column
    types (``actual``: column -> DuckDB type) it used to validate: its columns, or the column's
    one value (a type name). GE's own verdict, without a validation graph per table."""
    expectation = rc.expectation
    if isinstance(expectation, gxe.ExpectTableColumnsToMatchSet):
        return judge(expectation, {"table.columns": list(actual)})
    assert isinstance(expectation, gxe.ExpectColumnValuesToBeInSet) and rc.column is not None
    value = actual[rc.column]
    wrong = value not in (expectation.value_set or [])
    metrics = column_map_metrics(
        expectation, rows=1, missing=0, unexpected=int(wrong), examples=[value] if wrong else []
    )
    metrics[f"{expectation.map_metric}.unexpected_index_list"] = [0] if wrong else []
    return judge(expectation, metrics)


def _judge_statistic(expectation: Expectation, observed: float) -> ExpectationValidationResult:
    """An aggregate check judged by GE on its observed value, as GE's pandas engine computes
    the column's sum or mean over the one-row frame ``[observed]`` it used to validate."""
    values = pd.Series([observed], dtype="float64")
    if isinstance(expectation, gxe.ExpectColumnSumToBeBetween):
        return judge(expectation, {"column.sum": values.sum()})
    return judge(expectation, {"column.mean": values.mean()})


class _Run(GxRun):
    def __init__(self, spec: DomainSpec, con: duckdb.DuckDBPyConnection, chunk_rows: int):
        super().__init__(con, chunk_rows, datasource="benchforge")
        self.spec = spec

    # ---- inputs

    def load_manifest(self, path: Path) -> None:
        self.manifest_error: str | None = None
        if path.is_file():
            try:
                self.con.execute(
                    f"CREATE TABLE {MANIFEST_TABLE} AS SELECT CAST(table_name AS VARCHAR) AS "
                    "table_name, CAST(column_name AS VARCHAR) AS column_name, CAST(row_key AS "
                    "VARCHAR) AS row_key, CAST(kind AS VARCHAR) AS kind, CAST(detail AS VARCHAR) "
                    f"AS detail FROM read_parquet({lit(str(path))})"
                )
                return
            except duckdb.Error as err:
                self.manifest_error = f"unreadable {path.name}: {err}"
        else:
            self.manifest_error = f"no {path.name}"
        self.con.execute(f"CREATE TABLE {MANIFEST_TABLE} ({MANIFEST_COLUMNS})")

    def warehouse_types(self) -> dict[str, dict[str, str]]:
        rows = self.con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() "
            f"WHERE database_name = {lit(WAREHOUSE_ALIAS)} AND schema_name = {lit(RAW_SCHEMA)} "
            "ORDER BY table_name, column_index"
        ).fetchall()
        types: dict[str, dict[str, str]] = {}
        for table, column, data_type in rows:
            types.setdefault(str(table), {})[str(column)] = str(data_type).upper()
        return types

    # ---- the run

    def execute(self, generation: GenerationInfo | None) -> None:
        types = self.warehouse_types()
        self.global_checks()
        for table in self.spec.generation_order():
            docs = TableDocs(name=table.name, asset=f"{RAW_SCHEMA}.{table.name}")
            self.docs.append(docs)
            if not self.schema_checks(table, types.get(table.name, {}), docs):
                continue
            try:
                plan = build_plan(self.spec, table, types, generation)
            except MissingDependency as missing:
                self.record_failure(
                    docs,
                    table.name,
                    "dependencies_present",
                    f"{table.name}'s checks need table {missing} in the warehouse",
                )
                continue
            self.run_plan(plan, docs)

    def record_failure(self, docs: TableDocs, table: str, check: str, message: str) -> None:
        expectation = gxe.ExpectTableRowCountToBeBetween(
            min_value=0, description=message, meta={"check": check, "table": table}
        )
        result = ExpectationValidationResult(
            success=False,
            expectation_config=expectation.configuration,
            result={"observed_value": message},
        )
        docs.add(expectation, result)
        self.results.append(
            CheckResult(
                check=check,
                expectation_type=expectation.expectation_type,
                table=table,
                description=message,
                success=False,
                observed=message,
                expected="no error",
            )
        )

    def global_checks(self) -> None:
        docs = TableDocs(name="anomaly_manifest", asset="anomalies.parquet")
        self.docs.append(docs)
        if self.manifest_error and self.spec.stressors:
            self.record_failure(docs, GLOBAL, "manifest_readable", self.manifest_error)
        known = ", ".join(lit(t.name) for t in self.spec.tables)
        kinds = ", ".join(lit(k) for k in AnomalyKind.__args__)  # type: ignore[attr-defined]
        row = self.con.execute(
            f"SELECT count(*) FILTER (WHERE table_name NOT IN ({known}) OR table_name IS NULL), "
            f"count(*) FILTER (WHERE kind NOT IN ({kinds}) OR kind IS NULL), "
            f"count(*) FILTER (WHERE row_key IS NULL) FROM {MANIFEST_TABLE}"
        ).fetchone()
        assert row is not None
        values = {"unknown_tables": row[0], "unknown_kinds": row[1], "null_keys": row[2]}
        checks = [
            AggregateCheck(
                "manifest_tables_known",
                GLOBAL,
                "table_name",
                "every manifest row names a table of the spec",
                "count",
                lambda m: (float(m["unknown_tables"] or 0), 0.0, 0.0),
            ),
            AggregateCheck(
                "manifest_kinds_known",
                GLOBAL,
                "kind",
                "every manifest row has a known anomaly kind",
                "count",
                lambda m: (float(m["unknown_kinds"] or 0), 0.0, 0.0),
            ),
            AggregateCheck(
                "manifest_row_keys_present",
                GLOBAL,
                "row_key",
                "every manifest row has a row_key",
                "count",
                lambda m: (float(m["null_keys"] or 0), 0.0, 0.0),
            ),
        ]
        self.validate_aggregates("anomaly_manifest", checks, values, docs, None)

    def schema_checks(self, table: Table, actual: dict[str, str], docs: TableDocs) -> bool:
        """Columns and types as the spec declares; False when the table cannot be checked."""
        expected = expected_columns(self.spec, table)
        checks: list[RowCheck] = []
        meta = {"check": "schema_columns", "table": table.name, "key": "0"}
        checks.append(
            RowCheck(
                "schema_columns",
                table.name,
                None,
                gxe.ExpectTableColumnsToMatchSet(
                    column_set=sorted(expected),
                    exact_match=True,
                    meta=meta,
                    description=(
                        f"raw.{table.name} exists with exactly the columns the spec implies"
                    ),
                ),
                f"columns {sorted(expected)}",
            )
        )
        for i, (c, duck_type) in enumerate(expected.items()):
            if c not in actual:
                continue
            meta = {
                "check": "schema_column_type",
                "table": table.name,
                "column": c,
                "key": str(i + 1),
            }
            checks.append(
                RowCheck(
                    "schema_column_type",
                    table.name,
                    c,
                    gxe.ExpectColumnValuesToBeInSet(
                        column=c,
                        value_set=[duck_type],
                        meta=meta,
                        description=f"raw.{table.name}.{c} has DuckDB type {duck_type}",
                    ),
                    duck_type,
                )
            )
        for rc in checks:
            res = _judge_schema(rc, actual)
            r = res.result or {}
            if rc.check == "schema_columns":
                observed: Any = sorted(actual) if actual else "table missing"
                examples = jsonable(r.get("details", {}).get("mismatched", {}))
            else:
                observed = actual.get(rc.column or "")
                examples = {}
            self.results.append(
                CheckResult(
                    check=rc.check,
                    expectation_type=rc.expectation.expectation_type,
                    table=table.name,
                    column=rc.column,
                    description=rc.expectation.description or "",
                    success=bool(res.success),
                    observed=str(observed),
                    expected=rc.expected,
                    examples=[examples] if examples else [],
                )
            )
            docs.add(rc.expectation, res)
        if actual:
            self.table_rows[table.name] = self.count(table.name)
        return bool(actual) and set(expected) <= set(actual)

    def count(self, table: str) -> int:
        row = self.con.execute(
            f"SELECT count(*) FROM {WAREHOUSE_ALIAS}.{RAW_SCHEMA}.{q(table)}"
        ).fetchone()
        return int(row[0]) if row else 0

    # ---- the checks

    def run_plan(self, plan: TablePlan, docs: TableDocs) -> None:
        con, name = self.con, plan.table.name
        started = time.perf_counter()
        for sql in plan.setup:
            con.execute(sql)
        try:
            rows_started = time.perf_counter()
            self.run_row_checks(plan, docs)
            aggregates_started = time.perf_counter()
            self.run_aggregates(plan, docs)
        finally:
            for sql in plan.cleanup:
                con.execute(sql)
        log.info(
            "validated %s: %d rows, %d row checks, %d aggregate checks; setup %.1fs, "
            "row checks %.1fs, aggregates %.1fs",
            name,
            self.table_rows.get(name, 0),
            len(plan.row_checks),
            len(plan.aggregate_checks),
            rows_started - started,
            aggregates_started - rows_started,
            time.perf_counter() - aggregates_started,
        )

    def run_row_checks(self, plan: TablePlan, docs: TableDocs) -> None:
        name, pk = plan.table.name, plan.primary_key
        parts = max(1, math.ceil(self.table_rows.get(name, 0) / self.chunk_rows))
        suite = gx.ExpectationSuite(
            name=name, expectations=[c.expectation for c in plan.row_checks]
        )
        accumulators = {str(i): RowAccumulator() for i in range(len(plan.row_checks))}
        columns = ", ".join(q(c) for c in plan.fetch)
        between = {
            str(c.expectation.configuration.kwargs["column"])
            for c in plan.row_checks
            if isinstance(c.expectation, gxe.ExpectColumnValuesToBeBetween)
        }
        fetch_s = ge_s = 0.0
        for part in range(parts):
            rows = plan.rows_sql((parts, part) if parts > 1 else None)
            started = time.perf_counter()
            frame = self.con.execute(f"SELECT {columns} FROM ({rows})").fetch_df()
            fetch_s += time.perf_counter() - started
            if frame.empty:
                continue
            _vectorizable(frame, between)
            started = time.perf_counter()
            self.accumulate(name, frame, suite, accumulators, [pk])
            del frame
            ge_s += time.perf_counter() - started
        log.info("%s: %d chunks, DuckDB %.1fs, GE %.1fs", name, parts, fetch_s, ge_s)
        for i, rc in enumerate(plan.row_checks):
            acc = accumulators[str(i)]
            self.results.append(
                CheckResult(
                    check=rc.check,
                    expectation_type=rc.expectation.expectation_type,
                    table=name,
                    column=rc.column,
                    label=rc.label,
                    description=rc.expectation.description or "",
                    success=acc.success,
                    observed=acc.observed(),
                    expected=rc.expected,
                    unexpected_count=acc.unexpected_count,
                    element_count=acc.element_count,
                    examples=acc.examples,
                )
            )
            docs.add(rc.expectation, acc.docs_result(rc.expectation, acc.success))

    def run_aggregates(self, plan: TablePlan, docs: TableDocs) -> None:
        name = plan.table.name
        values: dict[str, float | None] = {}
        sources = {
            "rows": f" FROM {plan.source}",
            "manifest": f" FROM {MANIFEST_TABLE} WHERE table_name = {lit(name)}",
            "scalar": "",
        }
        for source, tail in sources.items():
            items = [(m, sql) for m, (s, sql) in plan.metrics.items() if s == source]
            if not items:
                continue
            select = ", ".join(f"{sql} AS {q(m)}" for m, sql in items)
            try:
                row = self.con.execute(f"SELECT {select}{tail}").fetchone()
            except duckdb.Error as err:
                self.record_failure(docs, name, "aggregate_metrics_computed", f"{source}: {err}")
                continue
            assert row is not None
            for (m, _), v in zip(items, row, strict=True):
                values[m] = None if v is None else float(v)
        self.validate_aggregates(name, plan.aggregate_checks, values, docs, plan)

    def validate_aggregates(
        self,
        name: str,
        checks: list[AggregateCheck],
        values: dict[str, Any],
        docs: TableDocs,
        plan: TablePlan | None,
    ) -> None:
        evaluated: list[tuple[AggregateCheck, str, float, float, float, Expectation]] = []
        named: set[str] = set()  # the Data Docs' column names, each once
        for check in checks:
            try:
                outcome = check.evaluate(values)
            except KeyError:
                outcome = None  # a metric failed to compute (reported separately)
            if outcome is None:
                continue
            observed, low, high = outcome
            key = str(len(evaluated))
            column = f"{check.column or check.table}: {check.check}"
            column += f" [{check.label}]" if check.label else ""
            column += f" #{key}" if column in named else ""
            cls: type[gxe.ExpectColumnSumToBeBetween | gxe.ExpectColumnMeanToBeBetween] = (
                gxe.ExpectColumnSumToBeBetween
                if check.stat == "count"
                else gxe.ExpectColumnMeanToBeBetween
            )
            meta = {
                "check": check.check,
                "table": check.table,
                "column": check.column,
                "label": check.label,
                "key": key,
            }
            description = f"{check.description}; expected {_bounds_text(low, high)}"
            expectation: Expectation = cls(
                column=column, min_value=low, max_value=high, description=description, meta=meta
            )
            evaluated.append((check, key, observed, low, high, expectation))
            named.add(column)
        for check, _, observed, low, high, expectation in evaluated:
            res = _judge_statistic(expectation, observed)
            success = bool(res.success)
            self.results.append(
                CheckResult(
                    check=check.check,
                    expectation_type=expectation.expectation_type,
                    table=check.table,
                    column=check.column,
                    label=check.label,
                    description=check.description,
                    success=success,
                    observed=_number(observed),
                    expected=_bounds_text(low, high),
                )
            )
            docs.add(expectation, res)

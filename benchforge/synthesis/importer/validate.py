"""Runs a :class:`~.profile.ProfileSuite` over a warehouse: DuckDB computes, Great Expectations
judges.

Every row check of a table is one aggregate of a single scan of it: the missing values of each
checked column (NULL, and NaN as pandas counts it), the values outside a check's bounds or value
set, the surplus duplicates of a unique column (``count(c) - count(DISTINCT c)``). Only a check
that fails reads the table again, for a few unexpected values (and, for uniqueness, the exact
number of rows whose value repeats, as GE counts them). Column names and types come from the
catalogue, the row count from the scan. Each expectation's own GE validation then turns those
numbers into its verdict and result (:mod:`benchforge.synthesis.validation.metrics`), so every
check is reported as a GE expectation, over the whole table, in the report and the Data Docs;
no row reaches pandas, and memory is DuckDB's (``memory_limit``, spilling to a temp folder).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import great_expectations.expectations as gxe
from great_expectations.core import ExpectationValidationResult
from great_expectations.expectations.expectation import ColumnMapExpectation
from great_expectations.expectations.expectation import Expectation as GxExpectation

from benchforge.core.sql import literal, quote
from benchforge.synthesis.importer.profile import (
    NAN_TYPES,
    TEXT_TYPES,
    Bound,
    Expectation,
    ProfileSuite,
    base_type,
    column_types,
    is_temporal,
    value_sql,
)
from benchforge.synthesis.importer.sources import first_line
from benchforge.synthesis.validation.docs import TableDocs
from benchforge.synthesis.validation.gxrun import ValidationRun, attached_warehouse, jsonable
from benchforge.synthesis.validation.metrics import (
    MAX_EXAMPLES,
    column_map_metrics,
    judge,
    not_evaluated,
)
from benchforge.synthesis.validation.report import CheckResult, ValidationReport
from benchforge.synthesis.validation.sqltext import WAREHOUSE_ALIAS

RAW = "raw"
EXPECTATIONS_FILE = "expectations.json"
ROW_KINDS = {"not_null", "unique", "between", "in_set"}


def validate_warehouse(
    warehouse: Path,
    suite: ProfileSuite,
    *,
    docs_dir: Path | None = None,
    memory_limit: str = "512MB",
) -> ValidationReport:
    """Validates the ``raw`` tables of ``warehouse`` against ``suite``. Failures are reported,
    not raised (``report.raise_for_failures()``). With ``docs_dir``: Data Docs
    (``index.html``), ``results.json`` and the suite (``expectations.json``) are written there."""
    started = time.perf_counter()
    with attached_warehouse(
        warehouse,
        spill_prefix="bf-import-validate-",
        memory_limit=memory_limit,
        settings=["SET TimeZone = 'UTC'"],
    ) as con:
        run = _Run(con)
        types = column_types(con, WAREHOUSE_ALIAS, RAW)
        for table in sorted({e.table for e in suite.expectations}):
            run.table(table, types.get(table, {}), suite.for_table(table))
    report = run.report(
        domain=suite.dataset,
        dataset_dir=warehouse.parent,
        started=started,
        docs_dir=docs_dir,
        run_name=f"{suite.dataset}-import",
        docs_mode=(
            "GE Data Docs of the profile-derived expectations (expectations.json), each "
            "validated by GE on metrics DuckDB computed over the whole table"
        ),
    )
    if docs_dir is not None:
        (docs_dir / EXPECTATIONS_FILE).write_text(suite.model_dump_json(indent=2) + "\n")
    return report


def gx_expectation(e: Expectation) -> GxExpectation:
    """The Great Expectations expectation of one of ours."""
    meta = {"check": e.kind, "table": e.table, "column": e.column}
    common: dict[str, Any] = {"meta": meta, "description": e.describe()}
    column = e.column or ""
    if e.kind == "columns":
        return gxe.ExpectTableColumnsToMatchOrderedList(column_list=e.columns or [], **common)
    if e.kind == "row_count":
        return gxe.ExpectTableRowCountToEqual(value=e.rows or 0, **common)
    if e.kind == "type":
        return gxe.ExpectColumnValuesToBeInSet(column=column, value_set=[e.type], **common)
    if e.kind == "not_null":
        return gxe.ExpectColumnValuesToNotBeNull(column=column, **common)
    if e.kind == "unique":
        return gxe.ExpectColumnValuesToBeUnique(column=column, **common)
    if e.kind == "between":
        return gxe.ExpectColumnValuesToBeBetween(
            column=column, min_value=_gx_bound(e.min), max_value=_gx_bound(e.max), **common
        )
    return gxe.ExpectColumnValuesToBeInSet(column=column, value_set=e.values or [], **common)


def _gx_bound(bound: Bound | None) -> float | datetime | None:
    """A bound as GE takes it: ISO text (dates and timestamps) as a datetime."""
    return datetime.fromisoformat(bound) if isinstance(bound, str) else bound


def unexpected_condition(e: Expectation, duck_type: str) -> str | None:
    """The SQL condition of a non-missing value that fails a row check (``None``: not_null,
    whose unexpected values are the missing ones; unique, counted by duplicates)."""
    value = value_sql(e.column or "", duck_type)
    present = f"NOT isnan({value})" if base_type(duck_type) in NAN_TYPES else f"{value} IS NOT NULL"
    if e.kind == "between":
        outside = [
            f"{value} {op} {_bound_sql(bound, duck_type)}"
            for op, bound in (("<", e.min), (">", e.max))
            if bound is not None
        ]
        return f"{present} AND ({' OR '.join(outside)})" if outside else "FALSE"
    if e.kind == "in_set":
        text = value if base_type(duck_type) in TEXT_TYPES else f"CAST({value} AS VARCHAR)"
        if not e.values:
            return present
        return f"{present} AND {text} NOT IN ({', '.join(literal(v) for v in e.values)})"
    return None


def missing_sql(column: str, duck_type: str) -> str:
    """The column's missing values: NULL, and NaN (pandas, hence GE, reads NaN as missing)."""
    col = quote(column)
    if base_type(duck_type) in NAN_TYPES:
        return f"count(*) FILTER (WHERE {col} IS NULL OR isnan({col}))"
    return f"count(*) - count({col})"


def _bound_sql(bound: Bound, duck_type: str) -> str:
    """A bound as the value it is compared with: ISO text as a DATE or TIMESTAMP (as
    :func:`value_sql` gives the column), a float parsed from its repr (exactly that double)."""
    if isinstance(bound, str):
        cast = "DATE" if base_type(duck_type) == "DATE" else "TIMESTAMP"
        return f"CAST({literal(bound)} AS {cast if is_temporal(duck_type) else 'DOUBLE'})"
    if isinstance(bound, float):
        return f"CAST({literal(repr(bound))} AS DOUBLE)"
    return literal(bound)


@dataclass
class _Scan:
    """One table's aggregates: its rows, and each named aggregate's value or error."""

    rows: int
    values: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


class _Run(ValidationRun):
    """Each table: its catalogue, one scan of aggregates, GE's verdict on each check."""

    def table(self, name: str, actual: dict[str, str], expectations: list[Expectation]) -> None:
        docs = TableDocs(name=name, asset=f"{RAW}.{name}")
        self.docs.append(docs)
        pairs = [(e, gx_expectation(e)) for e in expectations]
        if not actual:
            for e, g in pairs:
                self.record(docs, e, g, not_evaluated(g, f"table raw.{name} is missing"))
            return
        row_checks = {str(i): e for i, e in enumerate(expectations) if e.kind in ROW_KINDS}
        scan = self.scan(name, actual, row_checks)
        self.table_rows[name] = scan.rows
        for i, (e, g) in enumerate(pairs):
            self.record(docs, e, g, self.evaluate(name, actual, e, g, scan, str(i)))

    def source(self, table: str) -> str:
        return f"{WAREHOUSE_ALIAS}.{RAW}.{quote(table)}"

    def scan(self, name: str, actual: dict[str, str], checks: dict[str, Expectation]) -> _Scan:
        """Every aggregate the table's row checks need, in one query; should that query fail
        (a suite whose bounds no longer fit a column's type), each aggregate alone, so only the
        checks at fault fail."""
        parts: dict[str, str] = {}
        for i, e in checks.items():
            column = e.column or ""
            if column not in actual:
                continue
            duck_type = actual[column]
            parts[f"missing:{column}"] = missing_sql(column, duck_type)
            if e.kind == "unique":
                parts[f"surplus:{column}"] = (
                    f"count({quote(column)}) - count(DISTINCT {quote(column)})"
                )
            condition = unexpected_condition(e, duck_type)
            if condition is not None:
                parts[f"check:{i}:{e.kind}:{column}"] = f"count(*) FILTER (WHERE {condition})"
        keys = list(parts)
        select = ", ".join(["count(*)", *parts.values()])
        try:
            row = self.con.execute(f"SELECT {select} FROM {self.source(name)}").fetchone()
            assert row is not None
            return _Scan(
                rows=int(row[0]), values={k: int(v) for k, v in zip(keys, row[1:], strict=True)}
            )
        except duckdb.Error:
            pass
        scan = _Scan(rows=self.scalar(f"SELECT count(*) FROM {self.source(name)}"))
        for key, sql in parts.items():
            try:
                scan.values[key] = self.scalar(f"SELECT {sql} FROM {self.source(name)}")
            except duckdb.Error as err:
                scan.errors[key] = first_line(err)
        return scan

    def scalar(self, sql: str) -> int:
        row = self.con.execute(sql).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def evaluate(
        self,
        name: str,
        actual: dict[str, str],
        e: Expectation,
        g: GxExpectation,
        scan: _Scan,
        index: str,
    ) -> ExpectationValidationResult:
        """GE's verdict on one check, from the catalogue or the scan."""
        if e.kind == "columns":
            return judge(g, {"table.columns": list(actual)})
        if e.kind == "row_count":
            return judge(g, {"table.row_count": scan.rows})
        column = e.column or ""
        if column not in actual:
            return not_evaluated(g, f"column {column} is missing")
        assert isinstance(g, ColumnMapExpectation)
        if e.kind == "type":
            differs = actual[column] != e.type
            return judge(
                g,
                column_map_metrics(
                    g,
                    rows=1,
                    missing=0,
                    unexpected=int(differs),
                    examples=[actual[column]] if differs else [],
                ),
            )
        keys = [f"missing:{column}"]
        if e.kind == "unique":
            keys.append(f"surplus:{column}")
        elif e.kind != "not_null":
            keys.append(f"check:{index}:{e.kind}:{column}")
        errors = [scan.errors[k] for k in keys if k in scan.errors]
        if errors:
            return not_evaluated(g, errors[0])
        missing = scan.values[keys[0]]
        if e.kind == "not_null":
            unexpected, examples = missing, [None] * min(missing, MAX_EXAMPLES)
        elif e.kind == "unique":
            unexpected, examples = self.duplicates(
                name, column, actual[column], scan.values[keys[1]]
            )
        else:
            unexpected = scan.values[keys[1]]
            condition = unexpected_condition(e, actual[column])
            examples = self.examples(name, column, actual[column], condition) if unexpected else []
        metrics = column_map_metrics(
            g, rows=scan.rows, missing=missing, unexpected=unexpected, examples=examples
        )
        return judge(g, metrics)

    def examples(self, name: str, column: str, duck_type: str, condition: str | None) -> list[Any]:
        """The first few unexpected values, in table order."""
        rows = self.con.execute(
            f"SELECT {value_sql(column, duck_type)} FROM {self.source(name)} "
            f"WHERE {condition} ORDER BY rowid LIMIT {MAX_EXAMPLES}"
        ).fetchall()
        return [jsonable(r[0]) for r in rows]

    def duplicates(
        self, name: str, column: str, duck_type: str, surplus: int
    ) -> tuple[int, list[Any]]:
        """The rows whose value repeats (GE counts every one of them) and the first few of
        their values; ``surplus`` (rows beyond the distinct values) 0: none, no query."""
        if surplus == 0:
            return 0, []
        col, source = quote(column), self.source(name)
        repeated = (
            f"SELECT {col} FROM {source} WHERE {col} IS NOT NULL GROUP BY {col} HAVING count(*) > 1"
        )
        count = self.scalar(f"SELECT count(*) FROM {source} WHERE {col} IN ({repeated})")
        condition = f"{col} IN ({repeated})"
        return count, self.examples(name, column, duck_type, condition)

    def record(
        self,
        docs: TableDocs,
        e: Expectation,
        g: GxExpectation,
        result: ExpectationValidationResult,
    ) -> None:
        """Adds GE's result of one check to the report and the Data Docs."""
        outcome = result.result or {}
        info = result.exception_info or {}
        rows = e.kind in ROW_KINDS
        if info.get("raised_exception"):
            observed = f"error: {info.get('exception_message')}"
        elif rows:
            observed = (
                f"{outcome.get('unexpected_count', 0)} unexpected of "
                f"{outcome.get('element_count', 0)} rows"
            )
        elif e.kind == "type":
            observed = str((outcome.get("partial_unexpected_list") or [e.type])[0])
        elif e.kind == "columns":
            observed = ", ".join(str(c) for c in outcome.get("observed_value") or [])
        else:
            observed = str(outcome.get("observed_value"))
        self.results.append(
            CheckResult(
                check=e.kind,
                expectation_type=g.expectation_type,
                table=e.table,
                column=e.column,
                description=e.describe(),
                success=bool(result.success),
                observed=observed,
                expected=e.expected(),
                unexpected_count=outcome.get("unexpected_count") if rows else None,
                element_count=outcome.get("element_count") if rows else None,
                examples=jsonable(list(outcome.get("partial_unexpected_list") or []))
                if rows
                else [],
            )
        )
        docs.add(g, result)

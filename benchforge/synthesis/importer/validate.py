"""Runs a :class:`~.profile.ProfileSuite` over a warehouse with Great Expectations.

As for synthesized datasets, memory stays bounded: row checks read a table in ``rowid`` ranges
of ``chunk_rows`` rows, each validated with GE's pandas datasource and the results merged
(counts summed, a few unexpected values kept). Uniqueness cannot be checked chunk by chunk, so
when a table spans several chunks each unique column is read again in ``hash(value) % P``
partitions (duplicates always share a partition). Column names and types are validated on a
one-row frame of the catalogue, the row count on a one-row frame of the count. The results
become Data Docs through :func:`benchforge.synthesis.validation.docs.write_data_docs`.
"""

from __future__ import annotations

import math
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd
from great_expectations.core import ExpectationValidationResult
from great_expectations.expectations.expectation import Expectation as GxExpectation

from benchforge.core.sql import quote
from benchforge.synthesis.importer.profile import (
    Expectation,
    ProfileSuite,
    column_types,
    is_temporal,
    value_sql,
)
from benchforge.synthesis.validation.docs import TableDocs
from benchforge.synthesis.validation.gxrun import GxRun, RowAccumulator, attached_warehouse
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
    chunk_rows: int = 250_000,
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
        run = _Run(con, chunk_rows)
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
            "GE Data Docs built from merged per-table ExpectationSuiteValidationResults of the "
            "profile-derived expectations (expectations.json)"
        ),
    )
    if docs_dir is not None:
        (docs_dir / EXPECTATIONS_FILE).write_text(suite.model_dump_json(indent=2) + "\n")
    return report


def gx_expectation(e: Expectation, duck_type: str | None, key: str) -> GxExpectation:
    """The Great Expectations expectation of one of ours (``key`` maps results back)."""
    meta = {"key": key, "check": e.kind, "table": e.table, "column": e.column}
    common: dict[str, Any] = {"meta": meta, "description": e.describe()}
    column = e.column or ""
    if e.kind == "columns":
        return gxe.ExpectTableColumnsToMatchOrderedList(column_list=e.columns or [], **common)
    if e.kind == "row_count":
        return gxe.ExpectColumnValuesToBeBetween(
            column="row_count", min_value=e.rows, max_value=e.rows, **common
        )
    if e.kind == "type":
        return gxe.ExpectColumnValuesToBeInSet(column=column, value_set=[e.type], **common)
    if e.kind == "not_null":
        return gxe.ExpectColumnValuesToNotBeNull(column=column, **common)
    if e.kind == "unique":
        return gxe.ExpectColumnValuesToBeUnique(column=column, **common)
    if e.kind == "between":
        temporal = duck_type is not None and is_temporal(duck_type)
        return gxe.ExpectColumnValuesToBeBetween(
            column=column,
            min_value=_bound(e.min, temporal),
            max_value=_bound(e.max, temporal),
            **common,
        )
    return gxe.ExpectColumnValuesToBeInSet(column=column, value_set=e.values or [], **common)


def _bound(value: int | float | str | None, temporal: bool) -> Any:
    """pandas reads dates and timestamps as datetime64: ISO bounds become datetimes."""
    if temporal and isinstance(value, str):
        return datetime.fromisoformat(value)
    return value


class _Run(GxRun):
    """Checks by kind: the catalogue and the count on one-row frames, row checks in chunks."""

    def __init__(self, con: duckdb.DuckDBPyConnection, chunk_rows: int):
        super().__init__(con, chunk_rows, datasource="benchforge-import")

    def table(self, name: str, actual: dict[str, str], expectations: list[Expectation]) -> None:
        docs = TableDocs(name=name, asset=f"{RAW}.{name}")
        self.docs.append(docs)
        pairs = [
            (e, gx_expectation(e, actual.get(e.column or ""), str(i)))
            for i, e in enumerate(expectations)
        ]
        if not actual:
            for e, gxe_ in pairs:
                self.record(docs, e, gxe_, RowAccumulator(errors=[f"table raw.{name} is missing"]))
            return
        rows = self.count(name)
        self.table_rows[name] = rows
        schema = [(e, g) for e, g in pairs if e.kind in ("columns", "type")]
        self.frame_checks(docs, f"{name}__schema", pd.DataFrame([actual]), schema)
        counted = [(e, g) for e, g in pairs if e.kind == "row_count"]
        self.frame_checks(docs, f"{name}__rows", pd.DataFrame({"row_count": [rows]}), counted)
        row_checks = [(e, g) for e, g in pairs if e.kind in ROW_KINDS]
        missing = [(e, g) for e, g in row_checks if e.column not in actual]
        for e, g in missing:
            self.record(docs, e, g, RowAccumulator(errors=[f"column {e.column} is missing"]))
        present = [(e, g) for e, g in row_checks if e.column in actual]
        if present:
            self.row_checks(docs, name, actual, present, rows)

    def count(self, table: str) -> int:
        row = self.con.execute(f"SELECT count(*) FROM {self.source(table)}").fetchone()
        return int(row[0]) if row else 0

    def source(self, table: str) -> str:
        return f"{WAREHOUSE_ALIAS}.{RAW}.{quote(table)}"

    def frame_checks(
        self,
        docs: TableDocs,
        asset: str,
        frame: pd.DataFrame,
        pairs: list[tuple[Expectation, GxExpectation]],
    ) -> None:
        if not pairs:
            return
        results = self.validate_frame(asset, frame, _suite(asset, pairs))
        for e, g in pairs:
            merged = RowAccumulator()
            result = results.get(_key(g))
            merged.add(result)
            self.record(docs, e, g, merged, result, observed=_observed(e, frame))

    def row_checks(
        self,
        docs: TableDocs,
        name: str,
        actual: dict[str, str],
        pairs: list[tuple[Expectation, GxExpectation]],
        rows: int,
    ) -> None:
        parts = max(1, math.ceil(rows / self.chunk_rows))
        merged = {_key(g): RowAccumulator() for _, g in pairs}
        chunked = [(e, g) for e, g in pairs if e.kind != "unique" or parts == 1]
        columns = sorted({e.column for e, _ in chunked if e.column}, key=list(actual).index)
        select = ", ".join(f"{value_sql(c, actual[c])} AS {quote(c)}" for c in columns)
        for lo in range(0, rows, self.chunk_rows):
            frame = self.con.execute(
                f"SELECT {select} FROM {self.source(name)} "
                f"WHERE rowid >= {lo} AND rowid < {lo + self.chunk_rows}"
            ).fetch_df()
            self.chunk(name, frame, chunked, merged)
        for e, g in pairs:
            if e.kind != "unique" or parts == 1:
                continue
            column = e.column or ""
            value = value_sql(column, actual[column])
            for part in range(parts):
                frame = self.con.execute(
                    f"SELECT {value} AS {quote(column)} FROM {self.source(name)} "
                    f"WHERE hash({quote(column)}) % {parts} = {part}"
                ).fetch_df()
                self.chunk(f"{name}__unique", frame, [(e, g)], merged)
        for e, g in pairs:
            self.record(docs, e, g, merged[_key(g)])

    def chunk(
        self,
        asset: str,
        frame: pd.DataFrame,
        pairs: list[tuple[Expectation, GxExpectation]],
        merged: dict[str, RowAccumulator],
    ) -> None:
        if frame.empty:
            return
        accumulators = {_key(g): merged[_key(g)] for _, g in pairs}
        self.accumulate(asset, frame, _suite(asset, pairs), accumulators)

    def record(
        self,
        docs: TableDocs,
        e: Expectation,
        g: GxExpectation,
        merged: RowAccumulator,
        result: ExpectationValidationResult | None = None,
        observed: str | None = None,
    ) -> None:
        """Adds the check's result (``result``: GE's own, for frame checks; else the merged
        chunk results) to the report and the Data Docs."""
        if result is not None:
            success = bool(result.success) and not merged.errors
        else:
            success = merged.success
        if merged.errors or observed is None:
            observed = merged.observed()
        self.results.append(
            CheckResult(
                check=e.kind,
                expectation_type=g.expectation_type,
                table=e.table,
                column=e.column,
                description=e.describe(),
                success=success,
                observed=observed,
                expected=e.expected(),
                unexpected_count=merged.unexpected_count if e.kind in ROW_KINDS else None,
                element_count=merged.element_count if e.kind in ROW_KINDS else None,
                examples=merged.values,
            )
        )
        docs.add(g, result if result is not None else merged.docs_result(g, success))


def _observed(e: Expectation, frame: pd.DataFrame) -> str:
    """What a catalogue or count check saw: the columns, a column's type, the row count."""
    if e.kind == "columns":
        return ", ".join(str(c) for c in frame.columns)
    if e.kind == "type":
        return str(frame[e.column].iloc[0]) if e.column in frame.columns else "no such column"
    return str(frame["row_count"].iloc[0])


def _key(g: GxExpectation) -> str:
    return str((g.meta or {}).get("key"))


def _suite(asset: str, pairs: list[tuple[Expectation, GxExpectation]]) -> gx.ExpectationSuite:
    return gx.ExpectationSuite(name=asset, expectations=[g for _, g in pairs])

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

import logging
import math
import os
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd
from great_expectations.core import ExpectationValidationResult
from great_expectations.data_context.types.base import ProgressBarsConfig
from great_expectations.expectations.expectation import Expectation as GxExpectation

from benchforge.core.sql import literal, quote
from benchforge.synthesis.importer.profile import (
    Expectation,
    ProfileSuite,
    column_types,
    is_temporal,
    value_sql,
)
from benchforge.synthesis.validation.docs import TableDocs, write_data_docs
from benchforge.synthesis.validation.report import CheckResult, ValidationReport

WAREHOUSE_ALIAS = "wh"
RAW = "raw"
RESULTS_FILE = "results.json"
EXPECTATIONS_FILE = "expectations.json"
MAX_EXAMPLES = 5
ROW_KINDS = {"not_null", "unique", "between", "in_set"}

log = logging.getLogger(__name__)


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
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be positive")
    with tempfile.TemporaryDirectory(prefix="bf-import-validate-") as spill, _quiet_gx():
        con = duckdb.connect()
        try:
            con.execute(f"SET memory_limit = {literal(memory_limit)}")
            con.execute(f"SET temp_directory = {literal(spill)}")
            con.execute("SET TimeZone = 'UTC'")
            con.execute("SET enable_progress_bar = false")
            con.execute(f"ATTACH {literal(str(warehouse))} AS {WAREHOUSE_ALIAS} (READ_ONLY)")
            run = _Run(con, chunk_rows)
            types = column_types(con, WAREHOUSE_ALIAS, RAW)
            for table in sorted({e.table for e in suite.expectations}):
                run.table(table, types.get(table, {}), suite.for_table(table))
        finally:
            con.close()
    report = ValidationReport(
        domain=suite.dataset,
        dataset_dir=str(warehouse.parent),
        success=all(r.success for r in run.results),
        results=run.results,
        table_rows=run.table_rows,
        chunk_rows=chunk_rows,
        elapsed_s=round(time.perf_counter() - started, 3),
    )
    if docs_dir is not None:
        with _quiet_gx():
            index = write_data_docs(run.docs, docs_dir, run_name=f"{suite.dataset}-import")
        report.docs_index = str(index)
        report.docs_mode = (
            "GE Data Docs built from merged per-table ExpectationSuiteValidationResults of the "
            "profile-derived expectations (expectations.json)"
        )
        report.elapsed_s = round(time.perf_counter() - started, 3)
        (docs_dir / RESULTS_FILE).write_text(report.model_dump_json(indent=2) + "\n")
        (docs_dir / EXPECTATIONS_FILE).write_text(suite.model_dump_json(indent=2) + "\n")
    return report


@contextmanager
def _quiet_gx() -> Iterator[None]:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    logger = logging.getLogger("great_expectations")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


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


@dataclass
class _Merged:
    """One row expectation's results over every chunk of its table."""

    element_count: int = 0
    unexpected_count: int = 0
    missing_count: int = 0
    values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, result: ExpectationValidationResult | None) -> None:
        if result is None:
            self.errors.append("not evaluated")
            return
        info = result.exception_info or {}
        if info.get("raised_exception"):
            self.errors.append(str(info.get("exception_message")))
            return
        r = result.result or {}
        self.element_count += int(r.get("element_count") or 0)
        self.unexpected_count += int(r.get("unexpected_count") or 0)
        self.missing_count += int(r.get("missing_count") or 0)
        room = MAX_EXAMPLES - len(self.values)
        self.values += [_jsonable(v) for v in (r.get("partial_unexpected_list") or [])[:room]]

    @property
    def success(self) -> bool:
        return not self.errors and self.unexpected_count == 0

    def ge_result(self) -> dict[str, Any]:
        n, u, missing = self.element_count, self.unexpected_count, self.missing_count
        nonmissing = n - missing
        return {
            "element_count": n,
            "unexpected_count": u,
            "unexpected_percent": 100.0 * u / nonmissing if nonmissing else 0.0,
            "missing_count": missing,
            "missing_percent": 100.0 * missing / n if n else 0.0,
            "partial_unexpected_list": self.values,
        }


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        with suppress(ValueError, AttributeError):
            value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, datetime | pd.Timestamp):
        return value.isoformat()
    return str(value)


class _Run:
    def __init__(self, con: duckdb.DuckDBPyConnection, chunk_rows: int):
        self.con, self.chunk_rows = con, chunk_rows
        self.results: list[CheckResult] = []
        self.table_rows: dict[str, int] = {}
        self.docs: list[TableDocs] = []
        self.context = gx.get_context(mode="ephemeral")
        self.context.variables.progress_bars = ProgressBarsConfig(
            globally=False, metric_calculations=False
        )
        self.datasource = self.context.data_sources.add_pandas("benchforge-import")
        self.batches: dict[str, Any] = {}

    def table(self, name: str, actual: dict[str, str], expectations: list[Expectation]) -> None:
        docs = TableDocs(name=name, asset=f"{RAW}.{name}")
        self.docs.append(docs)
        pairs = [
            (e, gx_expectation(e, actual.get(e.column or ""), str(i)))
            for i, e in enumerate(expectations)
        ]
        if not actual:
            for e, gxe_ in pairs:
                self.record(docs, e, gxe_, _Merged(errors=[f"table raw.{name} is missing"]))
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
            self.record(docs, e, g, _Merged(errors=[f"column {e.column} is missing"]))
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
        results = self.validate(asset, frame, [g for _, g in pairs])
        for e, g in pairs:
            merged = _Merged()
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
        merged = {_key(g): _Merged() for _, g in pairs}
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
        merged: dict[str, _Merged],
    ) -> None:
        if frame.empty:
            return
        try:
            results = self.validate(asset, frame, [g for _, g in pairs])
        except Exception as err:  # GE failing on a chunk fails its checks, not the run
            for _, g in pairs:
                merged[_key(g)].errors.append(f"{type(err).__name__}: {err}")
            return
        for _, g in pairs:
            merged[_key(g)].add(results.get(_key(g)))

    def validate(
        self, asset: str, frame: pd.DataFrame, expectations: list[GxExpectation]
    ) -> dict[str, ExpectationValidationResult]:
        batch_definition = self.batches.get(asset)
        if batch_definition is None:
            data_asset = self.datasource.add_dataframe_asset(name=asset)
            batch_definition = data_asset.add_batch_definition_whole_dataframe("frame")
            self.batches[asset] = batch_definition
        suite = gx.ExpectationSuite(name=asset, expectations=expectations)
        batch = batch_definition.get_batch(batch_parameters={"dataframe": frame})
        outcome = batch.validate(
            suite,
            result_format={"result_format": "SUMMARY", "partial_unexpected_count": MAX_EXAMPLES},
        )
        return {
            str((r.expectation_config.meta or {}).get("key")): r
            for r in outcome.results
            if r.expectation_config is not None
        }

    def record(
        self,
        docs: TableDocs,
        e: Expectation,
        g: GxExpectation,
        merged: _Merged,
        result: ExpectationValidationResult | None = None,
        observed: str | None = None,
    ) -> None:
        """Adds the check's result (``result``: GE's own, for frame checks; else the merged
        chunk results) to the report and the Data Docs."""
        if result is not None:
            success = bool(result.success) and not merged.errors
        else:
            success = merged.success
        if merged.errors:
            observed = f"error: {merged.errors[0]}"
        elif observed is None:
            observed = f"{merged.unexpected_count} unexpected of {merged.element_count} rows"
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
        if result is None:
            exception = (
                {"raised_exception": True, "exception_message": merged.errors[0]}
                if merged.errors
                else None
            )
            result = ExpectationValidationResult(
                success=success,
                expectation_config=g.configuration,
                result=merged.ge_result(),
                exception_info=exception,
            )
        docs.add(g, result)


def _observed(e: Expectation, frame: pd.DataFrame) -> str:
    """What a catalogue or count check saw: the columns, a column's type, the row count."""
    if e.kind == "columns":
        return ", ".join(str(c) for c in frame.columns)
    if e.kind == "type":
        return str(frame[e.column].iloc[0]) if e.column in frame.columns else "no such column"
    return str(frame["row_count"].iloc[0])


def _key(g: GxExpectation) -> str:
    return str((g.meta or {}).get("key"))

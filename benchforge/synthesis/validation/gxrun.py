"""The Great Expectations machinery shared by both dataset validators.

A synthesized dataset (checks derived from its spec, :mod:`.runner`) and an imported one (checks
derived from a profile, :mod:`benchforge.synthesis.importer.validate`) are validated on a
read-only DuckDB attachment of the warehouse that spills to a temp folder, and end in one report
plus Data Docs (:class:`ValidationRun`). The synthesized dataset's row checks run in GE's pandas
datasource on frames of at most ``chunk_rows`` rows, each check's chunk results merged into one
(counts summed, a few unexpected examples kept: :class:`GxRun`); the imported dataset's checks
are aggregates of one SQL scan per table that GE judges
(:mod:`benchforge.synthesis.validation.metrics`).
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb
import great_expectations as gx
import pandas as pd
from great_expectations.core import ExpectationValidationResult
from great_expectations.data_context.types.base import ProgressBarsConfig
from great_expectations.expectations.expectation import Expectation

from benchforge.synthesis.validation.docs import TableDocs, write_data_docs
from benchforge.synthesis.validation.report import CheckResult, ValidationReport
from benchforge.synthesis.validation.sqltext import WAREHOUSE_ALIAS, lit

RESULTS_FILE = "results.json"
MAX_EXAMPLES = 5


@contextmanager
def quiet_gx() -> Iterator[None]:
    """GE without analytics, progress chatter or warnings (they would flood a run's log)."""
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


@contextmanager
def attached_warehouse(
    warehouse: Path, *, spill_prefix: str, memory_limit: str, settings: Sequence[str] = ()
) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB with ``warehouse`` attached read-only as ``wh``, held to
    ``memory_limit`` and spilling to a temp folder removed afterwards; ``settings`` are further
    ``SET`` statements. GE is quiet for the whole block."""
    with tempfile.TemporaryDirectory(prefix=spill_prefix) as spill, quiet_gx():
        con = duckdb.connect()
        try:
            con.execute(f"SET memory_limit = {lit(memory_limit)}")
            con.execute(f"SET temp_directory = {lit(spill)}")
            con.execute("SET enable_progress_bar = false")
            for setting in settings:
                con.execute(setting)
            con.execute(f"ATTACH {lit(str(warehouse))} AS {WAREHOUSE_ALIAS} (READ_ONLY)")
            yield con
        finally:
            con.close()


def jsonable(value: Any) -> Any:
    """A value GE returned (numpy scalars, timestamps, NA) as plain JSON for the report."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        with suppress(ValueError, AttributeError):
            value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, datetime | date | pd.Timestamp):
        return value.isoformat()
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


@dataclass
class RowAccumulator:
    """One row check's results over every chunk it ran on: counts summed, the first few
    unexpected rows kept (``examples``: their index columns when GE gave them, else their
    values), and GE's errors (a chunk that raised, a check GE did not evaluate)."""

    element_count: int = 0
    unexpected_count: int = 0
    missing_count: int = 0
    examples: list[Any] = field(default_factory=list)
    values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, result: ExpectationValidationResult | None) -> None:
        """Adds one chunk's result; ``None``: GE returned none for the check."""
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
        room = MAX_EXAMPLES - len(self.examples)
        if room > 0:
            index_list = r.get("partial_unexpected_index_list") or []
            values = r.get("partial_unexpected_list") or []
            if index_list:
                self.examples += [jsonable(x) for x in index_list[:room]]
            else:
                self.examples += [jsonable(x) for x in values[:room]]
            self.values += [jsonable(x) for x in values[: MAX_EXAMPLES - len(self.values)]]

    @property
    def success(self) -> bool:
        return not self.errors and self.unexpected_count == 0

    def observed(self) -> str:
        """The report's "observed": the first error, else how many rows were unexpected."""
        if self.errors:
            return f"error: {self.errors[0]}"
        return f"{self.unexpected_count} unexpected of {self.element_count} rows"

    def ge_result(self) -> dict[str, Any]:
        n, u, missing = self.element_count, self.unexpected_count, self.missing_count
        nonmissing = n - missing
        return {
            "element_count": n,
            "unexpected_count": u,
            "unexpected_percent": 100.0 * u / nonmissing if nonmissing else 0.0,
            "unexpected_percent_total": 100.0 * u / n if n else 0.0,
            "unexpected_percent_nonmissing": 100.0 * u / nonmissing if nonmissing else 0.0,
            "missing_count": missing,
            "missing_percent": 100.0 * missing / n if n else 0.0,
            "partial_unexpected_list": self.values,
            "partial_unexpected_counts": [],
        }

    def docs_result(self, expectation: Expectation, success: bool) -> ExpectationValidationResult:
        """The merged result as GE's own, for the Data Docs."""
        exception = (
            {
                "raised_exception": True,
                "exception_message": self.errors[0],
                "exception_traceback": None,
            }
            if self.errors
            else None
        )
        return ExpectationValidationResult(
            success=success,
            expectation_config=expectation.configuration,
            result=self.ge_result(),
            exception_info=exception,
        )


class ValidationRun:
    """One validation run over a warehouse: the check results, the rows counted per table, and
    the Data Docs tables; ``chunk_rows``: the rows of a chunk validated at a time (``None``:
    checks computed over whole tables)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, chunk_rows: int | None = None):
        self.con, self.chunk_rows = con, chunk_rows
        self.results: list[CheckResult] = []
        self.table_rows: dict[str, int] = {}
        self.docs: list[TableDocs] = []

    def report(
        self,
        *,
        domain: str,
        dataset_dir: Path,
        started: float,
        docs_dir: Path | None,
        run_name: str,
        docs_mode: str,
    ) -> ValidationReport:
        """The run's report (``started``: its ``time.perf_counter()``); with ``docs_dir``, the
        Data Docs (``index.html``) and ``results.json`` are written there."""
        report = ValidationReport(
            domain=domain,
            dataset_dir=str(dataset_dir),
            success=all(r.success for r in self.results),
            results=self.results,
            table_rows=self.table_rows,
            chunk_rows=self.chunk_rows,
            elapsed_s=round(time.perf_counter() - started, 3),
        )
        if docs_dir is not None:
            with quiet_gx():
                index = write_data_docs(self.docs, docs_dir, run_name=run_name)
            report.docs_index = str(index)
            report.docs_mode = docs_mode
            report.elapsed_s = round(time.perf_counter() - started, 3)
            (docs_dir / RESULTS_FILE).write_text(report.model_dump_json(indent=2) + "\n")
        return report


class GxRun(ValidationRun):
    """A validation run whose checks GE evaluates on pandas frames of at most ``chunk_rows``
    rows: GE's ephemeral context with a pandas datasource."""

    chunk_rows: int

    def __init__(self, con: duckdb.DuckDBPyConnection, chunk_rows: int, datasource: str):
        if chunk_rows < 1:
            raise ValueError("chunk_rows must be positive")
        super().__init__(con, chunk_rows)
        self.context = gx.get_context(mode="ephemeral")
        self.context.variables.progress_bars = ProgressBarsConfig(
            globally=False, metric_calculations=False
        )
        self.datasource = self.context.data_sources.add_pandas(datasource)
        self.batch_definitions: dict[str, Any] = {}

    def validate_frame(
        self,
        asset_name: str,
        frame: pd.DataFrame,
        suite: gx.ExpectationSuite,
        index_columns: list[str] | None = None,
    ) -> dict[str, ExpectationValidationResult]:
        """Validates one pandas frame; results keyed by the expectations' meta ``key``."""
        batch_definition = self.batch_definitions.get(asset_name)
        if batch_definition is None:
            asset = self.datasource.add_dataframe_asset(name=asset_name)
            batch_definition = asset.add_batch_definition_whole_dataframe("frame")
            self.batch_definitions[asset_name] = batch_definition
        result_format: dict[str, Any] = {
            "result_format": "SUMMARY",
            "partial_unexpected_count": MAX_EXAMPLES,
        }
        if index_columns:
            result_format["unexpected_index_column_names"] = index_columns
        batch = batch_definition.get_batch(batch_parameters={"dataframe": frame})
        outcome = batch.validate(suite, result_format=result_format)
        return {
            str((r.expectation_config.meta or {}).get("key")): r
            for r in outcome.results
            if r.expectation_config is not None
        }

    def accumulate(
        self,
        asset_name: str,
        frame: pd.DataFrame,
        suite: gx.ExpectationSuite,
        accumulators: Mapping[str, RowAccumulator],
        index_columns: list[str] | None = None,
    ) -> None:
        """Validates one chunk and adds its results to ``accumulators`` (by meta ``key``). GE
        failing on a chunk fails the chunk's checks, not the run."""
        try:
            results = self.validate_frame(asset_name, frame, suite, index_columns)
        except Exception as err:
            for acc in accumulators.values():
                acc.errors.append(f"{type(err).__name__}: {err}")
            return
        for key, acc in accumulators.items():
            acc.add(results.get(key))

"""The validation report: one result per expectation, and the error raised for failures."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from benchforge.core.errors import BenchforgeError


class CheckResult(BaseModel):
    """One expectation, evaluated over a whole table (chunk results already merged)."""

    check: str = Field(description="Benchforge check name, e.g. 'fk_no_orphans_outside_manifest'.")
    expectation_type: str = Field(description="The Great Expectations expectation type.")
    table: str
    column: str | None = None
    label: str | None = Field(default=None, description="Qualifier: a category, a stressor...")
    description: str = ""
    success: bool
    observed: float | int | str | None = None
    expected: str = ""
    unexpected_count: int | None = None
    element_count: int | None = None
    examples: list[Any] = Field(default_factory=list, description="A few unexpected rows.")

    def where(self) -> str:
        where = self.table if self.column is None else f"{self.table}.{self.column}"
        return f"{where} [{self.label}]" if self.label else where

    def line(self) -> str:
        text = (
            f"{self.check} ({self.expectation_type}) on {self.where()}: "
            f"observed {self.observed}, expected {self.expected}"
        )
        if self.examples:
            text += f"; e.g. {self.examples[:3]}"
        return text


class ValidationReport(BaseModel):
    domain: str
    dataset_dir: str
    success: bool
    results: list[CheckResult]
    table_rows: dict[str, int] = Field(default_factory=dict)
    chunk_rows: int | None = Field(
        default=None,
        description="Rows validated at a time in pandas; None: checks computed over whole tables.",
    )
    elapsed_s: float
    docs_index: str | None = Field(default=None, description="Data Docs index.html, if built.")
    docs_mode: str | None = Field(default=None, description="How the Data Docs were produced.")

    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if not r.success]

    def summary(self) -> str:
        failed = self.failures()
        head = (
            f"{self.domain}: {len(self.results) - len(failed)}/{len(self.results)} expectations "
            f"passed over {len(self.table_rows)} tables ({sum(self.table_rows.values())} rows)"
        )
        return "\n  ".join([head, *(r.line() for r in failed)])

    def raise_for_failures(self) -> None:
        if not self.success:
            raise DatasetValidationError(self)


class DatasetValidationError(BenchforgeError):
    """Raised by ``ValidationReport.raise_for_failures``; the message names every failure."""

    def __init__(self, report: ValidationReport):
        self.report = report
        failed = report.failures()
        lines = [f"{len(failed)} of {len(report.results)} expectations failed on {report.domain}"]
        lines += [f"- {r.line()}" for r in failed]
        super().__init__("\n".join(lines))

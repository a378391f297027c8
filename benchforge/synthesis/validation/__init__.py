"""Dataset validation: a Great Expectations suite derived from the domain spec, run in bounded
chunks over the generated DuckDB warehouse and checked against the anomaly manifest.

Usage: ``validate_dataset(spec, Path("out/crm"), docs_dir=Path("out/crm/validation"))`` returns a
``ValidationReport``; ``report.raise_for_failures()`` raises ``DatasetValidationError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchforge.synthesis.validation.report import (
    CheckResult,
    DatasetValidationError,
    ValidationReport,
)

if TYPE_CHECKING:
    from benchforge.synthesis.validation.runner import validate_dataset

__all__ = ["CheckResult", "DatasetValidationError", "ValidationReport", "validate_dataset"]


def __getattr__(name: str) -> Any:
    # Great Expectations takes seconds to import: loaded when validation runs, not when a
    # dataset record or a report model is read.
    if name == "validate_dataset":
        from benchforge.synthesis.validation.runner import validate_dataset

        return validate_dataset
    raise AttributeError(name)

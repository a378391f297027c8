"""Dataset validation: a Great Expectations suite derived from the domain spec, run in bounded
chunks over the generated DuckDB warehouse and checked against the anomaly manifest.

Usage: ``validate_dataset(spec, Path("out/crm"), docs_dir=Path("out/crm/validation"))`` returns a
``ValidationReport``; ``report.raise_for_failures()`` raises ``DatasetValidationError``.
"""

from synthesis.validation.report import CheckResult, DatasetValidationError, ValidationReport
from synthesis.validation.runner import validate_dataset

__all__ = ["CheckResult", "DatasetValidationError", "ValidationReport", "validate_dataset"]

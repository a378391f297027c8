"""The transformation pass of a release: pseudonyms, fakes, numeric perturbation, date shifts,
derived columns, generalization, free-text scrubbing and aggregates, applied to a whole warehouse
in DuckDB (see :mod:`benchforge.anonymize.transform.run`).

The entry point is :func:`anonymize_warehouse`; :class:`TransformManifest` records what it did.
"""

from benchforge.anonymize.transform.models import ColumnOutcome, TableOutcome, TransformManifest
from benchforge.anonymize.transform.run import anonymize_warehouse
from benchforge.anonymize.transform.sql import TransformError

__all__ = [
    "ColumnOutcome",
    "TableOutcome",
    "TransformError",
    "TransformManifest",
    "anonymize_warehouse",
]

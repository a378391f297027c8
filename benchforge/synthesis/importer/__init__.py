"""Importing a dataset Benchforge did not synthesize: a folder of CSV or Parquet files, a DuckDB
file or a PostgreSQL database becomes a dataset like any other (warehouse with schema ``raw``,
Parquet, manifest with checksums, profile-derived Great Expectations validation, ``dataset.json``
written last, published atomically to a folder or S3).

Usage: ``import_dataset("exports/", name="shop", out="datasets/shop")`` returns the
:class:`~benchforge.core.records.DatasetRecord`. Steps, for an orchestrator to compose:
:func:`resolve_source`, :func:`stage_import`, :func:`profile_step`, :func:`validate_step`,
:func:`write_record` (then :func:`benchforge.core.publish.publish`).
"""

from benchforge.synthesis.importer.build import (
    ImportManifest,
    check_name,
    default_location,
    import_dataset,
    profile_step,
    read_import_manifest,
    source_schema_options,
    stage_import,
    validate_step,
    write_record,
)
from benchforge.synthesis.importer.profile import (
    ColumnProfile,
    Expectation,
    ProfileSuite,
    TableProfile,
    expectations_for,
    profile_table,
    profile_warehouse,
)
from benchforge.synthesis.importer.sources import (
    DatasetImportError,
    SourcePlan,
    SourceTable,
    resolve_source,
    table_name,
)

__all__ = [
    "ColumnProfile",
    "DatasetImportError",
    "Expectation",
    "ImportManifest",
    "ProfileSuite",
    "SourcePlan",
    "SourceTable",
    "TableProfile",
    "check_name",
    "default_location",
    "expectations_for",
    "import_dataset",
    "profile_step",
    "profile_table",
    "profile_warehouse",
    "read_import_manifest",
    "resolve_source",
    "source_schema_options",
    "stage_import",
    "table_name",
    "validate_step",
    "write_record",
]

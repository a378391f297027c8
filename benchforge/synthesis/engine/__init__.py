"""The generator engine: spec + seed -> DuckDB warehouse, Parquet and anomaly manifest.

Usage: ``generate_dataset(spec, scale=1.0, seed=7, out=Path("out/crm"))``. Every value is a pure
function of (seed, table, column, row id), generated vectorized in DuckDB in bounded chunks.
"""

from benchforge.synthesis.engine.generate import (
    ANOMALIES,
    MANIFEST,
    PARQUET_DIR,
    WAREHOUSE,
    GenerationError,
    GenerationManifest,
    ProgressFn,
    TableSummary,
    estimated_rows,
    generate_dataset,
    read_manifest,
)

__all__ = [
    "ANOMALIES",
    "MANIFEST",
    "PARQUET_DIR",
    "WAREHOUSE",
    "GenerationError",
    "GenerationManifest",
    "ProgressFn",
    "TableSummary",
    "estimated_rows",
    "generate_dataset",
    "read_manifest",
]

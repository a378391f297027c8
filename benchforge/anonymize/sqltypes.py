"""DuckDB column types as the anonymizer sorts them: one list, shared by the policy checks, the
transform, generalization and the report (each needs "is this a number?")."""

from __future__ import annotations

NUMERIC_TYPES: tuple[str, ...] = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "FLOAT",
    "REAL",
    "DOUBLE",
    "DECIMAL",
    "NUMERIC",
)


def base_type(duckdb_type: str) -> str:
    """``DECIMAL(18,2)`` -> ``DECIMAL``."""
    return duckdb_type.strip().upper().split("(", 1)[0].strip()


def is_numeric_type(duckdb_type: str) -> bool:
    return base_type(duckdb_type) in NUMERIC_TYPES

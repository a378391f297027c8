"""SQL text helpers for the validation queries (kept apart from the engine's on purpose: the
validator re-derives what the data must look like instead of reusing the generator's code)."""

from __future__ import annotations

from benchforge.core.sql import DUCKDB_TYPES, literal, quote

WAREHOUSE_ALIAS = "wh"
RAW_SCHEMA = "raw"
MANIFEST_TABLE = "_bf_manifest"
INTEGER_TYPES = {
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
}
NUMERIC_TYPES = INTEGER_TYPES | {"DOUBLE", "FLOAT", "REAL"}
SPEC_TYPES = DUCKDB_TYPES
q = quote
lit = literal


def raw(table: str) -> str:
    return f"{WAREHOUSE_ALIAS}.{RAW_SCHEMA}.{q(table)}"


def and_(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else "(" + " AND ".join(kept) + ")"


def same_value(a: str, a_type: str | None, b: str, b_type: str | None) -> str:
    """SQL equality of two values of possibly different types (NULL-safe)."""
    if a_type is not None and a_type == b_type:
        return f"({a} IS NOT DISTINCT FROM {b})"
    if "VARCHAR" in (a_type, b_type):
        return f"(CAST({a} AS VARCHAR) IS NOT DISTINCT FROM CAST({b} AS VARCHAR))"
    if a_type is None:
        return f"({a} IS NOT DISTINCT FROM {b})"
    return f"({a} IS NOT DISTINCT FROM TRY_CAST({b} AS {a_type}))"


def key_join(a: str, a_type: str | None, b: str, b_type: str | None) -> str:
    """Join condition on keys (never NULL-safe: a NULL key matches nothing)."""
    if a_type is not None and a_type == b_type:
        return f"{a} = {b}"
    return f"CAST({a} AS VARCHAR) = CAST({b} AS VARCHAR)"


def regex_literal(text: str) -> str:
    """``text`` escaped for a regex understood by both Python ``re`` and DuckDB (RE2)."""
    return "".join(c if c.isalnum() else f"\\x{ord(c):02x}" if ord(c) < 128 else c for c in text)

"""SQL text helpers shared by every package that writes DuckDB SQL."""

from __future__ import annotations

import math
from typing import Any

# Spec column types -> DuckDB types.
DUCKDB_TYPES = {
    "varchar": "VARCHAR",
    "bigint": "BIGINT",
    "integer": "INTEGER",
    "double": "DOUBLE",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "boolean": "BOOLEAN",
}


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def qualified(*parts: str) -> str:
    return ".".join(quote(p) for p in parts)


def literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite number {value!r} in a spec")
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"

"""Small SQL rendering helpers."""

from __future__ import annotations

import math
from typing import Any

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


def weighted_case(u_sql: str, values: list[Any], weights: list[float] | None) -> str:
    """CASE picking ``values[i]`` when u falls in the i-th cumulative-weight interval."""
    if len(values) == 1:
        return literal(values[0])
    ws = weights or [1.0] * len(values)
    total = sum(ws)
    branches = []
    acc = 0.0
    for value, w in zip(values[:-1], ws[:-1], strict=True):
        acc += w / total
        branches.append(f"WHEN {u_sql} < {acc!r} THEN {literal(value)}")
    return f"(CASE {' '.join(branches)} ELSE {literal(values[-1])} END)"


def value_map_case(key_sql: str, mapping: dict[Any, Any]) -> str:
    """CASE mapping the text of ``key_sql`` to values (conditional links)."""
    branches = " ".join(f"WHEN {literal(str(k))} THEN {literal(v)}" for k, v in mapping.items())
    return f"(CASE CAST({key_sql} AS VARCHAR) {branches} ELSE NULL END)"

"""Small SQL rendering helpers."""

from __future__ import annotations

from typing import Any

from benchforge.core.sql import DUCKDB_TYPES, literal, quote

__all__ = ["DUCKDB_TYPES", "literal", "quote", "value_map_case", "weighted_case"]


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

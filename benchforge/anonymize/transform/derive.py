"""Derived columns: recomputed from the row's *released* columns, so identities that bind
several perturbed columns (``total_price = quantity * unit_price``) hold in the release.

Each derive column wraps the table's SELECT in one more projection that replaces that column by
its expression cast to the column's type; wrapping in policy order lets a later derive column
use an earlier one's released value.
"""

from __future__ import annotations

from benchforge.anonymize.transform.sql import qi


def wrap_derived(select_sql: str, derived: list[tuple[str, str, str]]) -> str:
    """``select_sql`` (a query yielding every released column by name) wrapped so that each
    (column, type, sql expression) in ``derived`` is recomputed over the released values."""
    query = select_sql
    for column, type_, expr in derived:
        query = f"SELECT * REPLACE (CAST(({expr}) AS {type_}) AS {qi(column)}) FROM ({query})"
    return query

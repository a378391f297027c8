"""k-anonymity, prosecutor risks and l-diversity of a release over declared quasi-identifiers.

An attacker who knows a person's quasi-identifier values (country, birth year, job title) can
narrow the release down to the records sharing them: the *equivalence class*. A class of size
``n`` re-identifies its members with probability ``1/n`` (the prosecutor model, ARX), so the
release is k-anonymous when every class holds at least ``k`` records, and l-diverse when every
class also holds at least ``l`` distinct values of each sensitive column (otherwise knowing the
class is knowing the secret).

Conventions, computed in one GROUP BY over the released table (``rel.raw.<table>``):

- NULL is a value of its own: a generalization pass that suppressed one QI of a record still
  lets the attacker match on the others, so ``(DE, NULL)`` is a class like ``(DE, 40-49)``;
- a record whose QIs are *all* NULL was suppressed: nothing about it can be matched, so it is
  left out of the classes (and of ``rows``) and reported in ``suppressed_rows``;
- a NULL sensitive value counts as one distinct value (the attacker learns "missing" as much as
  any other value).

This module also holds the few catalog helpers the other privacy modules share (the error type,
identifier quoting, column listing), so none of them depends on the report assembler.
"""

from __future__ import annotations

import duckdb
from pydantic import BaseModel, Field

from benchforge.anonymize.policy.models import QuasiIdentifiers
from benchforge.core.errors import BenchforgeError


class PrivacyInputError(BenchforgeError):
    """The release or the policy does not fit what the privacy report needs (a table or column
    named by the policy is missing, or source and release rows do not align)."""


def quote(name: str) -> str:
    """A DuckDB identifier, double-quoted (column names come from user data)."""
    return '"' + name.replace('"', '""') + '"'


def table_ref(catalog: str, table: str) -> str:
    """``src.raw."table"``: the catalog convention of the release report."""
    return f"{catalog}.raw.{quote(table)}"


def catalog_columns(con: duckdb.DuckDBPyConnection, catalog: str, table: str) -> dict[str, str]:
    """Column name -> DuckDB type of ``<catalog>.raw.<table>``, in table order; empty when the
    table does not exist."""
    rows = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = ? AND schema_name = 'raw' AND table_name = ? "
        "ORDER BY column_index",
        [catalog, table],
    ).fetchall()
    return {str(name): str(dtype) for name, dtype in rows}


def require_columns(
    con: duckdb.DuckDBPyConnection, catalog: str, table: str, columns: list[str]
) -> dict[str, str]:
    """The table's columns, after checking that ``columns`` all exist (a clear error instead of a
    DuckDB binder error deep inside a query)."""
    have = catalog_columns(con, catalog, table)
    if not have:
        raise PrivacyInputError(f"privacy report: table {catalog}.raw.{table} does not exist")
    missing = [c for c in columns if c not in have]
    if missing:
        raise PrivacyInputError(
            f"privacy report: {catalog}.raw.{table} has no column(s) {', '.join(missing)}"
        )
    return have


class KAnonymityResult(BaseModel):
    """k-anonymity and l-diversity of one table's release over its quasi-identifiers."""

    table: str
    columns: list[str]
    k_target: int
    min_k: int = Field(description="Smallest equivalence class (0 when no record is left).")
    share_below_k: float = Field(description="Share of classified records in classes < k.")
    classes: int
    rows: int = Field(description="Records in classes (suppressed records excluded).")
    suppressed_rows: int = Field(default=0, description="Records with every QI NULL.")
    prosecutor_ra: float = Field(description="Share of records with risk 1/|class| > 1/k.")
    prosecutor_rb: float = Field(description="Highest record risk: 1 / smallest class.")
    prosecutor_rc: float = Field(description="Average record risk: classes / rows.")
    l_target: int
    min_l: int | None = Field(description="Fewest distinct sensitive values in a class.")
    sensitive: list[str]
    satisfied: bool = Field(
        description="min_k >= k and (no sensitive column or min_l >= l); vacuously true when "
        "every record was suppressed."
    )


def k_anonymity(
    con: duckdb.DuckDBPyConnection, table: str, qi: QuasiIdentifiers
) -> KAnonymityResult:
    """Equivalence classes of ``rel.raw.<table>`` over ``qi.columns`` (see the module
    docstring for how NULLs count)."""
    require_columns(con, "rel", table, [*qi.columns, *qi.sensitive])
    ref = table_ref("rel", table)
    keys = ", ".join(quote(c) for c in qi.columns)
    all_null = " AND ".join(f"{quote(c)} IS NULL" for c in qi.columns)
    l_cols = [
        f"count(DISTINCT {quote(s)}) + max(CASE WHEN {quote(s)} IS NULL THEN 1 ELSE 0 END)"
        for s in qi.sensitive
    ]
    class_l = f"least({', '.join(l_cols)})" if len(l_cols) > 1 else (l_cols[0] if l_cols else "0")
    row = con.execute(
        f"""
        WITH classes AS (
            SELECT count(*) AS n, {class_l} AS l
            FROM {ref} WHERE NOT ({all_null}) GROUP BY {keys}
        )
        SELECT
            (SELECT count(*) FROM classes),
            (SELECT coalesce(sum(n), 0) FROM classes),
            (SELECT min(n) FROM classes),
            (SELECT coalesce(sum(n) FILTER (WHERE n < ?), 0) FROM classes),
            (SELECT min(l) FROM classes),
            (SELECT count(*) FROM {ref} WHERE {all_null})
        """,
        [qi.k],
    ).fetchone()
    assert row is not None  # an aggregate query always returns one row
    n_classes, rows, min_n, below, min_l, suppressed = (
        int(row[0]),
        int(row[1]),
        row[2],
        int(row[3]),
        row[4],
        int(row[5]),
    )
    min_k = int(min_n) if min_n is not None else 0
    share = below / rows if rows else 0.0
    l_value = int(min_l) if qi.sensitive and min_l is not None else None
    # A table whose every record was suppressed is vacuously k-anonymous.
    satisfied = rows == 0 or (min_k >= qi.k and (l_value is None or l_value >= qi.l))
    return KAnonymityResult(
        table=table,
        columns=list(qi.columns),
        k_target=qi.k,
        min_k=min_k,
        share_below_k=share,
        classes=n_classes,
        rows=rows,
        suppressed_rows=suppressed,
        prosecutor_ra=share,
        prosecutor_rb=1.0 / min_k if min_k else 0.0,
        prosecutor_rc=n_classes / rows if rows else 0.0,
        l_target=qi.l,
        min_l=l_value,
        sensitive=list(qi.sensitive),
        satisfied=satisfied,
    )

"""Node match: equal schema and equal data (a multiset of rows), decided inside DuckDB.

- Columns are matched by name, case-insensitively and in any order; a missing or extra column
  is a schema mismatch.
- Types are compared by family: every integer, decimal and floating type is a *number* and
  numbers are compared by value (1 = 1.0); text, boolean, date, timestamp, time and interval
  are their own families, so a number published as text, or a date as a timestamp, mismatches.
- Rows are compared as multisets, NULL-safe: both sides are ordered by every column (numbers
  by a value rounded to the tolerance) and paired by position; paired numbers may differ by the
  relative tolerance. Nothing is pulled into Python but a few example rows.
"""

from __future__ import annotations

import math
from typing import Literal

import duckdb
from pydantic import BaseModel

from benchforge.sql import quote

Family = Literal["number", "text", "boolean", "date", "timestamp", "time", "interval", "other"]
Status = Literal["match", "missing", "build_error", "schema_mismatch", "data_mismatch"]

_INTEGER = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "UHUGEINT"}  # fmt: skip


def type_family(duckdb_type: str) -> Family:
    t = duckdb_type.upper()
    if t in _INTEGER or t.startswith("DECIMAL") or t in ("FLOAT", "DOUBLE", "REAL"):
        return "number"
    if t in ("VARCHAR", "TEXT", "STRING") or t.startswith("VARCHAR"):
        return "text"
    if t == "BOOLEAN":
        return "boolean"
    if t == "DATE":
        return "date"
    if t.startswith("TIMESTAMP"):
        return "timestamp"
    if t.startswith("TIME"):
        return "time"
    if t == "INTERVAL":
        return "interval"
    return "other"


class NodeComparison(BaseModel):
    status: Status
    reason: str = ""
    missing_columns: list[str] = []
    extra_columns: list[str] = []
    type_mismatches: dict[str, tuple[str, str]] = {}  # column -> (gold type, candidate type)
    gold_rows: int | None = None
    candidate_rows: int | None = None
    differing_rows: int | None = None
    examples_gold: list[dict[str, str]] = []
    examples_candidate: list[dict[str, str]] = []

    @property
    def matched(self) -> bool:
        return self.status == "match"


def columns_of(con: duckdb.DuckDBPyConnection, relation: str) -> dict[str, str]:
    rows = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    return {str(r[0]).lower(): str(r[1]) for r in rows}


def _sort_key(column: str, family: Family, digits: int) -> str:
    if family == "number":
        # Rounded to the tolerance's significant digits so float noise does not reorder rows.
        return f"{_rounded(column, digits)} NULLS FIRST"
    return f"CAST({quote(column)} AS VARCHAR) NULLS FIRST"


def _rounded(column: str, digits: int) -> str:
    c = f"CAST({quote(column)} AS DOUBLE)"
    return (
        f"(CASE WHEN {c} IS NULL OR {c} = 0 OR isinf({c}) OR isnan({c}) THEN {c} "
        f"ELSE round({c}, {digits} - 1 - CAST(floor(log10(abs({c}))) AS INTEGER)) END)"
    )


def _equal(column: str, family: Family, rel_tol: float) -> str:
    g, c = f"g.{quote(column)}", f"c.{quote(column)}"
    if family == "number":
        gd, cd = f"CAST({g} AS DOUBLE)", f"CAST({c} AS DOUBLE)"
        return (
            f"(({g} IS NULL AND {c} IS NULL) OR {gd} = {cd} OR "
            f"abs({gd} - {cd}) <= {rel_tol!r} * greatest(abs({gd}), abs({cd})))"
        )
    return f"({g} IS NOT DISTINCT FROM {c})"


def compare_relations(
    con: duckdb.DuckDBPyConnection,
    gold: str,
    candidate: str,
    rel_tol: float = 1e-9,
    examples: int = 3,
) -> NodeComparison:
    """Compares two relations visible on ``con`` (qualified names, already quoted)."""
    gold_cols = columns_of(con, gold)
    cand_cols = columns_of(con, candidate)
    missing = sorted(set(gold_cols) - set(cand_cols))
    extra = sorted(set(cand_cols) - set(gold_cols))
    families = {c: type_family(t) for c, t in gold_cols.items()}
    mismatched = {
        c: (gold_cols[c], cand_cols[c])
        for c in sorted(set(gold_cols) & set(cand_cols))
        if families[c] != type_family(cand_cols[c])
    }
    counts = con.execute(
        f"SELECT (SELECT count(*) FROM {gold}), (SELECT count(*) FROM {candidate})"
    ).fetchone()
    gold_rows, cand_rows = (int(counts[0]), int(counts[1])) if counts else (0, 0)
    if missing or extra or mismatched:
        parts = []
        if missing:
            parts.append(f"missing columns {missing}")
        if extra:
            parts.append(f"extra columns {extra}")
        if mismatched:
            parts.append("type mismatch " + ", ".join(
                f"{c}: {g} vs {k}" for c, (g, k) in mismatched.items()))  # fmt: skip
        return NodeComparison(
            status="schema_mismatch", reason="; ".join(parts), missing_columns=missing,
            extra_columns=extra, type_mismatches=mismatched, gold_rows=gold_rows,
            candidate_rows=cand_rows,
        )  # fmt: skip
    digits = max(1, min(15, math.ceil(-math.log10(rel_tol)))) if rel_tol > 0 else 15
    names = sorted(gold_cols)
    # Fast path: hash-based multiset difference of rows with numbers rounded to the tolerance's
    # significant digits (no sort). Rounding can only split values near a rounding boundary,
    # so a non-empty difference falls through to the exact tolerant comparison below.
    canon = ", ".join(_canonical(c, families[c], digits) for c in names)
    only_gold = f"SELECT {canon} FROM {gold} EXCEPT ALL SELECT {canon} FROM {candidate}"
    only_cand = f"SELECT {canon} FROM {candidate} EXCEPT ALL SELECT {canon} FROM {gold}"
    if gold_rows == cand_rows and _count(con, only_gold) == 0:
        return NodeComparison(status="match", gold_rows=gold_rows, candidate_rows=cand_rows,
                              differing_rows=0)  # fmt: skip
    order = ", ".join(_sort_key(c, families[c], digits) for c in names)
    select = ", ".join(quote(c) for c in names)
    equal = " AND ".join(_equal(c, families[c], rel_tol) for c in names)
    paired = f"""
        WITH g AS (SELECT row_number() OVER (ORDER BY {order}) AS _pos, {select} FROM {gold}),
             c AS (SELECT row_number() OVER (ORDER BY {order}) AS _pos, {select} FROM {candidate})
        SELECT g._pos AS _gpos, c._pos AS _cpos FROM g FULL OUTER JOIN c ON g._pos = c._pos
        WHERE g._pos IS NULL OR c._pos IS NULL OR NOT ({equal})"""
    con.execute(f"CREATE OR REPLACE TEMP TABLE _diff AS {paired}")
    diff_row = con.execute("SELECT count(*) FROM _diff").fetchone()
    differing = int(diff_row[0]) if diff_row else 0
    if differing == 0:
        return NodeComparison(status="match", gold_rows=gold_rows, candidate_rows=cand_rows,
                              differing_rows=0)  # fmt: skip
    # Explain the difference as a multiset: rows of one side the other lacks (values rounded to
    # the tolerance, so float noise is not reported).
    n_gold = _count(con, only_gold)
    n_cand = _count(con, only_cand)
    reason = f"{n_gold} gold rows missing from the candidate, {n_cand} unexpected candidate rows"
    if gold_rows != cand_rows:
        reason += f" (row count {cand_rows} vs gold {gold_rows}, delta {cand_rows - gold_rows:+d})"
    return NodeComparison(
        status="data_mismatch",
        reason=reason,
        gold_rows=gold_rows,
        candidate_rows=cand_rows,
        differing_rows=max(n_gold, n_cand, 1),
        examples_gold=_examples(con, only_gold, examples),
        examples_candidate=_examples(con, only_cand, examples),
    )


def _canonical(column: str, family: Family, digits: int) -> str:
    if family == "number":
        return f"{_rounded(column, digits)} AS {quote(column)}"
    return quote(column)


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(f"SELECT count(*) FROM ({sql})").fetchone()
    return int(row[0]) if row else 0


def _examples(con: duckdb.DuckDBPyConnection, sql: str, n: int) -> list[dict[str, str]]:
    rows = con.execute(f"SELECT * FROM ({sql}) ORDER BY ALL LIMIT {n}")
    names = [d[0] for d in rows.description]
    return [{k: str(v) for k, v in zip(names, row, strict=True)} for row in rows.fetchall()]

"""Node match: equal schema and equal data (a multiset of rows), decided inside DuckDB.

- Columns are matched by name, case-insensitively and in any order; a missing or extra column
  is a schema mismatch.
- Types are compared by family: every integer, decimal and floating type is a *number* and
  numbers are compared by value as DOUBLE (1 = 1.0); text, boolean, date, timestamp, time and
  interval are their own families, so a number published as text, or a date as a timestamp,
  mismatches.
- Rows are compared as multisets, NULL-safe. Two numbers ``a`` and ``b`` are equal when

      a = b  or  (both finite and |a - b| <= max(rel_tol * max(|a|, |b|), abs_tol))

  with ``abs_tol = rel_tol`` unless given: the tolerance is relative for magnitudes of 1 and
  more and absolute (``abs_tol``) below, so float noise around 0 (0 vs 1e-17) is no mismatch
  while 0.5 vs 0.5 + 2e-9 is one at the default 1e-9. ``abs_tol=0`` makes it purely relative
  (then only 0 equals 0). NULL equals only NULL, NaN only NaN, an infinity only itself. The
  relations match when their rows can be paired one to one with every paired value equal.

How it is decided, nothing but a few example rows leaving DuckDB:

1. Fast path, an exact proof: the hash multiset difference ``gold EXCEPT ALL candidate`` (no
   sort, no rounding). Equal row counts and an empty difference is a match: exactly equal
   values are within any tolerance. The common case, an exactly equal relation, ends here.
2. Otherwise the rows left on each side (the exact differences) are paired by tolerance, in
   passes over the rows not paired yet; only rows whose non-number values are equal can pair.
   ``cells``: rows are grouped by their numbers snapped to a grid of cells 10 to 100 times
   the tolerance wide (a number column whose values are the same multiset on both sides, by
   an order-free fingerprint, by its values), paired within a group in the order of their
   numbers, and each pair is kept only if every value is equal by the exact rule above.
   ``shifted_cells``: the same on a grid shifted by half a cell, so a pair within tolerance
   that straddles a cell boundary of one grid pairs on the other. ``sorted``: rows grouped by
   their non-number values only, paired in the order of their numbers' cells. The relations
   match iff no row is left unpaired.

A match is therefore only reported for a pairing that satisfies the tolerance. The pairing is
greedy, not an exhaustive bipartite matching: rows that differ only by noise well inside the
tolerance always pair, but where several distinct rows of one side lie within a few
tolerances of each other and of the same rows of the other side, a pairing that exists can be
missed (a mismatch is reported; never the reverse).

A mismatch is explained by the unpaired rows: how many gold rows are missing from the
candidate and how many candidate rows are unexpected, a few examples of each (SQL NULL shown
as ``NULL``, text quoted as ``'text'``), and per column how many rows differ in it
(``column_mismatches``), found by pairing the unpaired gold and candidate rows:

- on a key, when gold has one: a non-floating column whose values are unique and not NULL in
  gold (count(DISTINCT c) = count(*)); of several, the one that pairs the most unpaired rows
  (ties: the first in gold's column order). Each paired row counts once in every column that
  differs, so a row changed in two columns counts in both (``mismatch_key`` names the key);
- otherwise by leaving each column out in turn: rows that pair on all the other columns and
  differ in that one. Rows that differ in two or more columns are not counted there.
Rows with no counterpart (added or removed ones) count in no column. Without a key, columns
are only counted up to ``DIAGNOSE_LIMIT`` unpaired rows a side (one join per column).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, Literal

import duckdb
from pydantic import BaseModel

from benchforge.core.sql import quote

Family = Literal["number", "text", "boolean", "date", "timestamp", "time", "interval", "other"]
Status = Literal["match", "missing", "build_error", "schema_mismatch", "data_mismatch"]

_INTEGER = {
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
}
_FLOATING = {"FLOAT", "DOUBLE", "REAL", "FLOAT4", "FLOAT8"}
_RID, _EXACT, _GROUP, _OCC = "__bf_rid", "__bf_exact", "__bf_group", "__bf_occ"  # helpers


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
    examples_gold: list[dict[str, str]] = []  # values rendered by ``render_value``
    examples_candidate: list[dict[str, str]] = []
    column_mismatches: dict[str, int] = {}  # column -> rows that differ in it (see above)
    mismatch_key: str | None = None  # the unique gold column rows were paired on, if any
    examples_withheld: bool = False  # example rows removed (held-out data, see withheld())
    exact: bool = False
    """Matched by the exact fast path with every column of the gold's type: the rows are the
    gold's, no tolerance used."""

    @property
    def matched(self) -> bool:
        return self.status == "match"

    def withheld(self) -> NodeComparison:
        """The same verdict without example rows (counts and column names stay): rows of a
        held-out dataset are never shown unless an operator asks for them."""
        if not (self.examples_gold or self.examples_candidate):
            return self
        return self.model_copy(
            update={"examples_gold": [], "examples_candidate": [], "examples_withheld": True}
        )


def columns_of(con: duckdb.DuckDBPyConnection, relation: str) -> dict[str, str]:
    rows = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
    return {str(r[0]).lower(): str(r[1]) for r in rows}


def render_value(value: Any) -> str:
    """A value as an example row shows it: SQL NULL as ``NULL``, text quoted SQL-style (so the
    strings 'NULL' and 'None' read ``'NULL'`` and ``'None'``), everything else as its text."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


class _Tolerance:
    def __init__(self, rel_tol: float, abs_tol: float | None) -> None:
        abs_tol = rel_tol if abs_tol is None else abs_tol
        if not (rel_tol >= 0 and abs_tol >= 0):
            raise ValueError(f"tolerances must be >= 0 (rel_tol={rel_tol!r}, abs_tol={abs_tol!r})")
        self.rel, self.abs = float(rel_tol), float(abs_tol)

    def widened(self, abs_tol: float | None) -> _Tolerance:
        """This tolerance with at least ``abs_tol`` absolute (a rounded column's unit)."""
        return self if abs_tol is None else _Tolerance(self.rel, max(self.abs, abs_tol))

    def equal(self, g: str, c: str, number: bool) -> str:
        """SQL: the values ``g`` and ``c`` are equal (never NULL)."""
        if not number:
            return f"({g} IS NOT DISTINCT FROM {c})"
        gd, cd = f"CAST({g} AS DOUBLE)", f"CAST({c} AS DOUBLE)"
        close = (
            f"isfinite({gd}) AND isfinite({cd}) AND abs({gd} - {cd}) <= "
            f"greatest({self.rel!r} * greatest(abs({gd}), abs({cd})), {self.abs!r})"
        )
        return f"(({g} IS NULL AND {c} IS NULL) OR coalesce({gd} = {cd} OR ({close}), false))"

    def exponent(self, value: str) -> str:
        """SQL: e such that cells 10^e wide are 10 to 100 times the tolerance of ``value``;
        NULL where the value is NULL, not finite or has no tolerance (its cell: itself)."""
        v = f"CAST({value} AS DOUBLE)"
        tol = f"greatest({self.rel!r} * abs({v}), {self.abs!r})"
        e = f"CAST(floor(log10({tol})) AS INTEGER) + 2"
        return f"CASE WHEN {tol} > 0 AND isfinite({tol}) THEN {e} END"

    def cell(self, value: str, exponent: str, shifted: bool, integer: bool) -> str:
        """SQL: the grid cell of a number (``exponent`` from ``exponent()``), a DOUBLE that the
        values of one cell share; ``shifted`` moves the boundaries by half a cell. The cell
        index n is scaled by an exact power of ten, so a value just under 10^k and one just
        over, whose cells differ in width, still meet in the cell centred on 10^k (on the
        unshifted grid). Integers whose tolerance is under 1/2 are their own cell."""
        v, e = f"CAST({value} AS DOUBLE)", exponent
        p = f"power(10.0, abs({e}))"
        rnd = "floor" if shifted else "round"
        snapped = (
            f"CASE WHEN {e} IS NULL THEN {v} WHEN {e} < 0 THEN {rnd}({v} * {p}) / {p} "
            f"ELSE {rnd}({v} / {p}) * {p} END"
        )
        if integer and self.abs < 0.5:
            if self.rel == 0:
                return f"({v} + 0.0)"
            snapped = f"CASE WHEN abs({v}) < {0.5 / self.rel!r} THEN {v} ELSE {snapped} END"
        return f"(({snapped}) + 0.0)"


def compare_relations(
    con: duckdb.DuckDBPyConnection,
    gold: str,
    candidate: str,
    rel_tol: float = 1e-9,
    examples: int = 3,
    *,
    abs_tol: float | None = None,
    column_abs_tol: dict[str, float] | None = None,
) -> NodeComparison:
    """Compares two relations visible on ``con`` (qualified names, already quoted); numbers
    within ``rel_tol`` (relative) or ``abs_tol`` (absolute, default ``rel_tol``) are equal, and
    in a column of ``column_abs_tol`` (gold column name, case-insensitive) within that absolute
    tolerance too (a rounded column: :mod:`benchforge.evaluation.de.rounding`)."""
    tolerance = _Tolerance(rel_tol, abs_tol)
    widened = {k.lower(): v for k, v in (column_abs_tol or {}).items()}
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
            parts.append(
                "type mismatch " + ", ".join(f"{c}: {g} vs {k}" for c, (g, k) in mismatched.items())
            )
        return NodeComparison(
            status="schema_mismatch",
            reason="; ".join(parts),
            missing_columns=missing,
            extra_columns=extra,
            type_mismatches=mismatched,
            gold_rows=gold_rows,
            candidate_rows=cand_rows,
        )
    match = NodeComparison(
        status="match", gold_rows=gold_rows, candidate_rows=cand_rows, differing_rows=0
    )
    numbers = {c for c in gold_cols if families[c] == "number"}
    integers = {c for c in numbers if {gold_cols[c].upper(), cand_cols[c].upper()} <= _INTEGER}
    per_column = {c: tolerance.widened(widened.get(c.lower())) for c in numbers}
    rows = _Rows(list(gold_cols), numbers, integers, per_column)
    # Numbers of one type on both sides are compared as they are (exactly); of two types, as
    # DOUBLE (exact equality as DOUBLE is within any tolerance).
    canon = ", ".join(
        f"CAST({quote(c)} AS DOUBLE) AS {quote(c)}"
        if c in rows.numbers and gold_cols[c].upper() != cand_cols[c].upper()
        else quote(c)
        for c in rows.names
    )
    with _temp_tables(con) as temp:
        # 1. the exact multiset differences; empty both ways: a match (the fast path)
        only_gold, only_cand = temp("gold"), temp("cand")
        rows.residual(con, only_gold, gold, candidate, canon)
        n_gold = _count(con, only_gold)
        if gold_rows == cand_rows and n_gold == 0:
            same_types = all(gold_cols[c].upper() == cand_cols[c].upper() for c in gold_cols)
            return match.model_copy(update={"exact": same_types})
        rows.residual(con, only_cand, candidate, gold, canon)
        n_cand = _count(con, only_cand)
        # 2. pair what is left by tolerance; each pass removes the rows it pairs. The first
        # two snap only the numbers whose multisets differ (fingerprints), the sorted pass all.
        if rows.numbers and n_gold and n_cand:
            ordered = [c for c in rows.names if c in rows.numbers]
            same = zip(
                rows.fingerprints(con, only_gold), rows.fingerprints(con, only_cand), strict=True
            )
            snap = {c for c, (g, k) in zip(ordered, same, strict=True) if g != k}
            for how in _PASSES:
                if n_gold == 0 or n_cand == 0:
                    break
                if how != "sorted" and not snap:  # no number differs: nothing pairs there
                    continue
                paired = rows.pair(con, only_gold, only_cand, how, snap, temp(how))
                n_gold, n_cand = n_gold - paired, n_cand - paired
        if n_gold == 0 and n_cand == 0:
            return match
        key, by_column = rows.column_mismatches(
            con, gold, gold_cols, cand_cols, only_gold, only_cand, n_gold, n_cand
        )
        first = [key] if key else []
        return NodeComparison(
            status="data_mismatch",
            reason=_reason(n_gold, n_cand, gold_rows, cand_rows, key, by_column),
            gold_rows=gold_rows,
            candidate_rows=cand_rows,
            differing_rows=max(n_gold, n_cand),
            examples_gold=rows.examples(con, only_gold, first, examples),
            examples_candidate=rows.examples(con, only_cand, first, examples),
            column_mismatches=by_column,
            mismatch_key=key,
        )


Pass = Literal["cells", "shifted_cells", "sorted"]
_PASSES: tuple[Pass, ...] = ("cells", "shifted_cells", "sorted")
# Leave-one-column-out diagnostics (no unique key) run up to this many unpaired rows a side.
DIAGNOSE_LIMIT = 200_000


class _Rows:
    """SQL over the exact differences of the two sides: temp tables holding the rows of one
    side missing from the other, with a row id and a hash of the values compared exactly
    (every column but the numbers): rows with different such hashes can never pair."""

    def __init__(
        self,
        names: list[str],
        numbers: set[str],
        integers: set[str],
        tolerances: dict[str, _Tolerance],
    ) -> None:
        self.names, self.numbers, self.integers = names, numbers, integers
        self.tolerances = tolerances
        self.exact = [c for c in names if c not in numbers]

    @staticmethod
    def _hash(keys: list[str]) -> str:
        return f"hash({', '.join(keys)})" if keys else "CAST(0 AS UBIGINT)"

    def _order(self, columns: list[str]) -> str:
        return ", ".join(f"{quote(c)} NULLS FIRST" for c in columns)

    def equal(self, column: str) -> str:
        if column not in self.numbers:
            return f"(g.{quote(column)} IS NOT DISTINCT FROM c.{quote(column)})"
        return self.tolerances[column].equal(f"g.{quote(column)}", f"c.{quote(column)}", True)

    def residual(
        self, con: duckdb.DuckDBPyConnection, table: str, left: str, right: str, canon: str
    ) -> None:
        exact = self._hash([quote(c) for c in self.exact])
        con.execute(
            f"CREATE TEMP TABLE {table} AS SELECT row_number() OVER () AS {_RID}, "
            f"{exact} AS {_EXACT}, * FROM "
            f"(SELECT {canon} FROM {left} EXCEPT ALL SELECT {canon} FROM {right})"
        )

    def _grouped(
        self, source: str, group_by: list[str], snap: set[str], shifted: bool, sort_cells: bool
    ) -> str:
        """SQL: the rows of ``source`` with ``__bf_group``, a hash of ``group_by`` (the numbers
        in ``snap`` by grid cell, other values as they are), and ``__bf_occ``, their rank within
        the group in the order of their numbers (by the cells first where ``sort_cells``):
        within a group the other values are equal. Cells are computed in stages, once each."""
        snapped = [c for c in self.names if c in snap]
        cell_col = {c: f"__bf_c{i}" for i, c in enumerate(snapped)}
        exps = ", ".join(
            f"{self.tolerances[c].exponent(quote(c))} AS __bf_e{i}" for i, c in enumerate(snapped)
        )
        cells = ", ".join(
            f"{self.tolerances[c].cell(quote(c), f'__bf_e{i}', shifted, c in self.integers)} "
            f"AS {cell_col[c]}"
            for i, c in enumerate(snapped)
        )
        keys = [cell_col.get(c, c if c == _EXACT else quote(c)) for c in group_by]
        numbers = [c for c in self.names if c in self.numbers]
        order = [
            *(f"{cell_col[c]} NULLS FIRST" for c in snapped if sort_cells),
            self._order(numbers),
        ]
        staged = f"SELECT *, {cells} FROM (SELECT *, {exps} FROM ({source}))" if snapped else source
        return (
            f"SELECT *, row_number() OVER (PARTITION BY {_GROUP} "
            f"ORDER BY {', '.join(o for o in order if o) or _RID}) AS {_OCC} "
            f"FROM (SELECT *, {self._hash(keys)} AS {_GROUP} FROM ({staged}))"
        )

    def _pairs(self, gold_side: str, cand_side: str, select: str, where: str) -> str:
        return (
            f"SELECT {select} FROM ({gold_side}) AS g JOIN ({cand_side}) AS c "
            f"ON g.{_GROUP} = c.{_GROUP} AND g.{_OCC} = c.{_OCC} WHERE {where}"
        )

    def fingerprints(self, con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
        """An order-free fingerprint of each number column of ``table`` (a sum of hashes)."""
        numbers = [c for c in self.names if c in self.numbers]
        sums = ", ".join(f"CAST(sum(hash({quote(c)})) AS VARCHAR)" for c in numbers)
        row = con.execute(f"SELECT {sums} FROM {table}").fetchone() or ()
        return [str(v) for v in row]

    def pair(
        self,
        con: duckdb.DuckDBPyConnection,
        only_gold: str,
        only_cand: str,
        how: Pass,
        snap: set[str],
        pairs: str,
    ) -> int:
        """Pairs rows of the two sides one to one and removes them; returns how many pairs.
        ``cells``/``shifted_cells``: rows sharing every value, the numbers in ``snap`` by grid
        cell; ``sorted``: rows sharing every value but the numbers, in the order of their
        numbers' cells, then values. Within a group rows pair in sorted order, and a pair is
        kept only when every value is equal within the tolerance."""
        if how == "sorted":
            group_by, snap, sort_cells = [_EXACT], self.numbers, True
        else:
            group_by = [_EXACT, *(c for c in self.names if c in self.numbers)]
            sort_cells = False

        def side(table: str, other: str) -> str:
            source = f"SELECT * FROM {table} WHERE {_EXACT} IN (SELECT {_EXACT} FROM {other})"
            return self._grouped(source, group_by, snap, how == "shifted_cells", sort_cells)

        equal = " AND ".join(self.equal(c) for c in self.names)
        select = f"g.{_RID} AS g, c.{_RID} AS c"
        pairing = self._pairs(side(only_gold, only_cand), side(only_cand, only_gold), select, equal)
        con.execute(f"CREATE TEMP TABLE {pairs} AS {pairing}")
        n = _count(con, pairs)
        if n:
            con.execute(f"DELETE FROM {only_gold} WHERE {_RID} IN (SELECT g FROM {pairs})")
            con.execute(f"DELETE FROM {only_cand} WHERE {_RID} IN (SELECT c FROM {pairs})")
        return n

    def column_mismatches(
        self,
        con: duckdb.DuckDBPyConnection,
        gold: str,
        gold_cols: dict[str, str],
        cand_cols: dict[str, str],
        only_gold: str,
        only_cand: str,
        n_gold: int,
        n_cand: int,
    ) -> tuple[str | None, dict[str, int]]:
        """(the key the unpaired rows were paired on or None, column -> rows differing in
        it); see the module docstring for the method."""
        if n_gold == 0 or n_cand == 0:
            return None, {}
        key = self._key(con, gold, gold_cols, cand_cols, only_gold, only_cand)
        if key is not None:
            k = quote(key)
            sums = ", ".join(f"count(*) FILTER (WHERE NOT {self.equal(c)})" for c in self.names)
            first = (
                f"SELECT * FROM {only_cand} QUALIFY row_number() OVER (PARTITION BY {k} "
                f"ORDER BY {self._order(self.names)}) = 1"
            )
            row = con.execute(
                f"SELECT {sums} FROM {only_gold} AS g JOIN ({first}) AS c ON g.{k} = c.{k}"
            ).fetchone()
            return key, {c: int(n) for c, n in zip(self.names, row or (), strict=True) if n}
        found: dict[str, int] = {}
        if len(self.names) < 2 or max(n_gold, n_cand) > DIAGNOSE_LIMIT:
            return None, found
        for column in self.names:
            others = [c for c in self.names if c != column]
            where = " AND ".join([*(self.equal(c) for c in others), f"NOT {self.equal(column)}"])
            g, c = (
                self._grouped(f"SELECT * FROM {table}", others, self.numbers, False, False)
                for table in (only_gold, only_cand)
            )
            n = _scalar(con, self._pairs(g, c, "count(*)", where))
            if n:
                found[column] = n
        return None, found

    def _key(
        self,
        con: duckdb.DuckDBPyConnection,
        gold: str,
        gold_cols: dict[str, str],
        cand_cols: dict[str, str],
        only_gold: str,
        only_cand: str,
    ) -> str | None:
        """The non-floating column unique and not NULL in gold that pairs the most unpaired
        rows (ties: gold's column order), if any pairs any."""
        candidates = [
            c
            for c in self.names
            if gold_cols[c].upper() not in _FLOATING and cand_cols[c].upper() not in _FLOATING
        ]
        if not candidates:
            return None
        # necessary: unique among the unpaired gold rows; the rank: unpaired rows it pairs
        stats = ", ".join(
            f"count(DISTINCT {quote(c)}) = count(*), "
            f"count(*) FILTER (WHERE {quote(c)} IN (SELECT {quote(c)} FROM {only_cand}))"
            for c in candidates
        )
        row = con.execute(f"SELECT {stats} FROM {only_gold}").fetchone() or ()
        ranked = sorted(
            (-int(row[2 * i + 1]), i, c)
            for i, c in enumerate(candidates)
            if row[2 * i] and row[2 * i + 1]
        )
        for _, _, column in ranked:
            c = quote(column)
            unique = con.execute(f"SELECT count(DISTINCT {c}) = count(*) FROM {gold}").fetchone()
            if unique and unique[0]:
                return column
        return None

    def examples(
        self, con: duckdb.DuckDBPyConnection, table: str, first: list[str], n: int
    ) -> list[dict[str, str]]:
        select = ", ".join(quote(c) for c in self.names)
        rows = con.execute(
            f"SELECT {select} FROM {table} ORDER BY {self._order([*first, *self.names])} "
            f"LIMIT {int(n)}"
        )
        return [
            {k: render_value(v) for k, v in zip(self.names, row, strict=True)}
            for row in rows.fetchall()
        ]


@contextmanager
def _temp_tables(con: duckdb.DuckDBPyConnection) -> Iterator[Callable[[str], str]]:
    """Names for temp tables unique to this call, dropped when it ends."""
    tag = uuid.uuid4().hex[:12]
    made: list[str] = []

    def name(part: str) -> str:
        made.append(f"__bf_cmp_{tag}_{part}")
        return made[-1]

    try:
        yield name
    finally:
        for table in made:
            with suppress(duckdb.Error):  # an interrupted connection: they die with it
                con.execute(f"DROP TABLE IF EXISTS temp.{table}")


def _reason(
    n_gold: int,
    n_cand: int,
    gold_rows: int,
    cand_rows: int,
    key: str | None,
    by_column: dict[str, int],
) -> str:
    reason = f"{n_gold} gold rows missing from the candidate, {n_cand} unexpected candidate rows"
    if gold_rows != cand_rows:
        reason += f" (row count {cand_rows} vs gold {gold_rows}, delta {cand_rows - gold_rows:+d})"
    if by_column:
        columns = ", ".join(f"{c} ({n} row{'s' if n != 1 else ''})" for c, n in by_column.items())
        if key is not None:
            reason += f"; paired on key {key}, rows differ in {columns}"
        else:
            reason += f"; rows differing in one column only: {columns}"
    return reason


def _count(con: duckdb.DuckDBPyConnection, relation: str) -> int:
    return _scalar(con, f"SELECT count(*) FROM {relation}")


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0]) if row and row[0] is not None else 0

"""Quasi-identifiers found by the data: which combinations of the columns a release keeps
re-identify its rows, whatever the policy declares.

An attacker knows some original values of a person (when they registered, their job title, a
figure from a filing) and looks for them in the release. A column is *kept* when its released
values still match the originals: equal, or for a number within a relative ``tolerance``
(``|original - released| <= tolerance * |released|``; a near-unchanged amount is as good as an
exact one to an attacker who allows for rounding). Columns whose rule replaces the value
(pseudonymize, fake, scrub, suppress) are not candidates; a column that matches its original on
at most ``max_reidentification_rate`` of the rows is not kept either, since no combination that
contains it can re-identify more rows than that.

The *re-identification rate* of a combination is the share of sampled released rows that the
attacker links to exactly one source row, their own: every column of the combination matches
the row's own original, and no other source row matches all of them. The source side is the
whole table (uniqueness in the population), the released side a deterministic sample
(``ORDER BY hash(rowid, seed)``, as the linkage and attack measures draw it).

The search is level by level (Apriori-like): every kept column alone, then combinations of
``max_columns`` at most, each built from measured combinations that stay at or under the
threshold (a combination whose part already re-identifies more is reported as it is and not
extended), most promising first (the highest rate among its parts, then the most distinct
values), at most ``max_combinations`` per table. The values are encoded once per table in
DuckDB (a hash for exact columns, a DOUBLE for numbers) and loaded once into numpy: exact
combinations are counted from the source's group sizes (a row is re-identified when its
combination is unique in the source and its released values match its own), a number from its
sorted neighbours within the exact group (no band join), two or more numbers by ranges of the
sorted source (a band join in DuckDB when the ranges are too large).
"""

from __future__ import annotations

import itertools
import math
import uuid
from typing import Literal

import duckdb
import numpy as np
from pydantic import BaseModel, Field

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.kanon import catalog_columns, quote, table_ref
from benchforge.anonymize.sqltypes import is_numeric_type

MatchKind = Literal["key", "number", "timestamp", "text", "category"]
FIX_ORDER: tuple[MatchKind, ...] = ("key", "category", "number", "text", "timestamp")

# Rules whose released values are not the originals (an attacker cannot match them).
REPLACING_RULES = ("pseudonymize", "fake", "scrub", "suppress")
TOP_COMBINATIONS = 10
GROUP_CACHE_BYTES = 256 << 20  # groups of column combinations kept for longer combinations
BAND_JOIN_ROWS = 20_000_000  # candidate pairs a band join checks in memory (else in DuckDB)
# A number with fewer distinct values than this share of rows is a code or a count: matched
# exactly (a tolerance would only merge neighbouring codes and blow up the band join).
NUMBER_DISTINCT_SHARE = 0.05
# A text column with at least this many distinct values reads as free text (titles, names of
# things) rather than a category.
TEXT_DISTINCT = 50
# Stands in for a NULL number: a band around it holds only other NULLs.
_NULL_NUMBER = -1.0e300
_TEMPORAL = ("DATE", "TIMESTAMP", "TIME")


class KeptColumn(BaseModel):
    """A column the release keeps: how it is matched and how often it matches."""

    column: str
    kind: MatchKind
    matched_share: float = Field(
        description="Share of sampled released rows equal to (or within the tolerance of) "
        "their own original."
    )
    distinct: int = Field(description="Distinct source values.")


class ReidentifyingCombination(BaseModel):
    """A combination of kept columns and the share of sampled rows it re-identifies."""

    columns: list[str]
    rate: float
    suggestion: str = Field(description="A rule that would break the combination.")


class ReidentificationResult(BaseModel):
    """The search over one table's kept columns, worst combinations first."""

    table: str
    sampled: int = Field(description="Released rows the attacker tries to re-identify.")
    source_rows: int
    tolerance: float
    kept: list[KeptColumn]
    not_kept: list[str] = Field(default_factory=list, description="'column (why)'.")
    measured: int = Field(description="Combinations measured.")
    capped: int = Field(default=0, description="Candidate combinations left out by the cap.")
    combinations: list[ReidentifyingCombination] = Field(
        description=f"The {TOP_COMBINATIONS} worst, highest rate first."
    )
    report_only: str | None = Field(
        default=None, description="Why the policy reports this table without gating on it."
    )

    @property
    def worst(self) -> ReidentifyingCombination | None:
        return self.combinations[0] if self.combinations else None


# A table none of whose columns is pseudonymized, faked or suppressed is released as it is (a
# catalog, a reference list): there is no hidden identity for a combination to re-identify.
IDENTITY_RULES = ("pseudonymize", "fake", "suppress")


def hides_identity(policy: Policy, table: str) -> bool:
    """Whether the policy hides who a row of ``table`` is about (so it is searched)."""
    spec = policy.tables.get(table)
    if spec is None:
        return False
    replaced = any(c.rule.rule in IDENTITY_RULES for c in spec.columns.values())
    declared = table in policy.quasi_identifiers or any(x.table == table for x in policy.linkage)
    return replaced or declared


def _kind(dtype: str, distinct: int, rows: int, is_key: bool) -> MatchKind:
    if is_key:
        return "key"
    if dtype.startswith(_TEMPORAL):
        return "timestamp"
    if is_numeric_type(dtype):
        return "number" if distinct >= NUMBER_DISTINCT_SHARE * rows else "category"
    return "text" if distinct >= TEXT_DISTINCT else "category"


def _encode(column: str, kind: MatchKind) -> str:
    col = quote(column)
    if kind == "number":
        return f"coalesce(TRY_CAST({col} AS DOUBLE), {_NULL_NUMBER})"
    return f"hash(CAST({col} AS VARCHAR))"


def suggestion(column: KeptColumn, tolerance: float) -> str:
    """The rule that would break a combination, for its most identifying column."""
    name = column.column
    if column.kind == "key":
        return (
            f"key: pseudonymize {name} (a kept key names its row), or swap it within the "
            "columns the benchmark groups it by"
        )
    if column.kind == "timestamp":
        return f"timestamp: coarsen {name} (to the day or month) or shift it by a per-entity offset"
    if column.kind == "text":
        return f"free-text title: generalize {name} with a frequency floor (rare values grouped)"
    if column.kind == "number":
        return f"amount: perturb {name} with a minimum relative change above {tolerance:g}"
    return (
        f"generalize {name} (coarser categories), or swap it within the columns the "
        "benchmark groups it by"
    )


class _Search:
    """The temp tables and queries of one table's search (see the module docstring)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        table: str,
        kinds: dict[str, MatchKind],
        tolerance: float,
        sample_rows: int,
        seed: int,
        catalogs: tuple[str, str],
    ):
        self.con = con
        self.kinds = kinds
        self.tolerance = tolerance
        tag = uuid.uuid4().hex[:10]
        self.src, self.rel, self.own = (f"_reid_{tag}_{s}" for s in ("src", "rel", "own"))
        self.index = {c: i for i, c in enumerate(kinds)}
        cols = ", ".join(f"{_encode(c, k)} AS c{i}" for i, (c, k) in enumerate(kinds.items()))
        con.execute(
            f"CREATE TEMP TABLE {self.src} AS SELECT rowid AS rid, {cols} "
            f"FROM {table_ref(catalogs[0], table)}"
        )
        con.execute(
            f"CREATE TEMP TABLE {self.rel} AS SELECT rowid AS rid, {cols} "
            f"FROM {table_ref(catalogs[1], table)} "
            f"ORDER BY hash(rowid, {int(seed)}), rowid LIMIT {int(sample_rows)}"
        )
        matches = ", ".join(
            f"coalesce({self._match(f'r.c{i}', f's.c{i}', k)}, false) AS m{i}"
            for i, k in enumerate(kinds.values())
        )
        con.execute(
            f"CREATE TEMP TABLE {self.own} AS SELECT r.rid, {matches} "
            f"FROM {self.rel} r JOIN {self.src} s ON s.rid = r.rid"
        )
        self._arrays: _Arrays | None = None

    def _match(self, released: str, original: str, kind: MatchKind) -> str:
        if kind == "number":
            return f"abs({original} - {released}) <= {self.tolerance!r} * abs({released})"
        return f"{original} = {released}"

    def close(self) -> None:
        for name in (self.own, self.rel, self.src):
            self.con.execute(f"DROP TABLE IF EXISTS {name}")

    def sampled(self) -> int:
        row = self.con.execute(f"SELECT count(*) FROM {self.rel}").fetchone()
        return int(row[0]) if row else 0

    def matched_shares(self) -> dict[str, float]:
        avgs = ", ".join(f"avg(m{i}::INTEGER)" for i in range(len(self.kinds)))
        row = self.con.execute(f"SELECT {avgs} FROM {self.own}").fetchone()
        assert row is not None
        return {c: float(v or 0.0) for c, v in zip(self.kinds, row, strict=True)}

    def _band_join_sql(self, exact: list[int], numbers: list[int]) -> str:
        """Two or more numbers whose bands hold too many rows to check in memory: a band join on
        them."""
        tol = repr(self.tolerance)
        conds = [f"s.c{i} = r.c{i}" for i in exact]
        for i in numbers:
            conds.append(f"s.c{i} >= r.c{i} - {tol} * abs(r.c{i})")
            conds.append(f"s.c{i} <= r.c{i} + {tol} * abs(r.c{i})")
        return (
            f"SELECT 0, count(*) FROM (SELECT r.rid FROM {self.rel} r JOIN {self.src} s "
            f"ON {' AND '.join(conds)} GROUP BY r.rid HAVING count(*) = 1) u "
            f"JOIN {self.own} o ON o.rid = u.rid "
            f"WHERE {' AND '.join(f'o.m{i}' for i in [*exact, *numbers])}"
        )

    def _counts(self, sql: str, size: int) -> list[int]:
        counts = [0] * size
        for q, n in self.con.execute(sql).fetchall():
            counts[int(q)] = int(n)
        return counts

    def arrays(self) -> _Arrays:
        if self._arrays is None:
            self._arrays = _Arrays(self.con, self.src, self.rel, self.own, len(self.kinds))
        return self._arrays

    def rates(self, combos: list[tuple[str, ...]], sampled: int) -> dict[tuple[str, ...], float]:
        """Share of the sampled rows each combination re-identifies (module docstring): exact
        combinations and those with one number in memory over the encoded columns, two or more
        numbers by a band join."""
        hits: dict[tuple[str, ...], int] = {}
        for combo in combos:
            exact = [self.index[c] for c in combo if self.kinds[c] != "number"]
            numbers = [self.index[c] for c in combo if self.kinds[c] == "number"]
            if not numbers:
                hits[combo] = self.arrays().exact_hits(exact)
            elif len(numbers) == 1:
                hits[combo] = self.arrays().band_hits(exact, numbers[0], self.tolerance)
            else:
                found = self.arrays().band_join_hits(exact, numbers, self.tolerance)
                if found is None:
                    found = self._counts(self._band_join_sql(exact, numbers), 1)[0]
                hits[combo] = found
        return {c: hits[c] / sampled if sampled else 0.0 for c in combos}


class _Arrays:
    """One table's encoded source columns and sampled rows in memory, for the combinations
    without two numbers. A sampled row is re-identified by an exact combination when its own
    originals match on every column and its source group (by those originals) holds it alone;
    by a combination with one number when, in addition, the original's neighbours in sorted
    order within its exact group both lie outside the released value's band (equal values are
    neighbours too). Two or more numbers: the source rows inside every band are counted."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, src: str, rel: str, own: str, width: int
    ) -> None:
        cols = [f"c{i}" for i in range(width)]
        source = con.execute(f"SELECT rid, {', '.join(cols)} FROM {src} ORDER BY rid").fetchnumpy()
        picked = ", ".join(
            [f"o.m{i}" for i in range(width)] + [f"r.c{i} AS r{i}" for i in range(width)]
        )
        sample = con.execute(
            f"SELECT o.rid, {picked} FROM {own} o JOIN {rel} r ON r.rid = o.rid"
        ).fetchnumpy()
        self.values = [np.asarray(source[c]) for c in cols]
        self.released = [np.asarray(sample[f"r{i}"]) for i in range(width)]
        self.matched = [np.asarray(sample[f"m{i}"], dtype=bool) for i in range(width)]
        self.rows = np.searchsorted(np.asarray(source["rid"]), np.asarray(sample["rid"]))
        self.codes: list[np.ndarray] = []
        self.uniques: list[np.ndarray] = []
        self.distinct: list[int] = []
        for v in self.values:
            uniq, inverse = np.unique(v, return_inverse=True)
            self.codes.append(inverse.astype(np.int64).ravel())
            self.uniques.append(uniq)
            self.distinct.append(len(uniq))
        self._groups: dict[tuple[int, ...], tuple[np.ndarray, int]] = {}
        self._cached = 0  # groups of two or more columns in _groups

    def group(self, idx: list[int]) -> tuple[np.ndarray, int]:
        """Dense group numbers of the source rows by the columns ``idx`` and their count."""
        key = tuple(sorted(idx))
        if key not in self._groups:
            if not key:
                self._groups[key] = (np.zeros(len(self.values[0]), np.int64), 1)
            elif len(key) == 1:
                self._groups[key] = (self.codes[key[0]], self.distinct[key[0]])
            else:
                head, _ = self.group(list(key[:-1]))
                last = key[-1]
                combined = head * self.distinct[last] + self.codes[last]
                uniq, inverse = np.unique(combined, return_inverse=True)
                self._groups[key] = (inverse.astype(np.int64).ravel(), len(uniq))
                self._cached += 1
                # combinations' groups are kept while they fit (the oldest go first)
                while self._cached * len(combined) * 8 > GROUP_CACHE_BYTES and self._cached > 1:
                    oldest = next(k for k in self._groups if len(k) > 1 and k != key)
                    del self._groups[oldest]
                    self._cached -= 1
        return self._groups[key]

    def _selected(self, idx: list[int]) -> np.ndarray:
        sel = np.ones(len(self.rows), dtype=bool)
        for i in idx:
            sel &= self.matched[i]
        return sel

    def exact_hits(self, idx: list[int]) -> int:
        sel = self._selected(idx)
        if not sel.any():
            return 0
        groups, n = self.group(idx)
        sizes = np.bincount(groups, minlength=n)
        return int((sizes[groups[self.rows[sel]]] == 1).sum())

    def band_hits(self, exact: list[int], x: int, tolerance: float) -> int:
        sel = self._selected([*exact, x])
        if not sel.any():
            return 0
        groups, _ = self.group(exact)
        composite = groups * self.distinct[x] + self.codes[x]
        order = np.argsort(composite, kind="stable")
        position = np.empty_like(order)
        position[order] = np.arange(len(order))
        sorted_groups = groups[order]
        sorted_values = self.values[x][order]
        rows = self.rows[sel]
        k = position[rows]
        last = len(order) - 1
        below_k = np.maximum(k - 1, 0)
        above_k = np.minimum(k + 1, last)
        has_below = (k > 0) & (sorted_groups[below_k] == groups[rows])
        has_above = (k < last) & (sorted_groups[above_k] == groups[rows])
        v = self.released[x][sel]
        band = tolerance * np.abs(v)
        ok = (~has_below | (sorted_values[below_k] < v - band)) & (
            ~has_above | (sorted_values[above_k] > v + band)
        )
        return int(ok.sum())

    def _band_range(
        self, groups: np.ndarray, rows: np.ndarray, sel: np.ndarray, x: int, tolerance: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The source rows sorted by group and number ``x``, and for each selected row the
        start and length of the range of its group inside its band of ``x``."""
        d = self.distinct[x]
        composite = groups * d + self.codes[x]
        order = np.argsort(composite, kind="stable")
        ordered = composite[order]
        v = self.released[x][sel]
        band = tolerance * np.abs(v)
        low = np.searchsorted(self.uniques[x], v - band, side="left")
        high = np.searchsorted(self.uniques[x], v + band, side="right")
        base = groups[rows] * d
        start = np.searchsorted(ordered, base + low, side="left")
        end = np.searchsorted(ordered, base + high, side="left")
        return order, start, np.maximum(end - start, 0)

    def band_join_hits(self, exact: list[int], numbers: list[int], tolerance: float) -> int | None:
        """Combinations with two or more numbers, as ``_band_join_sql`` counts them: the source
        rows of the row's exact group inside the band of the number whose bands hold the fewest
        rows (a range of the rows sorted by group and that number), checked against the other
        bands; None when the ranges hold too many rows to check in memory."""
        sel = self._selected([*exact, *numbers])
        if not sel.any():
            return 0
        groups, _ = self.group(exact)
        rows = self.rows[sel]
        ranges = [self._band_range(groups, rows, sel, x, tolerance) for x in numbers]
        best = min(range(len(numbers)), key=lambda j: int(ranges[j][2].sum()))
        order, start, lengths = ranges[best]
        rest = [x for j, x in enumerate(numbers) if j != best]
        total = int(lengths.sum())
        if total > BAND_JOIN_ROWS:
            return None
        query = np.repeat(np.arange(len(rows)), lengths)
        offsets = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        candidates = order[np.repeat(start, lengths) + offsets]
        inside = np.ones(total, dtype=bool)
        for x in rest:
            released = self.released[x][sel][query]
            margin = tolerance * np.abs(released)
            values = self.values[x][candidates]
            inside &= (values >= released - margin) & (values <= released + margin)
        counts = np.bincount(query[inside], minlength=len(rows))
        return int((counts == 1).sum())


def _candidates(
    level: int,
    kept: list[str],
    rates: dict[tuple[str, ...], float],
    limit: float,
    distinct: dict[str, int],
) -> list[tuple[str, ...]]:
    """Combinations of ``level`` kept columns whose every part was measured at or under the
    limit, most promising first."""
    order = {c: i for i, c in enumerate(kept)}
    frontier = [c for c, r in rates.items() if len(c) == level - 1 and r <= limit]
    found: set[tuple[str, ...]] = set()
    for parent in frontier:
        for column in kept[order[parent[-1]] + 1 :]:
            combo = (*parent, column)
            parts = list(itertools.combinations(combo, level - 1))
            if all(p in rates and rates[p] <= limit for p in parts):
                found.add(combo)

    def score(combo: tuple[str, ...]) -> tuple[float, float]:
        parts = itertools.combinations(combo, level - 1)
        return (
            max(rates[p] for p in parts),
            sum(math.log(max(distinct[c], 1)) for c in combo),
        )

    return sorted(found, key=lambda c: (*(-s for s in score(c)), c))


def search_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    policy: Policy,
    *,
    sample_rows: int = 5000,
    seed: int = 0,
    keep_all: bool = False,
    catalogs: tuple[str, str] = ("src", "rel"),
    rules_kept: tuple[str, ...] | None = None,
) -> ReidentificationResult:
    """The worst combinations of ``table``'s kept columns (all measured ones with
    ``keep_all``), with the source attached as ``catalogs[0]`` and the release as
    ``catalogs[1]``. ``rules_kept`` limits the candidates to columns with these rules (a policy
    check, before any release exists, searches the source against itself for ``keep``)."""
    settings = policy.reidentification
    limit = policy.thresholds.max_reidentification_rate
    spec = policy.tables.get(table)
    rules = spec.columns if spec is not None else {}
    keys = {*spec.primary_key, *spec.foreign_keys} if spec is not None else set()
    src_cols = catalog_columns(con, catalogs[0], table)
    rel_cols = catalog_columns(con, catalogs[1], table)
    not_kept: list[str] = []
    candidates: list[str] = []
    for column in src_cols:
        rule = rules[column].rule.rule if column in rules else None
        if column not in rel_cols:
            not_kept.append(f"{column} (not released)")
        elif rule in REPLACING_RULES or (rules_kept is not None and rule not in rules_kept):
            not_kept.append(f"{column} ({rule})")
        else:
            candidates.append(column)
    row = con.execute(
        f"SELECT count(*){''.join(f', count(DISTINCT {quote(c)})' for c in candidates)} "
        f"FROM {table_ref(catalogs[0], table)}"
    ).fetchone()
    assert row is not None
    source_rows = int(row[0])
    distinct = {c: int(v) for c, v in zip(candidates, row[1:], strict=True)}
    kinds = {c: _kind(src_cols[c], distinct[c], source_rows, c in keys) for c in candidates}
    result = ReidentificationResult(
        table=table,
        sampled=0,
        source_rows=source_rows,
        tolerance=settings.tolerance,
        kept=[],
        not_kept=not_kept,
        measured=0,
        combinations=[],
        report_only=settings.report_only.get(table),
    )
    if not candidates or source_rows == 0:
        return result
    search = _Search(con, table, kinds, settings.tolerance, sample_rows, seed, catalogs)
    try:
        sampled = search.sampled()
        shares = search.matched_shares()
        kept: list[KeptColumn] = []
        for c in candidates:
            if distinct[c] < 2:
                not_kept.append(f"{c} (one value)")
            elif shares[c] <= limit:
                not_kept.append(f"{c} (matches its original on {shares[c]:.1%})")
            else:
                kept.append(
                    KeptColumn(
                        column=c, kind=kinds[c], matched_share=shares[c], distinct=distinct[c]
                    )
                )
        names = [k.column for k in kept]
        rates: dict[tuple[str, ...], float] = {}
        budget, capped = settings.max_combinations, 0
        for level in range(1, settings.max_columns + 1):
            todo: list[tuple[str, ...]] = (
                [(c,) for c in names]
                if level == 1
                else _candidates(level, names, rates, limit, distinct)
            )
            share = budget // (settings.max_columns - level + 1)
            capped += max(len(todo) - share, 0)
            rates.update(search.rates(todo[:share], sampled))
            budget -= min(len(todo), share)
    finally:
        search.close()
    by_name = {k.column: k for k in kept}

    def driver(combo: tuple[str, ...]) -> KeptColumn:
        """The column the suggestion is about: the one most identifying alone, then the kind
        a rule fixes best (a kept catalog key is the last thing to pseudonymize)."""
        return max(
            (by_name[c] for c in combo),
            key=lambda k: (rates.get((k.column,), 0.0), FIX_ORDER.index(k.kind), k.distinct),
        )

    ranked = sorted(rates.items(), key=lambda item: (-item[1], len(item[0]), item[0]))
    shown = ranked if keep_all else ranked[:TOP_COMBINATIONS]
    return result.model_copy(
        update={
            "sampled": sampled,
            "kept": kept,
            "not_kept": not_kept,
            "measured": len(rates),
            "capped": capped,
            "combinations": [
                ReidentifyingCombination(
                    columns=list(combo),
                    rate=rate,
                    suggestion=suggestion(driver(combo), settings.tolerance),
                )
                for combo, rate in shown
            ],
        }
    )

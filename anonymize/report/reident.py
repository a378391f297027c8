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
values), at most ``max_combinations`` per table. Everything runs in DuckDB: values are encoded
once per table (a hash for exact columns, a DOUBLE for numbers), exact combinations are counted
with one GROUP BY over the source, combinations with a number by a band join.
"""

from __future__ import annotations

import itertools
import math
import uuid
from typing import Literal

import duckdb
from pydantic import BaseModel, Field

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.kanon import catalog_columns, quote, table_ref
from benchforge.anonymize.sqltypes import is_numeric_type

MatchKind = Literal["key", "number", "timestamp", "text", "category"]
FIX_ORDER: tuple[MatchKind, ...] = ("key", "category", "number", "text", "timestamp")

# Rules whose released values are not the originals (an attacker cannot match them).
REPLACING_RULES = ("pseudonymize", "fake", "scrub", "suppress")
TOP_COMBINATIONS = 10
BATCH = 64  # combinations measured by one query
MASK_BITS = 63  # columns one exact query covers (one UBIGINT bit each)
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
        return f"key: pseudonymize {name} (a kept key names its row)"
    if column.kind == "timestamp":
        return f"timestamp: coarsen {name} (to the day or month) or shift it by a per-entity offset"
    if column.kind == "text":
        return f"free-text title: generalize {name} with a frequency floor (rare values grouped)"
    if column.kind == "number":
        return f"amount: perturb {name} with a minimum relative change above {tolerance:g}"
    return f"generalize {name} (coarser categories)"


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

    def _own(self, idx: list[int]) -> str:
        return " AND ".join(f"o.m{i}" for i in idx)

    def _matched_rel(self, q: int, key: str, idx: list[int], extra: str = "") -> str:
        """Released rows whose own originals match on every column of combination ``q``: the
        only rows it can re-identify."""
        return (
            f"SELECT {q} AS q, r.rid, {key} AS k{extra} FROM {self.rel} r "
            f"JOIN {self.own} o ON o.rid = r.rid WHERE {self._own(idx)}"
        )

    def _exact_sql(self, batch: list[list[int]]) -> str:
        """One pass over the source with a grouping set per combination. A sampled row whose
        own originals match on every column of a combination is re-identified exactly when its
        source group (by those originals) holds it alone, so only the source is grouped; each
        group carries the OR of its rows' own-match bits (bit ``K-1-i`` for column ``i``, the
        order GROUPING() numbers them in), and ``mask | grouping = all bits`` says the lone row
        matches on every grouped column."""
        cols = sorted({i for idx in batch for i in idx})
        width = len(cols)
        bit = {i: width - 1 - j for j, i in enumerate(cols)}
        mask = " | ".join(f"(o.m{i}::UBIGINT << {bit[i]})" for i in cols)
        sets = ", ".join("(" + ", ".join(f"c{i}" for i in idx) + ")" for idx in batch)
        grouping = ", ".join(f"c{i}" for i in cols)
        return (
            f"WITH t AS (SELECT s.*, coalesce({mask}, 0::UBIGINT) AS mask FROM {self.src} s "
            f"LEFT JOIN {self.own} o ON o.rid = s.rid), "
            f"g AS (SELECT GROUPING({grouping})::UBIGINT AS g, count(*) AS n, "
            f"bit_or(mask) AS mask FROM t GROUP BY GROUPING SETS ({sets})) "
            f"SELECT g, count(*) FILTER (WHERE n = 1 AND (mask | g) = {(1 << width) - 1}) "
            "FROM g GROUP BY g"
        )

    def _exact_counts(self, batch: list[list[int]]) -> list[int]:
        cols = sorted({i for idx in batch for i in idx})
        width = len(cols)
        position = {i: j for j, i in enumerate(cols)}
        by_grouping = {}
        for q, idx in enumerate(batch):
            grouped = {position[i] for i in idx}
            by_grouping[sum(1 << (width - 1 - j) for j in range(width) if j not in grouped)] = q
        counts = [0] * len(batch)
        for g, n in self.con.execute(self._exact_sql(batch)).fetchall():
            counts[by_grouping[int(g)]] = int(n)
        return counts

    def _band_sql(self, batch: list[tuple[list[int], int]]) -> str:
        """Combinations with one number. The released value's band holds its own original (the
        row is own-matched), so it holds no other original exactly when the original's
        neighbours in sorted order within its exact group (lag and lead: one window over the
        source, no band join) both lie outside the band; equal values are neighbours too."""
        tol = repr(self.tolerance)
        parts = []
        for q, (exact, x) in enumerate(batch):
            key = f"hash({', '.join(f's.c{i}' for i in exact)})" if exact else "0"
            w = f"(PARTITION BY {key} ORDER BY s.c{x})"
            parts.append(
                f"SELECT {q} AS q, s.rid, lag(s.c{x}) OVER {w} AS below, "
                f"lead(s.c{x}) OVER {w} AS above, r.c{x} AS v FROM {self.src} s "
                f"LEFT JOIN {self.rel} r ON r.rid = s.rid "
                f"LEFT JOIN {self.own} o ON o.rid = s.rid "
                f"QUALIFY r.rid IS NOT NULL AND {self._own([*exact, x])}"
            )
        return (
            f"SELECT q, count(*) FROM ({' UNION ALL '.join(parts)}) "
            f"WHERE (below IS NULL OR below < v - {tol} * abs(v)) "
            f"AND (above IS NULL OR above > v + {tol} * abs(v)) GROUP BY q"
        )

    def _band_join_sql(self, exact: list[int], numbers: list[int]) -> str:
        """Two or more numbers (rare): a band join on them."""
        tol = repr(self.tolerance)
        conds = [f"s.c{i} = r.c{i}" for i in exact]
        for i in numbers:
            conds.append(f"s.c{i} >= r.c{i} - {tol} * abs(r.c{i})")
            conds.append(f"s.c{i} <= r.c{i} + {tol} * abs(r.c{i})")
        return (
            f"SELECT 0, count(*) FROM (SELECT r.rid FROM {self.rel} r JOIN {self.src} s "
            f"ON {' AND '.join(conds)} GROUP BY r.rid HAVING count(*) = 1) u "
            f"JOIN {self.own} o ON o.rid = u.rid WHERE {self._own([*exact, *numbers])}"
        )

    def _counts(self, sql: str, size: int) -> list[int]:
        counts = [0] * size
        for q, n in self.con.execute(sql).fetchall():
            counts[int(q)] = int(n)
        return counts

    def rates(self, combos: list[tuple[str, ...]], sampled: int) -> dict[tuple[str, ...], float]:
        """Share of the sampled rows each combination re-identifies (module docstring); one
        query per batch of combinations of the same shape."""
        exact_only: list[tuple[tuple[str, ...], list[int]]] = []
        one_number: list[tuple[tuple[str, ...], tuple[list[int], int]]] = []
        hits: dict[tuple[str, ...], int] = {}
        for combo in combos:
            exact = [self.index[c] for c in combo if self.kinds[c] != "number"]
            numbers = [self.index[c] for c in combo if self.kinds[c] == "number"]
            if not numbers:
                exact_only.append((combo, exact))
            elif len(numbers) == 1:
                one_number.append((combo, (exact, numbers[0])))
            else:
                hits[combo] = self._counts(self._band_join_sql(exact, numbers), 1)[0]
        for chunk in _batches(exact_only):
            counts = self._exact_counts([i for _, i in chunk])
            hits.update(zip((c for c, _ in chunk), counts, strict=True))
        for start in range(0, len(one_number), BATCH):
            part = one_number[start : start + BATCH]
            counts = self._counts(self._band_sql([i for _, i in part]), len(part))
            hits.update(zip((c for c, _ in part), counts, strict=True))
        return {c: hits[c] / sampled if sampled else 0.0 for c in combos}


def _batches(
    combos: list[tuple[tuple[str, ...], list[int]]],
) -> list[list[tuple[tuple[str, ...], list[int]]]]:
    """At most BATCH combinations over at most MASK_BITS columns each (the own-match mask)."""
    out: list[list[tuple[tuple[str, ...], list[int]]]] = []
    current: list[tuple[tuple[str, ...], list[int]]] = []
    columns: set[int] = set()
    for combo, idx in combos:
        if current and (len(current) == BATCH or len(columns | set(idx)) > MASK_BITS):
            out.append(current)
            current, columns = [], set()
        current.append((combo, idx))
        columns |= set(idx)
    if current:
        out.append(current)
    return out


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

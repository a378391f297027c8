"""Fidelity of the release: per-column marginals, column-pair trends and per-group KS tests,
with SDMetrics' definitions but computed in DuckDB SQL over whole tables.

Why SQL and not SDMetrics: its metrics load both tables into pandas and run out of memory at a
few tens of thousands of rows; releases here have millions. Python only sees one aggregate row
per query. Distances are computed exactly from counts per distinct value on each side:

- KSComplement = 1 - max |F_src - F_rel| over the union of observed values (NULLs dropped;
  dates and timestamps are compared by their order, which is all the statistic depends on);
- TVComplement = 1 - 1/2 sum |p_src - p_rel| over the union of categories (NULLs dropped: the
  missing share has its own metric);
- MissingValueSimilarity = 1 - |null share src - null share rel|;
- StatisticSimilarity (mean, sd, median) = 1 - |a - b| / max(|a|, |b|, tiny), clipped;
- CorrelationSimilarity = 1 - |rho_src - rho_rel| / 2, Pearson and Spearman (average ranks);
- ContingencySimilarity = 1 - 1/2 sum |joint p_src - joint p_rel|, numeric columns in 10
  equal-width bins over the source range.

Rows of a released table align with the source's by position, which the per-group tests use
(the group of a released value is its source row's group).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import duckdb
import numpy as np
from scipy.stats import kstwo

from benchforge.anonymize.policy.models import Perturb, Policy, Table
from benchforge.anonymize.report.models import (
    ColumnFidelity,
    ColumnKind,
    FidelitySection,
    PairMetric,
    StatisticSimilarity,
    SubgroupKS,
)
from benchforge.anonymize.sqltypes import NUMERIC_TYPES
from benchforge.core.sql import literal, qualified, quote

SRC = "src"
REL = "rel"
# Rules that replace values wholesale: comparing distributions would measure nothing useful.
REPLACED_RULES = frozenset({"pseudonymize", "fake", "scrub", "suppress"})
# Rules (and the absence of a rule) that leave values as they are.
UNCHANGED_RULES = frozenset({"keep", "unlisted"})
# Numeric rules whose values move: correlation pairs need at least one of these.
MOVING_NUMERIC_RULES = frozenset({"perturb", "derive"})
MAX_CATEGORIES = 200
MAX_PAIRS_PER_TABLE = 40
CONTINGENCY_BINS = 10
MIN_ABS_RHO = 0.1
# Exact medians buffer every value; beyond this many rows the t-digest approximation is used.
EXACT_MEDIAN_ROWS = 1_000_000
TINY = 1e-12

_DATETIME_TYPES = frozenset(
    {
        "DATE",
        "TIME",
        "TIMESTAMP",
        "TIMESTAMP WITH TIME ZONE",
        "TIMESTAMP_S",
        "TIMESTAMP_MS",
        "TIMESTAMP_NS",
    }
)


def base_kind(dtype: str) -> ColumnKind:
    """The comparison family of a DuckDB type (nested types such as ``INTEGER[]`` are not
    compared); VARCHAR starts as categorical and becomes ``text`` when it has too many
    distinct values."""
    upper = dtype.upper().strip()
    if any(ch in upper for ch in "[<") or upper.startswith(("STRUCT", "MAP", "UNION")):
        return "other"
    name = upper.split("(", 1)[0].strip()
    if name in NUMERIC_TYPES:
        return "numeric"
    if name in _DATETIME_TYPES:
        return "datetime"
    if name in ("VARCHAR", "BOOLEAN"):
        return "categorical"
    return "other"


def table_ref(catalog: str, table: str) -> str:
    return qualified(catalog, "raw", table)


def column_types(con: duckdb.DuckDBPyConnection, catalog: str, table: str) -> dict[str, str]:
    """Column -> DuckDB type of ``catalog.raw.table`` in column order; empty if absent."""
    rows = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = ? AND table_schema = 'raw' AND table_name = ? "
        "ORDER BY ordinal_position",
        [catalog, table],
    ).fetchall()
    return {str(name): str(dtype) for name, dtype in rows}


def catalog_tables(con: duckdb.DuckDBPyConnection, catalog: str) -> list[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_catalog = ? AND table_schema = 'raw' ORDER BY table_name",
        [catalog],
    ).fetchall()
    return [str(r[0]) for r in rows]


def report_tables(con: duckdb.DuckDBPyConnection, policy: Policy) -> list[str]:
    """Source tables, in policy order first (the order a reader of the policy expects)."""
    present = catalog_tables(con, SRC)
    ordered = [t for t in policy.tables if t in present]
    return ordered + [t for t in present if t not in policy.tables]


def rule_of(policy: Policy, table: str, column: str) -> str:
    spec = policy.tables.get(table)
    if spec is None or column not in spec.columns:
        return "unlisted"
    return spec.columns[column].rule.rule


def key_columns(policy: Policy, table: str) -> set[str]:
    """Primary and foreign key columns of ``table`` and columns other tables reference."""
    spec = policy.tables.get(table)
    keys: set[str] = set()
    if spec is not None:
        keys.update(spec.primary_key)
        keys.update(spec.foreign_keys)
    for other in policy.tables.values():
        for target in other.foreign_keys.values():
            parent, _, col = target.partition(".")
            if parent == table:
                keys.add(col)
    return keys


# ---------------------------------------------------------------- distances in SQL


@dataclass(frozen=True)
class KSResult:
    d: float | None
    n_src: int
    n_rel: int


def ks_statistic(con: duckdb.DuckDBPyConnection, src_sql: str, rel_sql: str) -> KSResult:
    """Exact two-sample KS distance between the values ``v`` of two relations (NULLs dropped):
    counts per distinct value on each side, running sums over the union in value order, the
    largest gap between the two empirical CDFs. ``d`` is None when a side has no values."""
    sql = f"""
        WITH s AS (SELECT v, count(*) AS c FROM ({src_sql}) WHERE v IS NOT NULL GROUP BY v),
        r AS (SELECT v, count(*) AS c FROM ({rel_sql}) WHERE v IS NOT NULL GROUP BY v),
        u AS (
            SELECT coalesce(s.v, r.v) AS v, coalesce(s.c, 0) AS a, coalesce(r.c, 0) AS b
            FROM s FULL OUTER JOIN r ON s.v = r.v
        ),
        tot AS (SELECT coalesce(sum(a), 0) AS n, coalesce(sum(b), 0) AS m FROM u),
        cum AS (
            SELECT sum(a) OVER w AS ca, sum(b) OVER w AS cb FROM u
            WINDOW w AS (ORDER BY v ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        )
        SELECT (SELECT n FROM tot), (SELECT m FROM tot),
               max(abs(ca / (SELECT n FROM tot) - cb / (SELECT m FROM tot))) FROM cum
    """
    row = con.execute(sql).fetchone()
    assert row is not None
    n, m = int(row[0]), int(row[1])
    if n == 0 or m == 0:
        return KSResult(None, n, m)
    return KSResult(float(row[2]), n, m)


@dataclass(frozen=True)
class TVResult:
    distance: float | None
    n_src: int
    n_rel: int
    categories_src: int


def tv_distance(
    con: duckdb.DuckDBPyConnection, src_sql: str, rel_sql: str, keys: Sequence[str]
) -> TVResult:
    """Total variation distance 1/2 sum |p_src - p_rel| between the joint distributions of the
    ``keys`` columns of two relations (rows with a NULL key dropped); one key is TVComplement's
    marginal, two keys ContingencySimilarity's joint table."""
    cols = ", ".join(quote(k) for k in keys)
    not_null = " AND ".join(f"{quote(k)} IS NOT NULL" for k in keys)
    on = " AND ".join(f"s.{quote(k)} = r.{quote(k)}" for k in keys)
    sql = f"""
        WITH s AS (SELECT {cols}, count(*) AS c FROM ({src_sql}) WHERE {not_null} GROUP BY ALL),
        r AS (SELECT {cols}, count(*) AS c FROM ({rel_sql}) WHERE {not_null} GROUP BY ALL),
        tot AS (SELECT (SELECT coalesce(sum(c), 0) FROM s) AS n,
                       (SELECT coalesce(sum(c), 0) FROM r) AS m,
                       (SELECT count(*) FROM s) AS k)
        SELECT (SELECT n FROM tot), (SELECT m FROM tot), (SELECT k FROM tot),
               0.5 * sum(abs(coalesce(s.c, 0) / (SELECT n FROM tot)
                             - coalesce(r.c, 0) / (SELECT m FROM tot)))
        FROM s FULL OUTER JOIN r ON {on}
    """
    row = con.execute(sql).fetchone()
    assert row is not None
    n, m, k = int(row[0]), int(row[1]), int(row[2])
    if n == 0 or m == 0:
        return TVResult(None, n, m, k)
    return TVResult(min(1.0, float(row[3])), n, m, k)


def ks_complement(d: float | None) -> float | None:
    return None if d is None else _clip(1.0 - d)


def statistic_similarity(a: float | None, b: float | None) -> float | None:
    """1 - |a - b| / max(|a|, |b|, tiny), clipped to [0, 1]; None when the source has none."""
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return None
    if b is None or (isinstance(b, float) and math.isnan(b)):
        return 0.0
    return _clip(1.0 - abs(a - b) / max(abs(a), abs(b), TINY))


def correlation_similarity(rho_src: float, rho_rel: float | None) -> float:
    """1 - |rho_src - rho_rel| / 2; a release whose correlation is undefined (a constant
    column) is scored as if it had none (rho_rel = 0)."""
    other = 0.0 if rho_rel is None else rho_rel
    return _clip(1.0 - abs(rho_src - other) / 2.0)


def ks_pvalues(d: np.ndarray, n: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Two-sample KS p-values from D and the sample sizes, as scipy's ``ks_2samp`` computes
    them in asymptotic mode (the Kolmogorov distribution at the effective size n*m/(n+m),
    rounded); only the per-group counts leave the database, never the values. Vectorized: a
    ``group_by`` on a key can have many thousands of groups."""
    en = np.maximum(1.0, np.round(n * m / (n + m)))
    return np.asarray(kstwo.sf(d, en), dtype=float)


def _clip(x: float) -> float:
    return max(0.0, min(1.0, x))


def _num(value: object) -> float | None:
    if value is None:
        return None
    f = float(value)  # type: ignore[arg-type]
    return None if math.isnan(f) else f


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


# ---------------------------------------------------------------- per-table profile


@dataclass
class SideProfile:
    """One pass over a table on one side: row count, non-NULL counts, numeric moments."""

    rows: int = 0
    non_null: dict[str, int] = field(default_factory=dict)
    mean: dict[str, float | None] = field(default_factory=dict)
    sd: dict[str, float | None] = field(default_factory=dict)
    median: dict[str, float | None] = field(default_factory=dict)
    low: dict[str, float | None] = field(default_factory=dict)
    high: dict[str, float | None] = field(default_factory=dict)
    approx_distinct: dict[str, int] = field(default_factory=dict)


def profile_side(
    con: duckdb.DuckDBPyConnection, catalog: str, table: str, types: dict[str, str]
) -> SideProfile:
    """Every column's aggregates in one scan (medians exact up to EXACT_MEDIAN_ROWS rows)."""
    ref = table_ref(catalog, table)
    row = con.execute(f"SELECT count(*) FROM {ref}").fetchone()
    rows = int(row[0]) if row else 0
    median_fn = "median" if rows <= EXACT_MEDIAN_ROWS else "approx_quantile"
    exprs: list[str] = []
    slots: list[tuple[str, str]] = []
    for col, dtype in types.items():
        q = quote(col)
        exprs.append(f"count({q})")
        slots.append(("non_null", col))
        kind = base_kind(dtype)
        if kind == "numeric":
            x = f"CAST({q} AS DOUBLE)"
            median = f"median({x})" if median_fn == "median" else f"approx_quantile({x}, 0.5)"
            for name, expr in (
                ("mean", f"avg({x})"),
                ("sd", f"stddev_samp({x})"),
                ("median", median),
                ("low", f"min({x})"),
                ("high", f"max({x})"),
            ):
                exprs.append(expr)
                slots.append((name, col))
        elif kind == "categorical":
            exprs.append(f"approx_count_distinct({q})")
            slots.append(("approx_distinct", col))
    profile = SideProfile(rows=rows)
    if not exprs:
        return profile
    values = con.execute(f"SELECT {', '.join(exprs)} FROM {ref}").fetchone()
    assert values is not None
    for (name, col), value in zip(slots, values, strict=True):
        if name in ("non_null", "approx_distinct"):
            getattr(profile, name)[col] = int(value)
        else:
            getattr(profile, name)[col] = _num(value)
    return profile


# ---------------------------------------------------------------- columns


def _column(
    con: duckdb.DuckDBPyConnection,
    table: str,
    col: str,
    dtype: str,
    rule: str,
    rel_types: dict[str, str],
    sp: SideProfile,
    rp: SideProfile | None,
) -> ColumnFidelity:
    kind = base_kind(dtype)
    out = ColumnFidelity(
        table=table, column=col, dtype=dtype, rule=rule, kind=kind, status="scored"
    )
    if rp is None or col not in rel_types:
        where = "table" if rp is None else "column"
        return out.model_copy(
            update={"status": "not_measured", "reason": f"{where} missing from the release"}
        )
    null_src = 1.0 - sp.non_null[col] / sp.rows if sp.rows else 0.0
    null_rel = 1.0 - rp.non_null[col] / rp.rows if rp.rows else 0.0
    out.null_share_src, out.null_share_rel = null_src, null_rel
    out.missing_similarity = _clip(1.0 - abs(null_src - null_rel))
    if rule in REPLACED_RULES:
        out.status, out.reason = "replaced", f"values replaced by rule '{rule}'"
        return out
    if kind == "other":
        out.status, out.reason = "not_measured", f"type {dtype} is not compared"
        return out
    if kind == "categorical" and dtype.upper().startswith("VARCHAR") and rule == "perturb":
        out.kind, out.status = "text", "not_measured"
        out.reason = "numbers stored as text (VARCHAR); not compared as numbers"
        return out
    src_sql = f"SELECT {quote(col)} AS v FROM {table_ref(SRC, table)}"
    rel_sql = f"SELECT {quote(col)} AS v FROM {table_ref(REL, table)}"
    if kind in ("numeric", "datetime"):
        ks = ks_statistic(con, src_sql, rel_sql)
        if ks.d is None:
            out.status, out.reason = "not_measured", "no non-NULL values on one side"
            return out
        out.ks_complement = ks_complement(ks.d)
        if kind == "numeric":
            out.statistics = StatisticSimilarity(
                mean=statistic_similarity(sp.mean[col], rp.mean[col]),
                sd=statistic_similarity(sp.sd[col], rp.sd[col]),
                median=statistic_similarity(sp.median[col], rp.median[col]),
            )
        return out
    # categorical: HyperLogLog first so high-cardinality text is never grouped exactly
    if sp.approx_distinct.get(col, 0) > MAX_CATEGORIES * 1.3:
        out.kind, out.status = "text", "not_measured"
        out.reason = f"about {sp.approx_distinct[col]} distinct values (> {MAX_CATEGORIES})"
        return out
    tv = tv_distance(con, src_sql, rel_sql, ["v"])
    if tv.categories_src > MAX_CATEGORIES:
        out.kind, out.status = "text", "not_measured"
        out.reason = f"{tv.categories_src} distinct values (> {MAX_CATEGORIES})"
        return out
    if tv.distance is None:
        out.status, out.reason = "not_measured", "no non-NULL values on one side"
        return out
    out.tv_complement = _clip(1.0 - tv.distance)
    return out


# ---------------------------------------------------------------- pairs


def _avg_rank(expr: str) -> str:
    # Average rank of ties among non-NULL values: (first rank + last rank) / 2, where the
    # last rank is cume_dist * rows (NULLs sort last, so they never shift non-NULL ranks).
    w = f"(ORDER BY {expr})"
    return f"(rank() OVER {w} + cume_dist() OVER {w} * count(*) OVER ()) / 2.0"


def _pearson(
    con: duckdb.DuckDBPyConnection, catalog: str, table: str, pairs: list[tuple[str, str]]
) -> list[float | None]:
    exprs = [f"corr(CAST({quote(a)} AS DOUBLE), CAST({quote(b)} AS DOUBLE))" for a, b in pairs]
    row = con.execute(f"SELECT {', '.join(exprs)} FROM {table_ref(catalog, table)}").fetchone()
    assert row is not None
    return [_num(v) for v in row]


def _spearman(
    con: duckdb.DuckDBPyConnection,
    catalog: str,
    table: str,
    pairs: list[tuple[str, str]],
    complete: set[str],
) -> list[float | None]:
    """Spearman = Pearson of average ranks over rows where both columns are non-NULL. Pairs of
    columns without NULLs share one ranking pass; others are ranked on their own rows."""
    ref = table_ref(catalog, table)
    out: list[float | None] = [None] * len(pairs)
    shared = [i for i, (a, b) in enumerate(pairs) if a in complete and b in complete]
    if shared:
        cols = sorted({c for i in shared for c in pairs[i]})
        alias = {c: f"r{j}" for j, c in enumerate(cols)}
        ranks = ", ".join(f"{_avg_rank(quote(c))} AS {alias[c]}" for c in cols)
        corrs = ", ".join(f"corr({alias[pairs[i][0]]}, {alias[pairs[i][1]]})" for i in shared)
        row = con.execute(f"WITH rk AS (SELECT {ranks} FROM {ref}) SELECT {corrs} FROM rk")
        values = row.fetchone()
        assert values is not None
        for i, v in zip(shared, values, strict=True):
            out[i] = _num(v)
    for i, (a, b) in enumerate(pairs):
        if i in shared:
            continue
        sql = f"""
            WITH f AS (SELECT {quote(a)} AS x, {quote(b)} AS y FROM {ref}
                       WHERE {quote(a)} IS NOT NULL AND {quote(b)} IS NOT NULL),
            rk AS (SELECT {_avg_rank("x")} AS rx, {_avg_rank("y")} AS ry FROM f)
            SELECT corr(rx, ry) FROM rk
        """
        value = con.execute(sql).fetchone()
        out[i] = _num(value[0]) if value else None
    return out


def _complete(types: dict[str, str], profile: SideProfile) -> set[str]:
    return {c for c in types if profile.non_null.get(c, -1) == profile.rows}


def _correlation_pairs(
    con: duckdb.DuckDBPyConnection,
    table: str,
    pairs: list[tuple[str, str]],
    types: dict[str, str],
    sp: SideProfile,
    rel_types: dict[str, str],
    rp: SideProfile,
) -> list[PairMetric]:
    if not pairs:
        return []
    out: list[PairMetric] = []
    for metric in ("pearson", "spearman"):
        if metric == "pearson":
            src = _pearson(con, SRC, table, pairs)
            rel = _pearson(con, REL, table, pairs)
        else:
            src = _spearman(con, SRC, table, pairs, _complete(types, sp))
            rel = _spearman(con, REL, table, pairs, _complete(rel_types, rp))
        for (a, b), rs, rr in zip(pairs, src, rel, strict=True):
            pm = PairMetric(table=table, column_a=a, column_b=b, metric=metric, src=rs, rel=rr)
            if rs is None:
                pm.skipped = "correlation undefined on the source (constant or too few rows)"
            elif abs(rs) < MIN_ABS_RHO:
                pm.skipped = f"|rho_src| < {MIN_ABS_RHO}"
            else:
                pm.score = correlation_similarity(rs, rr)
            out.append(pm)
    return out


def _binned(col: str, sp: SideProfile, kind: str) -> str:
    """Categorical columns as they are; numeric ones as one of 10 equal-width bins over the
    source range (release values outside it fall in the end bins)."""
    q = quote(col)
    if kind != "numeric":
        return q
    lo, hi = sp.low.get(col), sp.high.get(col)
    if lo is None or hi is None or hi <= lo:
        return f"CASE WHEN {q} IS NULL THEN NULL ELSE 0 END"
    width = (hi - lo) / CONTINGENCY_BINS
    return (
        f"CAST(greatest(0, least({CONTINGENCY_BINS - 1}, "
        f"floor((CAST({q} AS DOUBLE) - {literal(lo)}) / {literal(width)}))) AS INTEGER)"
    )


def _contingency_pairs(
    con: duckdb.DuckDBPyConnection,
    table: str,
    pairs: list[tuple[str, str]],
    kinds: Mapping[str, str],
    sp: SideProfile,
) -> list[PairMetric]:
    out: list[PairMetric] = []
    for a, b in pairs:
        ea, eb = _binned(a, sp, kinds[a]), _binned(b, sp, kinds[b])
        src_sql = f"SELECT {ea} AS a, {eb} AS b FROM {table_ref(SRC, table)}"
        rel_sql = f"SELECT {ea} AS a, {eb} AS b FROM {table_ref(REL, table)}"
        tv = tv_distance(con, src_sql, rel_sql, ["a", "b"])
        pm = PairMetric(table=table, column_a=a, column_b=b, metric="contingency")
        if tv.distance is None:
            pm.skipped = "no rows with both values on one side"
        else:
            pm.score = _clip(1.0 - tv.distance)
        out.append(pm)
    return out


def _capped(pairs: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], int]:
    return pairs[:MAX_PAIRS_PER_TABLE], max(0, len(pairs) - MAX_PAIRS_PER_TABLE)


# ---------------------------------------------------------------- per-group KS


def subgroup_ks(
    con: duckdb.DuckDBPyConnection, table: str, column: str, group_by: list[str]
) -> SubgroupKS:
    """KS distance per source group in one query (rows paired by position, each released value
    in its source row's group), then the two-sample p-value per group from D and the counts."""
    gkey = f"hash({', '.join('s.' + quote(g) for g in group_by)})"
    q = quote(column)
    sql = f"""
        WITH j AS (
            SELECT {gkey} AS g, s.{q} AS sv, r.{q} AS rv
            FROM {table_ref(SRC, table)} AS s POSITIONAL JOIN {table_ref(REL, table)} AS r
        ),
        sc AS (SELECT g, sv AS v, count(*) AS c FROM j WHERE sv IS NOT NULL GROUP BY ALL),
        rc AS (SELECT g, rv AS v, count(*) AS c FROM j WHERE rv IS NOT NULL GROUP BY ALL),
        u AS (
            SELECT coalesce(sc.g, rc.g) AS g, coalesce(sc.v, rc.v) AS v,
                   coalesce(sc.c, 0) AS a, coalesce(rc.c, 0) AS b
            FROM sc FULL OUTER JOIN rc ON sc.g = rc.g AND sc.v = rc.v
        ),
        cum AS (
            SELECT g, sum(a) OVER w AS ca, sum(b) OVER w AS cb,
                   sum(a) OVER (PARTITION BY g) AS n, sum(b) OVER (PARTITION BY g) AS m
            FROM u
            WINDOW w AS (PARTITION BY g ORDER BY v ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        )
        SELECT max(n), max(m),
               max(CASE WHEN n > 0 AND m > 0 THEN abs(ca / n - cb / m) END)
        FROM cum GROUP BY g
    """
    rows = con.execute(sql).fetchall()
    tested = [(float(d), float(n), float(m)) for n, m, d in rows if n and m and d is not None]
    out = SubgroupKS(
        table=table,
        column=column,
        group_by=list(group_by),
        groups=len(tested),
        groups_skipped=len(rows) - len(tested),
    )
    if tested:
        d, n, m = (np.asarray(v) for v in zip(*tested, strict=True))
        p = ks_pvalues(d, n, m)
        out.max_d = float(d.max())
        out.min_p = float(p.min())
        out.share_p_above_05 = float((p > 0.05).mean())
    return out


# ---------------------------------------------------------------- the section


@dataclass
class _TableResult:
    columns: list[ColumnFidelity]
    pairs: list[PairMetric]
    subgroups: list[SubgroupKS]
    capped: int


def _table(con: duckdb.DuckDBPyConnection, policy: Policy, table: str) -> _TableResult:
    types = column_types(con, SRC, table)
    rel_types = column_types(con, REL, table)
    sp = profile_side(con, SRC, table, types)
    rp = profile_side(con, REL, table, rel_types) if rel_types else None
    rules = {c: rule_of(policy, table, c) for c in types}
    columns = [
        _column(con, table, c, dtype, rules[c], rel_types, sp, rp) for c, dtype in types.items()
    ]
    if rp is None:
        return _TableResult(columns, [], [], 0)
    keys = key_columns(policy, table)
    scored = {c.column: c for c in columns if c.status == "scored"}
    numeric = [c for c in scored if scored[c].kind == "numeric" and c not in keys]
    corr_pairs = [
        (a, b)
        for i, a in enumerate(numeric)
        for b in numeric[i + 1 :]
        if rules[a] in MOVING_NUMERIC_RULES or rules[b] in MOVING_NUMERIC_RULES
    ]
    corr_pairs, capped = _capped(corr_pairs)
    pairs = _correlation_pairs(con, table, corr_pairs, types, sp, rel_types, rp)
    kinds = {c: scored[c].kind for c in scored}
    cont_cols = [c for c in scored if kinds[c] == "categorical" or c in numeric]
    cont_pairs = [
        (a, b)
        for i, a in enumerate(cont_cols)
        for b in cont_cols[i + 1 :]
        if rules[a] not in UNCHANGED_RULES or rules[b] not in UNCHANGED_RULES
    ]
    cont_pairs, capped_cont = _capped(cont_pairs)
    pairs += _contingency_pairs(con, table, cont_pairs, kinds, sp)
    subgroups: list[SubgroupKS] = []
    spec: Table | None = policy.tables.get(table)
    for col, c in spec.columns.items() if spec else []:
        rule = c.rule
        if not isinstance(rule, Perturb) or not rule.group_by or col not in scored:
            continue
        if all(g in types for g in rule.group_by):
            subgroups.append(subgroup_ks(con, table, col, rule.group_by))
    return _TableResult(columns, pairs, subgroups, capped + capped_cont)


def fidelity_section(con: duckdb.DuckDBPyConnection, policy: Policy) -> FidelitySection:
    """Fidelity of every source table against its release (catalogs ``src`` and ``rel``)."""
    columns: list[ColumnFidelity] = []
    pairs: list[PairMetric] = []
    subgroups: list[SubgroupKS] = []
    capped = 0
    for table in report_tables(con, policy):
        result = _table(con, policy, table)
        columns += result.columns
        pairs += result.pairs
        subgroups += result.subgroups
        capped += result.capped
    pearson = [p.score for p in pairs if p.metric == "pearson"]
    spearman = [p.score for p in pairs if p.metric == "spearman"]
    return FidelitySection(
        columns=columns,
        pairs=pairs,
        subgroups=subgroups,
        ks_mean=_mean(c.ks_complement for c in columns if c.status == "scored"),
        tv_mean=_mean(c.tv_complement for c in columns if c.status == "scored"),
        missing_mean=_mean(c.missing_similarity for c in columns),
        pearson_mean=_mean(pearson),
        spearman_mean=_mean(spearman),
        correlation_mean=_mean(pearson + spearman),
        contingency_mean=_mean(p.score for p in pairs if p.metric == "contingency"),
        pairs_skipped=sum(p.skipped is not None for p in pairs),
        pairs_capped=capped,
    )

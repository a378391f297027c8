"""Utility of the release: does an analyst get the same answers? A workload of aggregate queries
is generated from the schema, run on the source and on the release, and compared cell by cell.

The workload is deterministic given the seed (which categorical columns group and filter) and
shaped like benchmark questions: per table a total (COUNT, and SUM / AVG / median of up to
three numeric non-key columns, perturbed or derived ones first), the same GROUP BY a
low-cardinality kept categorical column, GROUP BY a categorical column of each parent table
through a declared foreign key (joined on normalized keys, as the gold dbt staging does), and a
filtered variant (WHERE another categorical column equals its most frequent value, written as a
subquery so that no data value is ever part of the report). At most 8 queries per table and 150
in all, taken round-robin over tables so every table is represented before any table gets its
later queries.

A cell is one (group, measure) value. Its relative error is |rel - src| / max(|src|, 1e-9)
(0 when both are NULL, 1 when only one is). Group coverage is the share of the source's groups
the release still has, pooled over queries; rank correlation is Spearman's between the source
and release values of a measure over the groups both have (queries with >= 3 groups), averaged
over measures and then queries. Each query is written as it runs on one warehouse
(``raw.<table>``) and executed with ``USE src`` / ``USE rel``, so the SQL in the report is
exactly what ran; only the few result rows of each query reach Python.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
from scipy.stats import spearmanr

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.fidelity import (
    MOVING_NUMERIC_RULES,
    REL,
    REPLACED_RULES,
    SRC,
    base_kind,
    column_types,
    key_columns,
    report_tables,
    rule_of,
    table_ref,
)
from benchforge.anonymize.report.models import (
    HistogramBin,
    QueryKind,
    UtilityQuery,
    UtilitySection,
)
from benchforge.anonymize.report.relational import normalized
from benchforge.core.sql import quote

MAX_QUERIES_PER_TABLE = 8
MAX_QUERIES = 150
MAX_GROUPS = 50
MAX_MEASURE_COLUMNS = 3
MAX_FOREIGN_KEYS = 3
EPS = 1e-9
WORST = 10
HISTOGRAM_EDGES = (0.0, 1e-6, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5, 1.0, math.inf)


@dataclass(frozen=True)
class WorkloadQuery:
    id: str
    table: str
    kind: QueryKind
    sql: str
    grouped: bool
    measures: int


def _ident(name: str) -> str:
    """Quoted only when needed, so the SQL in the report stays readable."""
    if name.isidentifier() and name.islower() and name.isascii():
        return name
    return quote(name)


def _table_sql(table: str) -> str:
    return f"raw.{_ident(table)}"


# ---------------------------------------------------------------- workload


@dataclass
class _TableShape:
    table: str
    measures: list[str]
    groups: list[str]


def _group_candidates(
    con: duckdb.DuckDBPyConnection, policy: Policy, table: str, seed: int
) -> list[str]:
    """Kept, non-identifying categorical columns with 2..MAX_GROUPS values, in seeded order."""
    src_types = column_types(con, SRC, table)
    rel_types = column_types(con, REL, table)
    keys = key_columns(policy, table)
    spec = policy.tables.get(table)
    eligible = []
    for col, dtype in src_types.items():
        if col in keys or col not in rel_types or base_kind(dtype) != "categorical":
            continue
        if rule_of(policy, table, col) != "keep":
            continue
        if spec is not None and spec.columns[col].pii == "direct":
            continue
        eligible.append(col)
    if not eligible:
        return []
    ref = table_ref(SRC, table)
    approx = con.execute(
        f"SELECT {', '.join(f'approx_count_distinct({quote(c)})' for c in eligible)} FROM {ref}"
    ).fetchone()
    assert approx is not None
    small = [c for c, n in zip(eligible, approx, strict=True) if int(n) <= MAX_GROUPS * 1.5]
    if not small:
        return []
    exact = con.execute(
        f"SELECT {', '.join(f'count(DISTINCT {quote(c)})' for c in small)} FROM {ref}"
    ).fetchone()
    assert exact is not None
    chosen = [c for c, n in zip(small, exact, strict=True) if 2 <= int(n) <= MAX_GROUPS]
    random.Random(f"{seed}|{table}").shuffle(chosen)
    return chosen


def _measures(con: duckdb.DuckDBPyConnection, policy: Policy, table: str) -> list[str]:
    """Numeric non-key columns the release still carries, moved ones (perturb / derive) first.
    Generalized quasi-identifiers are left out: coarsening them to bins is the point of
    k-anonymity and is scored by fidelity; summing bin edges would only restate it here."""
    src_types = column_types(con, SRC, table)
    rel_types = column_types(con, REL, table)
    keys = key_columns(policy, table)
    cols = [
        c
        for c, dtype in src_types.items()
        if base_kind(dtype) == "numeric"
        and c not in keys
        and c in rel_types
        and rule_of(policy, table, c) not in REPLACED_RULES
        and rule_of(policy, table, c) != "generalize"
    ]
    moved = [c for c in cols if rule_of(policy, table, c) in MOVING_NUMERIC_RULES]
    return (moved + [c for c in cols if c not in moved])[:MAX_MEASURE_COLUMNS]


def _select_measures(measures: Sequence[str], prefix: str = "") -> str:
    parts = ["count(*) AS n"]
    for m in measures:
        x = prefix + _ident(m)
        parts += [
            f"sum({x}) AS {_ident('sum_' + m)}",
            f"avg({x}) AS {_ident('avg_' + m)}",
            f"quantile_cont({x}, 0.5) AS {_ident('p50_' + m)}",
        ]
    return ", ".join(parts)


def _most_frequent(table: str, column: str) -> str:
    """A scalar subquery for the column's most frequent value (ties: the smallest), evaluated
    on each side: grouping and filter columns are kept, so both sides pick the same value, and
    the SQL in the report never carries a data value."""
    c = _ident(column)
    return (
        f"(SELECT {c} FROM {_table_sql(table)} WHERE {c} IS NOT NULL "
        f"GROUP BY {c} ORDER BY count(*) DESC, {c} LIMIT 1)"
    )


def _table_queries(
    policy: Policy,
    shape: _TableShape,
    shapes: dict[str, _TableShape],
) -> list[WorkloadQuery]:
    t = shape.table
    sel = _select_measures(shape.measures)
    n_measures = 1 + 3 * len(shape.measures)
    src = _table_sql(t)
    out: list[tuple[QueryKind, str, bool]] = [("total", f"SELECT {sel} FROM {src}", False)]
    groups = shape.groups
    if groups:
        g1 = _ident(groups[0])
        out.append(("group", f"SELECT {g1} AS g, {sel} FROM {src} GROUP BY 1", True))
    fk_queries: list[tuple[QueryKind, str, bool]] = []
    spec = policy.tables.get(t)
    for fk, target in list(spec.foreign_keys.items() if spec else [])[:MAX_FOREIGN_KEYS]:
        parent, _, pk = target.partition(".")
        parent_shape = shapes.get(parent)
        if parent_shape is None or not parent_shape.groups or parent == t:
            continue
        pg = _ident(parent_shape.groups[0])
        on = f"{normalized('c.' + _ident(fk))} = {normalized('p.' + _ident(pk))}"
        fk_queries.append(
            (
                "fk_group",
                f"SELECT p.{pg} AS g, {_select_measures(shape.measures, 'c.')} "
                f"FROM {src} AS c JOIN {_table_sql(parent)} AS p ON {on} GROUP BY 1",
                True,
            )
        )
    if fk_queries:
        out.append(fk_queries.pop(0))
    if groups:
        fcol = groups[1] if len(groups) > 1 else groups[0]
        where = f"WHERE {_ident(fcol)} = {_most_frequent(t, fcol)}"
        if len(groups) > 1:
            g1 = _ident(groups[0])
            sql = f"SELECT {g1} AS g, {sel} FROM {src} {where} GROUP BY 1"
            out.append(("filter", sql, True))
        else:
            out.append(("filter", f"SELECT {sel} FROM {src} {where}", False))
    out += fk_queries
    for g in groups[1:]:
        out.append(("group", f"SELECT {_ident(g)} AS g, {sel} FROM {src} GROUP BY 1", True))
    return [
        WorkloadQuery(f"{t}#{i}", t, kind, sql, grouped, n_measures)
        for i, (kind, sql, grouped) in enumerate(out[:MAX_QUERIES_PER_TABLE])
    ]


def build_workload(
    con: duckdb.DuckDBPyConnection, policy: Policy, seed: int = 0
) -> list[WorkloadQuery]:
    """The workload for this schema and seed (see the module docstring)."""
    shapes: dict[str, _TableShape] = {}
    for table in report_tables(con, policy):
        if not column_types(con, REL, table):
            continue
        row = con.execute(f"SELECT count(*) FROM {table_ref(SRC, table)}").fetchone()
        if not row or int(row[0]) == 0:
            continue
        shapes[table] = _TableShape(
            table, _measures(con, policy, table), _group_candidates(con, policy, table, seed)
        )
    per_table = [_table_queries(policy, s, shapes) for s in shapes.values()]
    chosen: list[WorkloadQuery] = []
    for rank in range(MAX_QUERIES_PER_TABLE):
        for queries in per_table:
            if rank < len(queries) and len(chosen) < MAX_QUERIES:
                chosen.append(queries[rank])
    order = {q.id: i for i, q in enumerate(q for qs in per_table for q in qs)}
    return sorted(chosen, key=lambda q: order[q.id])


# ---------------------------------------------------------------- running and comparing


@contextmanager
def _using(con: duckdb.DuckDBPyConnection, catalog: str) -> Iterator[None]:
    row = con.execute("SELECT current_database(), current_schema()").fetchone()
    assert row is not None
    con.execute(f"USE {quote(catalog)}")
    try:
        yield
    finally:
        con.execute(f"USE {quote(str(row[0]))}.{quote(str(row[1]))}")


def _run(
    con: duckdb.DuckDBPyConnection, query: WorkloadQuery, catalog: str
) -> dict[Any, tuple[Any, ...]]:
    with _using(con, catalog):
        rows = con.execute(query.sql).fetchall()
    if not query.grouped:
        return {(): tuple(rows[0])} if rows else {}
    return {r[0]: tuple(r[1:]) for r in rows}


def _float(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def relative_error(src: float | None, rel: float | None) -> float:
    """|rel - src| / max(|src|, eps); 0 when both are NULL, 1 when only one is."""
    if src is None and rel is None:
        return 0.0
    if src is None or rel is None:
        return 1.0
    return abs(rel - src) / max(abs(src), EPS)


def _rank_correlation(pairs_per_measure: list[list[tuple[float, float]]]) -> float | None:
    values = []
    for pairs in pairs_per_measure:
        if len(pairs) < 3:
            continue
        a, b = zip(*pairs, strict=True)
        if len(set(a)) < 2 or len(set(b)) < 2:
            continue
        rho = float(spearmanr(a, b).statistic)
        if not math.isnan(rho):
            values.append(rho)
    return sum(values) / len(values) if values else None


def compare_query(
    con: duckdb.DuckDBPyConnection, query: WorkloadQuery
) -> tuple[UtilityQuery, list[float]]:
    """Run one query on both catalogs; its summary and its cells' relative errors."""
    out = UtilityQuery(
        id=query.id, table=query.table, kind=query.kind, sql=query.sql, measures=query.measures
    )
    try:
        src = _run(con, query, SRC)
    except duckdb.Error as exc:
        # Only the error's type: a source-side message could quote an original value.
        out.error = f"failed on the source ({type(exc).__name__})"
        return out, []
    out.groups_src = len(src)
    try:
        rel = _run(con, query, REL)
    except duckdb.Error as exc:
        out.error = f"failed on the release: {str(exc).splitlines()[0][:200]}"
        out.coverage = 0.0 if src else None
        return out, []
    out.groups_rel = len(rel)
    matched = [g for g in src if g in rel]
    out.groups_matched = len(matched)
    out.coverage = len(matched) / len(src) if src else None
    errors: list[float] = []
    per_measure: list[list[tuple[float, float]]] = [[] for _ in range(query.measures)]
    for g in matched:
        for j, (sv, rv) in enumerate(zip(src[g], rel[g], strict=True)):
            s, r = _float(sv), _float(rv)
            errors.append(relative_error(s, r))
            if s is not None and r is not None:
                per_measure[j].append((s, r))
    out.cells = len(errors)
    if errors:
        arr = np.asarray(errors)
        out.median_error = float(np.median(arr))
        out.p95_error = float(np.percentile(arr, 95))
        out.max_error = float(arr.max())
    if query.grouped and len(matched) >= 3:
        out.rank_correlation = _rank_correlation(per_measure)
    return out, errors


def histogram(errors: Sequence[float]) -> list[HistogramBin]:
    counts, _ = np.histogram(np.asarray(errors, dtype=float), bins=np.array(HISTOGRAM_EDGES))
    highs = [None if math.isinf(e) else e for e in HISTOGRAM_EDGES[1:]]
    return [
        HistogramBin(low=HISTOGRAM_EDGES[i], high=highs[i], count=int(c))
        for i, c in enumerate(counts)
    ]


def _badness(q: UtilityQuery) -> float:
    if q.error and q.error.startswith("failed on the release"):
        return math.inf
    return q.p95_error if q.p95_error is not None else -1.0


def utility_section(
    con: duckdb.DuckDBPyConnection, policy: Policy, *, seed: int = 0
) -> UtilitySection:
    """Generate the workload, run it on ``src`` and ``rel``, summarize the errors."""
    queries: list[UtilityQuery] = []
    errors: list[float] = []
    for wq in build_workload(con, policy, seed):
        summary, cells = compare_query(con, wq)
        queries.append(summary)
        errors += cells
    measured = [q for q in queries if q.coverage is not None]
    groups_src = sum(q.groups_src for q in measured)
    rank = [q.rank_correlation for q in queries if q.rank_correlation is not None]
    worst = sorted(
        (q for q in queries if _badness(q) > 0),
        key=lambda q: (-_badness(q), q.id),
    )[:WORST]
    arr = np.asarray(errors, dtype=float)
    return UtilitySection(
        seed=seed,
        queries=queries,
        cells=len(errors),
        median_relative_error=float(np.median(arr)) if errors else None,
        p95_relative_error=float(np.percentile(arr, 95)) if errors else None,
        group_coverage=(sum(q.groups_matched for q in measured) / groups_src)
        if groups_src
        else None,
        rank_correlation=sum(rank) / len(rank) if rank else None,
        failed_queries=sum(q.error is not None for q in queries),
        worst=[q.id for q in worst],
        error_histogram=histogram(errors) if errors else [],
    )

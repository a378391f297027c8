"""Aggregate tables kept consistent with their perturbed detail tables (``aggregate_of``).

The policy's query is written over the source schema's tables (unqualified names). It is run
twice, once with ``USE src.raw`` and once with ``USE rel.raw`` (the finished release), giving
``agg_src`` and ``agg_rel`` by key. Row i of the released aggregate table is row i of the source
table, so each row knows its source key and its released key (they differ when the key columns
are pseudonymized); each aggregate column then becomes:

- ``delta``: value + (agg_rel[released key] - agg_src[source key]): whatever discrepancy the
  source had between the table and its detail (disclosure lags, rounding, injected noise) is
  kept exactly;
- ``replace``: agg_rel[released key].

A row whose key is missing from either result keeps its value. Text keys are matched on
``upper(trim())`` (a drifted key in the aggregate table still finds its group); the query's
result must have one row per key after that normalization. Aggregate columns stored as text
numbers are parsed and written back in their own format. The aggregate columns' own rule in the
policy is ``keep``: this pass is what changes them.
"""

from __future__ import annotations

import duckdb

from benchforge.anonymize.policy.models import AggregateOf
from benchforge.anonymize.transform.numeric import parse_text_sql, render_like_sql
from benchforge.anonymize.transform.sql import (
    TransformError,
    canonical_sql,
    is_integer,
    is_numeric,
    is_text,
    qi,
)


def _run_query(
    con: duckdb.DuckDBPyConnection, catalog: str, sql: str, target: str, home: str
) -> list[str]:
    # One thread: a parallel aggregate adds floating-point values in a different order from
    # run to run, and the release must be the same bytes every time (at crm scale 5 a sum of
    # amounts differed in its last bit between two runs).
    threads = con.execute("SELECT current_setting('threads')").fetchone()
    con.execute(f"USE {catalog}.raw")
    con.execute("SET threads = 1")
    try:
        con.execute(f"CREATE OR REPLACE TABLE {target} AS {sql}")
    except duckdb.Error as exc:
        raise TransformError(f"aggregate_of query failed on {catalog}: {exc}") from exc
    finally:
        con.execute(f"USE {home}")
        con.execute(f"SET threads = {int(threads[0]) if threads else 1}")
    return [r[0] for r in con.execute(f"DESCRIBE {target}").fetchall()]


def _key_match(a: str, b: str, type_: str) -> str:
    if is_text(type_):
        return f"{canonical_sql(a)} = {canonical_sql(b)}"
    return f"{a} IS NOT DISTINCT FROM {b}"


def aggregate_select(
    con: duckdb.DuckDBPyConnection,
    table: str,
    agg: AggregateOf,
    types: dict[str, str],
    work: str,
    home: str,
) -> str:
    """Run the aggregate query on both catalogs and return the SELECT that rebuilds
    ``rel.raw.<table>`` (every column, in order, rowid order kept)."""
    for c in [*agg.key, *agg.columns]:
        if c not in types:
            raise TransformError(f"{table}.aggregate_of: no column {c!r} in the table")
    agg_src, agg_rel = f"{work}.agg_src", f"{work}.agg_rel"
    for catalog, target in (("src", agg_src), ("rel", agg_rel)):
        names = _run_query(con, catalog, agg.sql, target, home)
        missing = [c for c in [*agg.key, *agg.columns] if c not in names]
        if missing:
            raise TransformError(f"{table}.aggregate_of: the query returns no {missing}")
        keys = ", ".join(canonical_sql(qi(k)) if is_text(types[k]) else qi(k) for k in agg.key)
        dup = con.execute(
            f"SELECT count(*) FROM (SELECT {keys} FROM {target} GROUP BY ALL HAVING count(*) > 1)"
        ).fetchone()
        if dup and dup[0]:
            raise TransformError(
                f"{table}.aggregate_of: the query returns {dup[0]} keys more than once on "
                f"{catalog} (after upper(trim()) of text keys); group by the normalized key"
            )

    src_keys = ", ".join(f"{qi(k)} AS {qi('__src_' + k)}" for k in agg.key)
    aligned = (
        f"SELECT r.*, s.* FROM (SELECT rowid AS __anon_rid, * FROM rel.raw.{qi(table)}) r "
        f"POSITIONAL JOIN (SELECT {src_keys} FROM src.raw.{qi(table)}) s"
    )
    on_src = " AND ".join(
        _key_match(f"gs.{qi(k)}", f"a.{qi('__src_' + k)}", types[k]) for k in agg.key
    )
    on_rel = " AND ".join(_key_match(f"gr.{qi(k)}", f"a.{qi(k)}", types[k]) for k in agg.key)
    matched = "coalesce(gs.__anon_found AND gr.__anon_found, false)"
    exprs: list[str] = []
    for c, type_ in types.items():
        ref = f"a.{qi(c)}"
        if c not in agg.columns:
            exprs.append(ref)
            continue
        rel_v, src_v = f"gr.{qi(c)}::DOUBLE", f"gs.{qi(c)}::DOUBLE"
        if is_text(type_):
            base = parse_text_sql(ref)
        elif is_numeric(type_):
            base = f"{ref}::DOUBLE"
        else:
            raise TransformError(f"{table}.{c}: aggregate_of needs a numeric or text column")
        new = f"{base} + ({rel_v} - {src_v})" if agg.mode == "delta" else rel_v
        if is_text(type_):
            new = render_like_sql(ref, new)
        elif is_integer(type_):
            new = f"round({new})"
        exprs.append(
            f"CAST(CASE WHEN {matched} AND {ref} IS NOT NULL THEN {new} ELSE {ref} END "
            f"AS {type_}) AS {qi(c)}"
        )
    return (
        f"SELECT {', '.join(exprs)} FROM ({aligned}) a "
        f"LEFT JOIN (SELECT *, true AS __anon_found FROM {agg_src}) gs ON {on_src} "
        f"LEFT JOIN (SELECT *, true AS __anon_found FROM {agg_rel}) gr ON {on_rel} "
        "ORDER BY a.__anon_rid"
    )

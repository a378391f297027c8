"""Builds the clean ``_gen.<table>`` tables, chunk by chunk, in FK order."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import duckdb

from benchforge.synthesis.engine.columns import (
    BuildContext,
    Step,
    chain,
    column_steps,
    topological_columns,
)
from benchforge.synthesis.engine.random import Streams
from benchforge.synthesis.engine.sql import DUCKDB_TYPES, quote
from benchforge.synthesis.spec.models import Table

# SCD helper columns kept in _gen (stressors need them) and dropped from raw.
SCD_HIDDEN = ("_entity_rid", "_version", "_versions")
ChunkDone = Callable[[int], None]


def _final_select(table: Table, extra: list[str]) -> str:
    cols = ", ".join(
        f"CAST({quote(c.name)} AS {DUCKDB_TYPES[c.type]}) AS {quote(c.name)}" for c in table.columns
    )
    hidden = "".join(f", {c}" for c in extra)
    return f"_rid{hidden}, {cols}"


def _steps(table: Table, ctx: BuildContext, scd_entity_cols: set[str]) -> list[Step]:
    steps: list[Step] = []
    for col in topological_columns(table):
        col_steps = column_steps(table, col, ctx)
        if col.name in scd_entity_cols:
            # The current version agrees with the entity table.
            last = col_steps[-1]
            expr = last.columns[col.name]
            entity_value = f"p.{quote('_e_' + col.name)}"
            last.columns[col.name] = (
                f"(CASE WHEN p._version = p._versions - 1 THEN {entity_value} ELSE {expr} END)"
            )
        steps += col_steps
    return steps


def plain_table_query(table: Table, ctx: BuildContext) -> str:
    """The SELECT producing rows ``{lo} <= _rid < {hi}`` (format placeholders) of a table."""
    body = chain("SELECT range AS _rid FROM range({lo}, {hi})", _steps(table, ctx, set()))
    return f"SELECT {_final_select(table, [])} FROM ({body}) q"


def materialize(
    con: duckdb.DuckDBPyConnection,
    target: str,
    select: str,
    rows: int,
    chunk_rows: int,
    on_chunk: ChunkDone,
) -> None:
    """Creates ``target`` from a chunked query, one bounded chunk at a time."""
    for lo in range(0, rows, chunk_rows):
        hi = min(rows, lo + chunk_rows)
        sql = select.format(lo=lo, hi=hi)
        if lo == 0:
            con.execute(f"CREATE OR REPLACE TABLE {target} AS {sql}")
        else:
            con.execute(f"INSERT INTO {target} {sql}")
        on_chunk(hi - lo)
    if rows == 0:
        con.execute(f"CREATE OR REPLACE TABLE {target} AS {select.format(lo=0, hi=0)}")


def scd_table_query(
    con: duckdb.DuckDBPyConnection, table: Table, ctx: BuildContext
) -> tuple[str, int]:
    """Explodes each entity into 1..max versions (``_gen.<table>__base``); returns the chunked
    SELECT of the history rows and their count. Drop the base with ``drop_scd_base``."""
    assert table.scd is not None
    scd = table.scd
    entity = ctx.spec.table_map[scd.entity]
    cal_end = max(c.end for c in ctx.spec.calendars.values())
    versions = Streams(ctx.seed, table.name, "_versions", "e._rid")
    p = 1.0 / scd.versions.mean
    # Geometric number of versions (mean 1/p), capped at max.
    count = (
        f"least({scd.versions.max}, 1 + CAST(floor(ln(1.0 - {versions.u()}) / ln({1.0 - p!r}))"
        " AS BIGINT))"
        if p < 1
        else "1"
    )
    shared = sorted(set(entity.column_map) & set(table.column_map) - {table.primary_key})
    copied = {name for c in table.columns for name in c.generator.parent_columns(scd.entity_key)}
    entity_cols = "".join(
        f", e.{quote(c)} AS {quote('_e_' + c)}" for c in sorted(set(shared) | copied)
    )
    base = f"_gen.{quote(table.name + '__base')}"
    con.execute(
        f"""CREATE OR REPLACE TABLE {base} AS
        SELECT row_number() OVER (ORDER BY e._rid, v.version) - 1 AS _rid,
               e._rid AS _entity_rid, v.version AS _version, e._n AS _versions,
               e.{quote(entity.primary_key)} AS _entity_key,
               CAST(e.{quote(scd.start_from)} AS TIMESTAMP) AS _start{entity_cols}
        FROM (SELECT *, {count} AS _n FROM _gen.{quote(entity.name)} e) e,
             LATERAL (SELECT range AS version FROM range(e._n)) v"""
    )
    rows = con.execute(f"SELECT count(*) FROM {base}").fetchone()[0]  # type: ignore[index]
    validity = _validity_columns(table, ctx, cal_end)
    steps = [*_steps(table, ctx, set(shared)), Step(validity)]
    body = chain(f"SELECT * FROM {base} WHERE _rid >= {{lo}} AND _rid < {{hi}}", steps)
    extra = [
        *SCD_HIDDEN,
        f"_entity_key AS {quote(scd.entity_key)}",
        "valid_from",
        "valid_to",
        "is_current",
    ]
    return f"SELECT {_final_select(table, extra)} FROM ({body}) q", int(rows)


def drop_scd_base(con: duckdb.DuckDBPyConnection, table: Table) -> None:
    con.execute(f"DROP TABLE IF EXISTS _gen.{quote(table.name + '__base')}")


def _validity_columns(table: Table, ctx: BuildContext, cal_end: object) -> dict[str, str]:
    """valid_from of version v = start + v*gap + jitter(v), with jitter < gap/2 (monotonic)."""
    assert table.scd is not None
    end = datetime.combine(cal_end, datetime.min.time())  # type: ignore[arg-type]
    mean_days = table.scd.mean_days_between
    gap = (
        f"least({mean_days!r}, greatest(1.0, date_diff('day', p._start, "
        f"TIMESTAMP '{end.isoformat(sep=' ')}')) / p._versions)"
    )

    def start_of(version: str) -> str:
        jitter = Streams(ctx.seed, table.name, "_valid_from", f"p._entity_rid * 64 + {version}")
        jitter_days = f"CASE WHEN {version} = 0 THEN 0 ELSE {jitter.u()} * {gap} * 0.5 END"
        days = f"({version} * {gap} + {jitter_days})"
        return f"(p._start + to_seconds(CAST(floor({days} * 86400) AS BIGINT)))"

    return {
        "valid_from": start_of("p._version"),
        "valid_to": (
            "CASE WHEN p._version = p._versions - 1 THEN NULL "
            f"ELSE {start_of('(p._version + 1)')} END"
        ),
        "is_current": "(p._version = p._versions - 1)",
    }


def build_derived_table(con: duckdb.DuckDBPyConnection, table: Table) -> int:
    assert table.derived_sql is not None
    cols = ", ".join(
        f"CAST({quote(c.name)} AS {DUCKDB_TYPES[c.type]}) AS {quote(c.name)}" for c in table.columns
    )
    con.execute("SET search_path = '_gen'")
    try:
        con.execute(
            f"""CREATE OR REPLACE TABLE _gen.{quote(table.name)} AS
            SELECT row_number() OVER (ORDER BY {quote(table.primary_key)}) - 1 AS _rid, {cols}
            FROM ({table.derived_sql}) d"""
        )
    finally:
        con.execute("SET search_path = 'main'")
    count = con.execute(f"SELECT count(*) FROM _gen.{quote(table.name)}").fetchone()
    return int(count[0]) if count else 0

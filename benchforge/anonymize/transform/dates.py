"""Date shifting by entity: every date of one entity moves by the same keyed offset.

The offset of an entity is drawn from HMAC(k, canonical entity value) (k a sub-key of the
secret) among the *non-zero* offsets in [-max_days, max_days] (whole weeks when
``whole_weeks``, which keeps weekdays): never 0, so no entity keeps its true dates. The canonical
is ``upper(trim(v))`` of the source value, and the offset does not depend on the table, so one
account's dates move together in every table keyed by that account: intervals inside an entity
(created -> closed, start -> end) are unchanged. A row whose entity is NULL gets an offset keyed
by its own noise key. Columns of one table sharing an entity and parameters share one offset
table.

``coarsen`` truncates the shifted value to a unit (``date_trunc``): an exact instant is often a
key on its own (a contact's creation second), while the hour or day, moved with its entity,
keeps order (ties allowed), intervals to the unit and seasonality. ``max_days: 0`` only
truncates (no offset table, no join).
"""

from __future__ import annotations

import duckdb

from benchforge.anonymize.policy.models import ShiftDates
from benchforge.anonymize.transform.sql import (
    KEY,
    SRC,
    ColumnSQL,
    TransformError,
    canonical_sql,
    col,
    hex_int_sql,
    hmac_sql,
    is_temporal,
    qi,
    uniform_sql,
)


def _steps(rule: ShiftDates) -> tuple[int, int]:
    """(offsets on each side of 0, days per step)."""
    if rule.whole_weeks:
        weeks = rule.max_days // 7
        if weeks == 0:
            raise TransformError(
                f"shift_dates: max_days {rule.max_days} < 7 leaves no whole-week offset"
            )
        return weeks, 7
    return rule.max_days, 1


def _choices(rule: ShiftDates) -> int:
    """How many offsets an entity draws from: both signs, or one side only."""
    side, _ = _steps(rule)
    return 2 * side if rule.direction == "both" else side


def offset_from_index(index_sql: str, rule: ShiftDates) -> str:
    """Days for an index in [0, choices): -side..-1, then 1..side (later: 1..side; earlier:
    -side..-1), times the step."""
    side, step = _steps(rule)
    if rule.direction == "later":
        return f"(({index_sql}) + 1) * {step}"
    if rule.direction == "earlier":
        return f"(({index_sql}) - {side}) * {step}"
    return (
        f"(CASE WHEN ({index_sql}) < {side} THEN ({index_sql}) - {side} "
        f"ELSE ({index_sql}) - {side - 1} END) * {step}"
    )


def build_offsets(
    con: duckdb.DuckDBPyConnection,
    work_table: str,
    source_tables: str | list[str],
    entity: str,
    rule: ShiftDates,
    key: bytes,
) -> None:
    """The offset of every distinct canonical entity value of the source tables (nothing to
    build when the rule only coarsens). An entity's offset depends on its value, the rule and
    the key only, so one table serves every source table the rule shifts."""
    if rule.max_days == 0:
        return
    tables = [source_tables] if isinstance(source_tables, str) else source_tables
    entities = " UNION ALL ".join(
        f"SELECT {canonical_sql(qi(entity))} AS canon FROM {table}" for table in tables
    )
    index = f"{hex_int_sql('h', 1, 15)} % {_choices(rule)}"
    con.execute(
        f"""CREATE OR REPLACE TABLE {work_table} AS
            SELECT canon, {offset_from_index(index, rule)} AS days
            FROM (SELECT canon, {hmac_sql(key, "canon")} AS h
                  FROM (SELECT DISTINCT canon FROM ({entities}))
                  WHERE canon IS NOT NULL)"""
    )


def shift_column(
    column: str, type_: str, rule: ShiftDates, work_table: str, alias: str, salt: str
) -> ColumnSQL:
    """The shifted column, joined to its entity's offset table (built by
    :func:`build_offsets`); ``salt`` keys the offsets of rows without an entity."""
    if not is_temporal(type_):
        raise TransformError(f"{column}: shift_dates needs a DATE or TIMESTAMP column, not {type_}")
    x = col(SRC, column)
    if rule.max_days == 0:
        return ColumnSQL(expr=_coarsened(x, type_, rule))
    row_index = f"floor({uniform_sql(salt, f'{SRC}.{KEY}')} * {_choices(rule)})::BIGINT"
    days = f"coalesce({alias}.days, {offset_from_index(row_index, rule)})"
    if rule.boundary is not None and rule.boundary_column is not None:
        days = _kept_on_side(days, col(SRC, rule.boundary_column), rule.boundary.isoformat(" "))
    shifted = f"{x} + {days}::INTEGER" if type_ == "DATE" else f"{x} + to_days({days}::INTEGER)"
    join = (
        f"LEFT JOIN {work_table} {alias} ON {alias}.canon = {canonical_sql(col(SRC, rule.entity))}"
    )
    return ColumnSQL(expr=_coarsened(f"({shifted})", type_, rule), joins=[join])


def _kept_on_side(days: str, at: str, boundary: str) -> str:
    """The row's offset, negated when it would carry ``at`` across ``boundary`` (NULL ``at``:
    unchanged). A timestamp compared with a DATE boundary column is cast, so a DATE column
    works as well."""
    b = f"TIMESTAMP '{boundary}'"
    t = f"CAST({at} AS TIMESTAMP)"
    return (
        f"(CASE WHEN ({t} < {b}) <> ({t} + to_days(({days})::INTEGER) < {b}) "
        f"THEN -({days}) ELSE {days} END)"
    )


def _coarsened(value: str, type_: str, rule: ShiftDates) -> str:
    if rule.coarsen is None:
        return f"CAST({value} AS {type_})"
    return f"CAST(date_trunc('{rule.coarsen}', {value}) AS {type_})"

"""A profile of imported tables, and the expectations it implies.

An imported dataset has no spec to derive its checks from, so they are derived from the data:
the columns and their DuckDB types, the row count, NOT NULL where the source has no NULL,
uniqueness of the columns that are unique and look like keys, min / max of numbers and dates,
and the value set of low-cardinality text. The expectations are plain records
(:class:`Expectation`, stored as ``validation/expectations.json``) so a later copy of the data
can be validated against the same contract (:func:`~.validate.validate_warehouse`); they become
Great Expectations expectations only when run.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Literal

import duckdb
from pydantic import BaseModel, Field

from benchforge.core.sql import literal, quote

INTEGER_TYPES = {
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
}
# Compared as DOUBLE: pandas holds them as float64 (DECIMAL) or cannot hold them as int64.
FLOAT_TYPES = {"FLOAT", "DOUBLE", "UBIGINT", "HUGEINT", "UHUGEINT"}
NAN_TYPES = {"FLOAT", "DOUBLE"}
TIMESTAMP_TYPES = {"TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS"}
TIMESTAMPTZ = "TIMESTAMP WITH TIME ZONE"
KEY_TYPES = INTEGER_TYPES | {"BIGINT", "VARCHAR", "UUID"}
TEXT_TYPES = {"VARCHAR"}
KEY_WORDS = {"id", "key", "uuid", "guid", "code", "pk", "sku"}
VALUE_SET_MAX = 20  # at most this many distinct values ...
VALUE_SET_REPEAT = 2  # ... each seen this many times on average: a category, not free text
# approx_count_distinct (HyperLogLog, ~2% standard error) decides where an exact count is needed:
# a key-like column may be unique unless the estimate is this far below its non-NULL count, ...
UNIQUE_MARGIN = 0.2
CATEGORY_ESTIMATE_MAX = 2 * VALUE_SET_MAX  # ... text may be a category up to this estimate

Kind = Literal["columns", "row_count", "type", "not_null", "unique", "between", "in_set"]
Bound = int | float | str  # a number, or an ISO date / timestamp


class ColumnProfile(BaseModel):
    name: str
    type: str = Field(description="The DuckDB type, as duckdb_columns() spells it.")
    nulls: int
    nans: int = Field(default=0, description="NaN values (floating point columns).")
    distinct: int = Field(description="Distinct non-NULL values (see distinct_exact).")
    distinct_exact: bool = Field(
        default=True,
        description=(
            "distinct is exact: counted for every column it decides an expectation for (a "
            "key-like column that may be unique, text that may be a category); elsewhere it is "
            "DuckDB's approx_count_distinct."
        ),
    )
    min: Bound | None = None
    max: Bound | None = None
    values: list[str] | None = Field(default=None, description="Low-cardinality text only.")
    declared: bool = Field(
        default=False, description="The type was declared (--column-types), not derived."
    )


class TableProfile(BaseModel):
    name: str
    rows: int
    columns: list[ColumnProfile]


class Expectation(BaseModel):
    """One check on one table (and column); which fields are set depends on ``kind``."""

    kind: Kind
    table: str
    column: str | None = None
    columns: list[str] | None = None  # columns: the table's columns, in order
    rows: int | None = None  # row_count
    type: str | None = None  # type
    min: Bound | None = None  # between
    max: Bound | None = None
    values: list[str] | None = None  # in_set

    def expected(self) -> str:
        """What the check expects, in a few words (the report's "expected")."""
        return {
            "columns": f"columns {self.columns}",
            "row_count": f"{self.rows} rows",
            "type": f"{self.type}",
            "not_null": "no NULLs",
            "unique": "no duplicates",
            "between": f"between {self.min} and {self.max}",
            "in_set": f"in {self.values}",
        }[self.kind]

    def describe(self) -> str:
        where = f"{self.table}.{self.column}" if self.column else self.table
        return {
            "columns": f"{where} has the columns {self.columns}, in this order",
            "row_count": f"{where} has {self.rows} rows",
            "type": f"{where} has DuckDB type {self.type}",
            "not_null": f"{where} is never NULL",
            "unique": f"{where} has no duplicate values",
            "between": f"{where} is between {self.min} and {self.max}",
            "in_set": f"{where} is one of {self.values}",
        }[self.kind]


class ProfileSuite(BaseModel):
    """What an import found (``profile``) and what it therefore expects (``expectations``)."""

    dataset: str
    profile: list[TableProfile]
    expectations: list[Expectation]

    def for_table(self, table: str) -> list[Expectation]:
        return [e for e in self.expectations if e.table == table]


def base_type(duck_type: str) -> str:
    """``DECIMAL(10,2)`` -> ``DECIMAL``; other types as they are."""
    return duck_type.split("(", 1)[0].strip()


def is_bounded(duck_type: str) -> bool:
    """Whether min / max are profiled and checked for a column of this type."""
    base = base_type(duck_type)
    return base in INTEGER_TYPES | FLOAT_TYPES | TIMESTAMP_TYPES | {"DECIMAL", "DATE", TIMESTAMPTZ}


def is_temporal(duck_type: str) -> bool:
    return base_type(duck_type) in TIMESTAMP_TYPES | {"DATE", TIMESTAMPTZ}


def value_sql(column: str, duck_type: str) -> str:
    """The column as profiled and as validated: numbers pandas holds as float64 cast to DOUBLE
    (so the bounds and the values checked are the same doubles), timestamps to a plain UTC
    TIMESTAMP (pandas compares them with naive datetimes)."""
    base, col = base_type(duck_type), quote(column)
    if base in FLOAT_TYPES or base == "DECIMAL":
        return f"CAST({col} AS DOUBLE)"
    if base == TIMESTAMPTZ:
        return f"timezone('UTC', {col})"
    if base in TIMESTAMP_TYPES:
        return f"CAST({col} AS TIMESTAMP)"
    return col


def looks_like_key(column: str) -> bool:
    """``id``, ``customer_id``, ``customerId``, ``order_key``, ``sku``, ``country_code``..."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", column).lower()
    words = [w for w in re.split(r"[^0-9a-z]+", snake) if w]
    return bool(words) and words[-1] in KEY_WORDS


def column_types(
    con: duckdb.DuckDBPyConnection, database: str, schema: str
) -> dict[str, dict[str, str]]:
    """table -> column -> DuckDB type, in column order."""
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        f"WHERE database_name = {literal(database)} AND schema_name = {literal(schema)} "
        "ORDER BY table_name, column_index"
    ).fetchall()
    types: dict[str, dict[str, str]] = {}
    for table, column, data_type in rows:
        types.setdefault(str(table), {})[str(column)] = str(data_type)
    return types


def profile_table(
    con: duckdb.DuckDBPyConnection, source: str, name: str, types: dict[str, str]
) -> TableProfile:
    """Counts, estimated distinct counts and bounds of every column of ``source`` (a qualified
    table) in one scan; then, in a second scan, exact distinct counts of the columns where the
    count decides an expectation; then the value sets of the low-cardinality text columns.
    Exact distinct counts hold a hash table per column: counting only where it matters keeps
    the profile's time and memory near one plain scan's."""
    parts = ["count(*)"]
    for column, duck_type in types.items():
        col = quote(column)
        parts += [f"count({col})", f"approx_count_distinct({col})"]
        if base_type(duck_type) in NAN_TYPES:
            parts.append(f"count(*) FILTER (WHERE isnan({col}))")
        if is_bounded(duck_type):
            value = value_sql(column, duck_type)
            parts += [f"min({value})", f"max({value})"]
    row = con.execute(f"SELECT {', '.join(parts)} FROM {source}").fetchone()
    assert row is not None
    rows, i = int(row[0]), 1
    columns = []
    for column, duck_type in types.items():
        nonnull, estimate = int(row[i]), int(row[i + 1])
        i += 2
        nans = 0
        if base_type(duck_type) in NAN_TYPES:
            nans = int(row[i])
            i += 1
        low = high = None
        if is_bounded(duck_type):
            low, high = _bound(row[i]), _bound(row[i + 1])
            i += 2
        columns.append(
            ColumnProfile(
                name=column,
                type=duck_type,
                nulls=rows - nonnull,
                nans=nans,
                distinct=min(estimate, nonnull),
                distinct_exact=nonnull == 0,
                min=low,
                max=high,
            )
        )
    _count_distinct(con, source, [c for c in columns if _distinct_decides(c, rows)])
    for c in columns:
        if (
            base_type(c.type) in TEXT_TYPES
            and c.distinct_exact
            and 0 < c.distinct <= VALUE_SET_MAX
            and rows - c.nulls >= VALUE_SET_REPEAT * c.distinct
            and not looks_like_key(c.name)
        ):
            c.values = [
                str(v[0])
                for v in con.execute(
                    f"SELECT DISTINCT {quote(c.name)} FROM {source} "
                    f"WHERE {quote(c.name)} IS NOT NULL ORDER BY 1"
                ).fetchall()
            ]
    return TableProfile(name=name, rows=rows, columns=columns)


def _distinct_decides(c: ColumnProfile, rows: int) -> bool:
    """Whether the column's exact distinct count may decide an expectation, given its
    estimate: uniqueness of a key-like column, a value set of text."""
    nonnull = rows - c.nulls
    if c.distinct_exact:
        return False
    key = base_type(c.type) in KEY_TYPES and looks_like_key(c.name)
    if key and c.distinct >= (1 - UNIQUE_MARGIN) * nonnull:
        return True
    return base_type(c.type) in TEXT_TYPES and c.distinct <= CATEGORY_ESTIMATE_MAX


def _count_distinct(
    con: duckdb.DuckDBPyConnection, source: str, columns: list[ColumnProfile]
) -> None:
    """Replaces the estimates of ``columns`` by exact counts, in one scan."""
    if not columns:
        return
    counts = ", ".join(f"count(DISTINCT {quote(c.name)})" for c in columns)
    row = con.execute(f"SELECT {counts} FROM {source}").fetchone()
    assert row is not None
    for c, exact in zip(columns, row, strict=True):
        c.distinct, c.distinct_exact = int(exact), True


def _bound(value: object) -> Bound | None:
    """A min / max as stored: ints stay ints, non-finite doubles are no bound, dates and
    timestamps become ISO text."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime | date):
        return value.isoformat()
    return None


def expectations_for(profile: TableProfile) -> list[Expectation]:
    """The expectations one table's profile implies (see the module docstring)."""
    t = profile.name
    found = [
        Expectation(kind="columns", table=t, columns=[c.name for c in profile.columns]),
        Expectation(kind="row_count", table=t, rows=profile.rows),
    ]
    for c in profile.columns:
        found.append(Expectation(kind="type", table=t, column=c.name, type=c.type))
        nonnull = profile.rows - c.nulls
        if nonnull == 0:
            continue
        if c.nulls == 0 and c.nans == 0:  # pandas, hence GE, reads NaN as missing
            found.append(Expectation(kind="not_null", table=t, column=c.name))
        unique = c.distinct_exact and c.distinct == nonnull
        if unique and base_type(c.type) in KEY_TYPES and looks_like_key(c.name):
            found.append(Expectation(kind="unique", table=t, column=c.name))
        if c.min is not None and c.max is not None:
            found.append(Expectation(kind="between", table=t, column=c.name, min=c.min, max=c.max))
        if c.values is not None:
            found.append(Expectation(kind="in_set", table=t, column=c.name, values=c.values))
    return found


def profile_warehouse(
    con: duckdb.DuckDBPyConnection,
    dataset: str,
    database: str,
    schema: str = "raw",
    *,
    declared: dict[str, dict[str, str]] | None = None,
) -> ProfileSuite:
    """The profile and expectations of every table of ``<database>.<schema>``; ``declared``
    (table -> column -> type): the columns whose type a declaration file gave."""
    profiles = [
        profile_table(con, f"{quote(database)}.{quote(schema)}.{quote(table)}", table, types)
        for table, types in sorted(column_types(con, database, schema).items())
    ]
    for profile in profiles:
        for column in profile.columns:
            column.declared = column.name in (declared or {}).get(profile.name, {})
    return ProfileSuite(
        dataset=dataset,
        profile=profiles,
        expectations=[e for p in profiles for e in expectations_for(p)],
    )

"""Source schemas: other names for a dataset's ``raw`` tables, so a maintainer's dbt project
reads its sources where it always has (``jaffle_shop.customers``, ``public.orders``).

Every dataset keeps its tables in schema ``raw`` of ``warehouse.duckdb``. A source schema ``S``
adds schema ``S`` to the warehouse with one view per table, ``S.t`` = ``select * from raw.t``;
the dataset's ``manifest.json`` lists the schemas under ``source_schemas`` so its readers (an
anonymized release re-creates them) know the views are there. Views are not tables: Parquet
files, checksums and the profile stay per ``raw`` table.

A view's SQL names ``raw.t`` with no catalog, and DuckDB binds a view's names in the catalog
the view lives in: the view reads its own file's ``raw.t`` whatever alias the file is attached
under (``gold``, ``src``, ...), even when the attaching connection has a ``raw.t`` of its own.
A catalog naming the file (``gold.raw.t``) would break under any other alias. The one alias it
cannot take is ``raw`` itself: ``raw.t`` is then ambiguous (catalog or schema), as it is for
any query that reads the tables as ``raw.t``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import duckdb

from benchforge.core.sql import quote

RAW = "raw"
FIELD = "source_schemas"  # the manifest.json field
# Schemas a view schema may not take: the data's own, DuckDB's default and its system schemas.
RESERVED = frozenset({RAW, "main", "information_schema", "pg_catalog", "temp"})
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_source_schemas(schemas: Iterable[str]) -> list[str]:
    """``schemas`` as given, once each, or a :class:`ValueError` naming the one at fault: each
    is an identifier dbt and DuckDB read unquoted (a letter or ``_``, then letters, digits,
    ``_``), not a reserved schema (``raw``, ``main``, ...), and no two are the same (DuckDB
    names are case-insensitive)."""
    seen: dict[str, str] = {}
    for schema in schemas:
        if not isinstance(schema, str) or not IDENTIFIER.match(schema):
            raise ValueError(
                f"source schema {schema!r} is not an identifier: use a letter or '_', then "
                "letters, digits or '_'"
            )
        key = schema.lower()
        if key in RESERVED:
            why = (
                "the dataset's tables are already there"
                if key == RAW
                else "a schema DuckDB uses itself"
            )
            raise ValueError(
                f"source schema {schema!r} cannot hold the views: {why} (give the schema your "
                "dbt sources read, e.g. `shop` for `schema: shop`)"
            )
        if key in seen:
            raise ValueError(f"source schema {schema!r} is given twice (as {seen[key]!r})")
        seen[key] = schema
    return list(seen.values())


def view_sql(schema: str, table: str, catalog: str | None = None) -> str:
    """``CREATE VIEW [catalog.]schema.table AS SELECT * FROM raw.table``: the view's query
    never names a catalog (see the module doc)."""
    where = f"{quote(catalog)}." if catalog else ""
    return (
        f"CREATE VIEW {where}{quote(schema)}.{quote(table)} AS "
        f"SELECT * FROM {quote(RAW)}.{quote(table)}"
    )


def add_source_views(
    warehouse: Path, schemas: Sequence[str], tables: Sequence[str] | None = None
) -> None:
    """Adds schema ``S`` with a view ``S.t`` over ``raw.t`` for every ``S`` of ``schemas``
    and ``t`` of ``tables`` (default: every table of ``raw``) to the DuckDB file
    ``warehouse``, opened on its own so that nothing else attached can be bound by mistake.
    ``schemas`` must pass :func:`check_source_schemas`; a DuckDB error is raised as it is.
    No schema: the file is not opened (not a byte of it changes)."""
    schemas = check_source_schemas(schemas)
    if not schemas:
        return
    with duckdb.connect(str(warehouse)) as con:
        if tables is None:
            tables = raw_tables(con)
        for schema in schemas:
            con.execute(f"CREATE SCHEMA {quote(schema)}")
            for table in tables:
                con.execute(view_sql(schema, table))
        con.execute("CHECKPOINT")


def raw_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables (not views) of schema ``raw`` of the connection's own database."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = ? ORDER BY table_name",
        [RAW],
    ).fetchall()
    return [str(r[0]) for r in rows]


def read_source_schemas(manifest: Path) -> list[str]:
    """The ``source_schemas`` a dataset's ``manifest.json`` lists (none when it has no such
    field, as a synthesized dataset's). A :class:`ValueError` names the file when the field
    is not a list of valid schemas."""
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError) as err:
        raise ValueError(f"{manifest}: cannot read the manifest: {err}") from None
    value = data.get(FIELD, []) if isinstance(data, dict) else []
    if not isinstance(value, list):
        raise ValueError(f"{manifest}: {FIELD} must be a list of schema names, not {value!r}")
    try:
        return check_source_schemas(value)
    except ValueError as err:
        raise ValueError(f"{manifest}: {FIELD}: {err}") from None

"""The working copy: the dataset's tables copied, in their order, into an in-memory DuckDB,
where the perturbations run before each logical database is written out."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

from benchforge.core.sql import literal, quote

DOCUMENT_COLUMN = "doc"


def dataset_columns(warehouse: Path) -> dict[str, list[str]]:
    """Table -> column names of the warehouse's ``raw`` schema."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'raw' ORDER BY table_name, ordinal_position"
        ).fetchall()
    columns: dict[str, list[str]] = {}
    for table, column in rows:
        columns.setdefault(table, []).append(column)
    return columns


def open_working_copy(warehouse: Path, tables: Iterable[str]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    con.execute("SET preserve_insertion_order = true")
    con.execute(f"ATTACH {literal(str(warehouse))} AS source (READ_ONLY)")
    for table in tables:
        con.execute(f"CREATE TABLE {quote(table)} AS SELECT * FROM source.raw.{quote(table)}")
    con.execute("DETACH source")
    return con


def column_types(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, str]:
    rows = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return {name: kind for name, kind in rows}


def select_rows(table: str, as_documents: bool) -> str:
    """The table's rows in order, or one JSON document (column ``doc``) per row."""
    if as_documents:
        document = f"CAST(to_json(t) AS JSON) AS {DOCUMENT_COLUMN}"
        return f"SELECT {document} FROM {quote(table)} AS t ORDER BY rowid"
    return f"SELECT * FROM {quote(table)} ORDER BY rowid"

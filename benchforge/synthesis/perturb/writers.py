"""Writing one logical database from the working copy: a DuckDB file or a SQLite file. Each
returns the column types as written there (for ``schema.md`` and the record)."""

from __future__ import annotations

import datetime as dt
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from benchforge.core.sql import literal, quote
from benchforge.synthesis.perturb.working import column_types, select_rows

_BATCH = 10_000


def write_duckdb(
    con: duckdb.DuckDBPyConnection, path: Path, tables: dict[str, bool]
) -> dict[str, dict[str, str]]:
    """``tables``: name -> written as JSON documents."""
    path.unlink(missing_ok=True)
    con.execute(f"ATTACH {literal(str(path))} AS target")
    try:
        for table, as_documents in tables.items():
            con.execute(
                f"CREATE TABLE target.main.{quote(table)} AS {select_rows(table, as_documents)}"
            )
        written = {
            table: dict(
                con.execute(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE "
                    "table_catalog = 'target' AND table_name = ? ORDER BY ordinal_position",
                    [table],
                ).fetchall()
            )
            for table in tables
        }
    finally:
        con.execute("DETACH target")
    return written


def sqlite_type(duckdb_type: str) -> str:
    kind = duckdb_type.upper()
    if kind in ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "BOOLEAN", "UBIGINT"):
        return "INTEGER"
    if kind in ("DOUBLE", "FLOAT", "REAL") or kind.startswith("DECIMAL"):
        return "REAL"
    return "TEXT"


def sqlite_value(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return value


def write_sqlite(
    con: duckdb.DuckDBPyConnection, path: Path, tables: list[str]
) -> dict[str, dict[str, str]]:
    path.unlink(missing_ok=True)
    written: dict[str, dict[str, str]] = {}
    target = sqlite3.connect(path)
    try:
        for table in tables:
            types = {c: sqlite_type(t) for c, t in column_types(con, table).items()}
            columns = ", ".join(f"{quote(c)} {t}" for c, t in types.items())
            target.execute(f"CREATE TABLE {quote(table)} ({columns})")
            insert = f"INSERT INTO {quote(table)} VALUES ({', '.join('?' * len(types))})"
            cursor = con.execute(select_rows(table, as_documents=False))
            while batch := cursor.fetchmany(_BATCH):
                target.executemany(insert, [tuple(map(sqlite_value, row)) for row in batch])
            written[table] = types
        target.commit()
    finally:
        target.close()
    return written

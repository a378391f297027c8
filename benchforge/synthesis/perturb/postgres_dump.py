"""A PostgreSQL logical database as a SQL script (``CREATE TABLE`` + ``INSERT``), and loading
that script into a template database on a server, which each trial then copies
(:mod:`benchforge.core.engines.postgres_trials`). Documents go to a JSONB column."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.conninfo import make_conninfo

from benchforge.core.errors import BenchforgeError
from benchforge.core.sql import quote
from benchforge.synthesis.perturb.working import column_types, select_rows

_ROWS_PER_INSERT = 500
_TYPES = {
    "VARCHAR": "text",
    "BIGINT": "bigint",
    "INTEGER": "integer",
    "SMALLINT": "smallint",
    "TINYINT": "smallint",
    "DOUBLE": "double precision",
    "FLOAT": "real",
    "BOOLEAN": "boolean",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "TIME": "time",
    "JSON": "jsonb",
}


class PostgresLoadError(BenchforgeError):
    """A perturbed database's script could not be loaded into its template database."""


def template_name(logical: str, digest_of: str) -> str:
    """The template database's name: lower-case, at most 63 characters, a function of the
    logical name and of what made its content (so two perturbations never share one)."""
    digest = hashlib.sha256(digest_of.encode()).hexdigest()[:12]
    return f"bfp_{logical.lower()[:40]}_{digest}"


def postgres_type(duckdb_type: str) -> str:
    kind = duckdb_type.upper()
    if kind.startswith("DECIMAL"):
        return kind.replace("DECIMAL", "numeric")
    return _TYPES.get(kind, "text")


def pg_literal(value: Any, pg_type: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"'{value!r}'::double precision"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return f"'{value.isoformat()}'::{pg_type}"
    text = "'" + str(value).replace("'", "''") + "'"
    return f"{text}::jsonb" if pg_type == "jsonb" else text


def write_postgres_script(
    con: duckdb.DuckDBPyConnection, path: Path, tables: dict[str, bool]
) -> dict[str, dict[str, str]]:
    """``tables``: name -> written as JSON documents. Returns the PostgreSQL column types."""
    written: dict[str, dict[str, str]] = {}
    with path.open("w", encoding="utf-8") as out:
        out.write("-- A perturbed logical database (benchforge perturb); load it with\n")
        out.write("-- benchforge.synthesis.perturb.load_postgres_template.\n")
        for table, as_documents in tables.items():
            query = select_rows(table, as_documents)
            types = (
                {"doc": "jsonb"}
                if as_documents
                else {c: postgres_type(t) for c, t in column_types(con, table).items()}
            )
            columns = ", ".join(f"{quote(c)} {t}" for c, t in types.items())
            out.write(f"\nCREATE TABLE {quote(table)} ({columns});\n")
            pg_types = list(types.values())
            cursor = con.execute(query)
            while batch := cursor.fetchmany(_ROWS_PER_INSERT):
                values = ",\n".join(
                    "("
                    + ", ".join(pg_literal(v, t) for v, t in zip(row, pg_types, strict=True))
                    + ")"
                    for row in batch
                )
                out.write(f"INSERT INTO {quote(table)} VALUES\n{values};\n")
            written[table] = types
    return written


def load_postgres_template(admin_url: str, script: Path, template: str) -> None:
    """``template`` (re)made on ``admin_url``'s server from ``script``, in one transaction."""
    ident = sql.Identifier(template)
    with psycopg.connect(admin_url, autocommit=True) as con:
        con.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        con.execute(sql.SQL("CREATE DATABASE {}").format(ident))
    try:
        with psycopg.connect(make_conninfo(admin_url, dbname=template)) as con:
            con.execute(script.read_text(encoding="utf-8").encode())
    except psycopg.Error as err:
        raise PostgresLoadError(
            f"loading {script.name} into {template!r}: {err.diag.message_primary or err}"
        ) from None


def ensure_postgres_template(admin_url: str, script: Path, template: str) -> bool:
    """``template`` loaded from ``script`` unless it exists already; True when loaded now.
    Loaded under a private name and renamed into place, so a template that exists is
    complete, and two processes loading it at once both end with the one template."""
    with psycopg.connect(admin_url, autocommit=True) as con:
        found = con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (template,))
        if found.fetchone():
            return False
    loading = f"{template[:50]}_{uuid.uuid4().hex[:8]}"
    load_postgres_template(admin_url, script, loading)
    with psycopg.connect(admin_url, autocommit=True) as con:
        try:
            con.execute(
                sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                    sql.Identifier(loading), sql.Identifier(template)
                )
            )
        except pg_errors.DuplicateDatabase:  # another process loaded it first: the same data
            con.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(loading))
            )
            return False
    return True

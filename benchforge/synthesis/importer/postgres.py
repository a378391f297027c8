"""PostgreSQL as an import source, through psycopg 3 (DuckDB's postgres extension is a download,
and Benchforge runs offline).

Each table streams out with ``COPY (SELECT ...) TO STDOUT (FORMAT csv)`` into spool files of at
most ``chunk_bytes`` (cut at row boundaries), each loaded into DuckDB and deleted before the next
one is written: memory stays bounded by one COPY block, disk by one chunk. Every column is read
as text and cast in DuckDB to the type its PostgreSQL type maps to (:func:`duck_type`), so a
value DuckDB cannot hold fails the import naming the table, never silently. All tables are
read in one REPEATABLE READ transaction: one snapshot, so the keys between tables agree.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import duckdb
import psycopg
from psycopg import sql
from pydantic import BaseModel

from benchforge.core.sql import literal, quote
from benchforge.synthesis.importer.sources import (
    RAW,
    DatasetImportError,
    SourcePlan,
    SourceTable,
    TableLoaded,
    dedupe,
    first_line,
    select_tables,
    table_name,
)

URL = re.compile(r"^postgres(?:ql)?(?:\+\w+)?://", re.IGNORECASE)
CHUNK_BYTES = 64 * 1024 * 1024
MAX_ROW_BYTES = 16 * 1024 * 1024  # DuckDB's CSV reader holds a row in one buffer (default 2 MB)
CONNECT_TIMEOUT_S = 10
# The session settings that make COPY's text what DuckDB parses: ISO dates, UTC offsets, hex
# bytea, shortest exact floats.
SESSION = (
    "SET DateStyle = 'ISO, YMD'",
    "SET TimeZone = 'UTC'",
    "SET IntervalStyle = 'postgres'",
    "SET bytea_output = 'hex'",
    "SET extra_float_digits = 1",
)
EXACT_TYPES = {
    "smallint": "SMALLINT",
    "integer": "INTEGER",
    "bigint": "BIGINT",
    "real": "FLOAT",
    "double precision": "DOUBLE",
    "numeric": "DOUBLE",  # unbounded precision: DuckDB's DECIMAL stops at 38 digits
    "boolean": "BOOLEAN",
    "date": "DATE",
    "uuid": "UUID",
    "bytea": "BLOB",
    "json": "JSON",
    "jsonb": "JSON",
}
PATTERNS = (
    (re.compile(r"^timestamp(\(\d+\))? without time zone$"), "TIMESTAMP"),
    (re.compile(r"^timestamp(\(\d+\))? with time zone$"), "TIMESTAMPTZ"),
    (re.compile(r"^time(\(\d+\))? without time zone$"), "TIME"),
    (re.compile(r"^time(\(\d+\))? with time zone$"), "TIMETZ"),
    (re.compile(r"^interval\b"), "INTERVAL"),
)
NUMERIC = re.compile(r"^numeric\((\d+),(\d+)\)$")
MAX_DECIMAL_PRECISION = 38


class PgColumn(BaseModel):
    name: str
    pg_type: str  # format_type() of the column (of a domain's base type)
    category: str  # pg_type.typcategory: 'A' for arrays, 'E' for enums, ...

    @property
    def duck(self) -> str:
        return duck_type(self.pg_type, self.category)


def is_postgres_url(source: str) -> bool:
    return bool(URL.match(source))


def redact(url: str) -> str:
    """The URL without its password (in the user part or as a ``password`` parameter)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k.lower() != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def split_password(url: str) -> tuple[str, str | None]:
    """The URL without its password, and the password (None when it has none): the password
    can then travel in PGPASSWORD, which libpq reads, instead of in a logged URL."""
    parts = urlsplit(url)
    password = unquote(parts.password) if parts.password is not None else None
    for key, value in parse_qsl(parts.query):
        if key.lower() == "password":
            password = value
    return redact(url), password


def libpq_url(url: str) -> str:
    """A SQLAlchemy-style URL (``postgresql+psycopg://``) as libpq reads it."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme.split('+', 1)[0].lower()}{sep}{rest}"


def duck_type(pg_type: str, category: str) -> str:
    """The DuckDB type a PostgreSQL column is loaded as. Arrays, enums, ranges, network and
    geometric types and anything else without a DuckDB twin arrive as their text (VARCHAR)."""
    if category == "A":
        return "VARCHAR"
    if pg_type in EXACT_TYPES:
        return EXACT_TYPES[pg_type]
    numeric = NUMERIC.match(pg_type)
    if numeric:
        precision, scale = int(numeric.group(1)), int(numeric.group(2))
        if precision <= MAX_DECIMAL_PRECISION:
            return f"DECIMAL({precision},{scale})"
        return "DOUBLE"
    for pattern, duck in PATTERNS:
        if pattern.match(pg_type):
            return duck
    return "VARCHAR"


@contextmanager
def connect(url: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A read-only autocommit session with :data:`SESSION`'s settings."""
    try:
        conn = psycopg.connect(libpq_url(url), connect_timeout=CONNECT_TIMEOUT_S, autocommit=True)
    except psycopg.Error as err:
        raise DatasetImportError(f"cannot connect to {redact(url)}: {first_line(err)}") from None
    try:
        for statement in (*SESSION, "SET default_transaction_read_only = on"):
            conn.execute(statement)
        yield conn
    finally:
        conn.close()


def plan_postgres(url: str, *, db_schema: str, tables: list[str] | None) -> SourcePlan:
    """The tables of ``db_schema`` (ordinary and partitioned tables, not their partitions)."""
    shown = redact(url)
    with connect(url) as conn:
        schemas = [
            str(r[0])
            for r in conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
                "AND nspname <> 'information_schema' ORDER BY nspname"
            ).fetchall()
        ]
        if db_schema not in schemas:
            close = difflib.get_close_matches(db_schema, schemas, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise DatasetImportError(
                f"{shown} has no schema {db_schema!r}{hint}; its schemas: {', '.join(schemas)}"
            )
        names = [
            str(r[0])
            for r in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s AND c.relkind IN ('r', 'p') AND NOT c.relispartition "
                "ORDER BY c.relname",
                (db_schema,),
            ).fetchall()
        ]
    where = f"schema {db_schema} of {shown}"
    if not names:
        raise DatasetImportError(f"{where} holds no tables (give another with --schema)")
    candidates = [
        SourceTable(name=table_name(n), origin=f"{db_schema}.{n}", reader="table") for n in names
    ]
    found = dedupe(candidates, where)
    keep = set(select_tables(found, tables, where))
    return SourcePlan(
        kind="postgres",
        location=shown,
        url=url,
        db_schema=db_schema,
        tables=[t for t in found if t.name in keep],
    )


def load_postgres(
    plan: SourcePlan,
    con: duckdb.DuckDBPyConnection,
    warehouse: str,
    spool_dir: Path,
    on_table: TableLoaded,
    *,
    url: str | None = None,
    chunk_bytes: int | None = None,
) -> None:
    """Streams every table of the plan into ``<warehouse>.raw`` (see the module docstring).
    ``url``: the connection URL when the plan's own was dropped (a plan read back from JSON);
    ``chunk_bytes``: default :data:`CHUNK_BYTES`."""
    url = url or plan.url
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    if url is None:
        raise DatasetImportError(f"no connection URL for {plan.location}")
    spool_dir.mkdir(parents=True, exist_ok=True)
    with connect(url) as conn, _snapshot(conn):
        for table in plan.tables:
            schema, _, name = table.origin.partition(".")
            columns = table_columns(conn, schema, name)
            if not columns:
                raise DatasetImportError(f"table {table.origin} of {plan.location} has no columns")
            target = f"{warehouse}.{RAW}.{quote(table.name)}"
            defs = ", ".join(f"{quote(c.name)} {c.duck}" for c in columns)
            con.execute(f"CREATE TABLE {target} ({defs})")
            where = f"table {table.origin} of {plan.location}"
            rows = _copy_table(
                conn, con, schema, name, columns, target, where, spool_dir, chunk_bytes
            )
            on_table(table.name, rows)


@contextmanager
def _snapshot(conn: psycopg.Connection[tuple[object, ...]]) -> Iterator[None]:
    """One read-only REPEATABLE READ transaction around every COPY: all tables are read from
    the same snapshot, so keys between them agree even while the database is being written."""
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        yield
    finally:
        with suppress(psycopg.Error):  # a failed COPY may have broken the session: it closes
            conn.execute("ROLLBACK")


def table_columns(
    conn: psycopg.Connection[tuple[object, ...]], schema: str, name: str
) -> list[PgColumn]:
    rows = conn.execute(
        "SELECT a.attname, format_type(coalesce(nullif(t.typbasetype, 0), a.atttypid), "
        "CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END), bt.typcategory "
        "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_type t ON t.oid = a.atttypid "
        "JOIN pg_type bt ON bt.oid = coalesce(nullif(t.typbasetype, 0), a.atttypid) "
        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped "
        "ORDER BY a.attnum",
        (schema, name),
    ).fetchall()
    return [PgColumn(name=str(r[0]), pg_type=str(r[1]), category=str(r[2])) for r in rows]


def _select_expr(column: PgColumn) -> sql.Composable:
    """The column as COPY writes it. Intervals are spelled as months, days and microseconds
    (the one interval text DuckDB reads whatever the signs of its parts)."""
    ident = sql.Identifier(column.name)
    if column.duck != "INTERVAL":
        return ident
    return sql.SQL(
        "CASE WHEN {c} IS NULL THEN NULL ELSE "
        "(extract(year FROM {c}) * 12 + extract(month FROM {c}))::bigint || ' months ' || "
        "extract(day FROM {c})::bigint || ' days ' || "
        "(extract(microseconds FROM {c}) + (extract(hour FROM {c}) * 60 + "
        "extract(minute FROM {c})) * 60000000)::bigint || ' microseconds' END"
    ).format(c=ident)


def _duck_expr(index: int, column: PgColumn) -> str:
    text = f"c{index}"
    if column.duck == "VARCHAR":
        return text
    if column.duck == "BLOB":
        return f"unhex(substr({text}, 3))"  # bytea's hex output: \x0102...
    return f"CAST({text} AS {column.duck})"


def _copy_table(
    conn: psycopg.Connection[tuple[object, ...]],
    con: duckdb.DuckDBPyConnection,
    schema: str,
    name: str,
    columns: list[PgColumn],
    target: str,
    where: str,
    spool_dir: Path,
    chunk_bytes: int,
) -> int:
    query = sql.SQL("COPY (SELECT {cols} FROM {schema}.{table}) TO STDOUT (FORMAT csv)").format(
        cols=sql.SQL(", ").join(_select_expr(c) for c in columns),
        schema=sql.Identifier(schema),
        table=sql.Identifier(name),
    )
    spec = ", ".join(f"{literal(f'c{i}')}: 'VARCHAR'" for i in range(len(columns)))
    select = ", ".join(_duck_expr(i, c) for i, c in enumerate(columns))

    def load(path: Path) -> None:
        try:
            con.execute(
                f"INSERT INTO {target} SELECT {select} FROM read_csv({literal(str(path))}, "
                f"columns = {{{spec}}}, header = false, auto_detect = false, delim = ',', "
                "quote = '\"', escape = '\"', allow_quoted_nulls = false, "
                f"max_line_size = {MAX_ROW_BYTES}, buffer_size = {2 * MAX_ROW_BYTES})"
            )
        except duckdb.Error as err:
            raise DatasetImportError(f"{where}: {first_line(err)}") from None

    spool = CsvSpool(spool_dir / "chunk.csv", chunk_bytes, load)
    try:
        with conn.cursor() as cur, cur.copy(query) as copy:
            for block in copy:
                spool.write(bytes(block))
        spool.finish()
    except psycopg.Error as err:
        raise DatasetImportError(f"{where}: {first_line(err)}") from None
    finally:
        spool.discard()
    row = con.execute(f"SELECT count(*) FROM {target}").fetchone()
    return int(row[0]) if row else 0


ChunkLoader = Callable[[Path], None]


class CsvSpool:
    """Collects CSV bytes in a file and hands it to ``load`` whenever it holds ``chunk_bytes``,
    cut at a row boundary: a newline outside quotes, i.e. after an even number of ``"`` (CSV
    escapes a quote by doubling it, so the parity is that of the quoting state)."""

    def __init__(self, path: Path, chunk_bytes: int, load: ChunkLoader):
        self.path, self.chunk_bytes, self.load = path, chunk_bytes, load
        self.fh: IO[bytes] = path.open("wb")
        self.size = 0
        self.quotes = 0  # parity of the quotes written to the current file
        self.chunks = 0

    def write(self, block: bytes) -> None:
        if self.size + len(block) >= self.chunk_bytes:
            cut = self._row_end(block)
            if cut is not None:
                self._append(block[:cut])
                self._flush()
                block = block[cut:]
        self._append(block)

    def _row_end(self, block: bytes) -> int | None:
        """The end of the last complete row in ``block`` (after its newline), if any."""
        i = block.rfind(b"\n")
        while i >= 0:
            if (self.quotes + block.count(b'"', 0, i)) % 2 == 0:
                return i + 1
            i = block.rfind(b"\n", 0, i)
        return None

    def _append(self, data: bytes) -> None:
        if data:
            self.fh.write(data)
            self.size += len(data)
            self.quotes = (self.quotes + data.count(b'"')) % 2

    def _flush(self) -> None:
        self.fh.close()
        if self.size:
            self.load(self.path)
            self.chunks += 1
        self.fh = self.path.open("wb")
        self.size = self.quotes = 0

    def finish(self) -> None:
        """Loads what is left."""
        self.fh.close()
        if self.size:
            self.load(self.path)
            self.chunks += 1
            self.size = 0

    def discard(self) -> None:
        """Closes and removes the spool file (after :meth:`finish`, or on an error)."""
        self.fh.close()
        self.path.unlink(missing_ok=True)

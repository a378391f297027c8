"""Where an import reads from, resolved into a plan before a byte is written.

A source is a folder of CSV / Parquet files (one table per file, named after its stem), a DuckDB
database file (every table of one schema) or a PostgreSQL URL (every table of one schema, see
:mod:`.postgres`). :func:`resolve_source` checks it and lists its tables, so a missing folder, an
unsupported file, two files that would make the same table or an unknown ``--tables`` name fail
before the staging folder exists; :func:`load_files` and :func:`load_duckdb` then copy the tables
into the ``raw`` schema of the warehouse being built.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal, TextIO

import duckdb
from pydantic import BaseModel, Field

from benchforge.core.errors import BenchforgeError
from benchforge.core.records import ImportStamp
from benchforge.core.sql import literal, quote

RAW = "raw"
# File suffix -> reader. Compressed CSV is read by DuckDB directly.
SUFFIXES: dict[str, Literal["csv", "parquet"]] = {
    ".csv": "csv",
    ".csv.gz": "csv",
    ".tsv": "csv",
    ".tsv.gz": "csv",
    ".parquet": "parquet",
}
DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file
DELIMITERS = (",", ";", "\t", "|")

TableLoaded = Callable[[str, int], None]


class DatasetImportError(BenchforgeError):
    """The source could not be imported; nothing was published. The message names the file,
    table or column at fault."""


class SourceTable(BaseModel):
    """One table of the dataset and where it comes from."""

    name: str = Field(description="The table in the dataset's raw schema.")
    origin: str = Field(description="A file name, or schema.table in the source database.")
    path: Path | None = Field(default=None, description="The file (folder sources).")
    reader: Literal["csv", "parquet", "table"]


class SourcePlan(BaseModel):
    """A checked source: its kind, where it is, and the tables to import (sorted by name)."""

    kind: Literal["files", "duckdb", "postgres"]
    location: str = Field(description="The folder, file or URL, as shown (never a password).")
    path: Path | None = None
    url: str | None = Field(default=None, repr=False, exclude=True)  # may hold a password
    db_schema: str | None = None
    tables: list[SourceTable]

    def stamp(self) -> ImportStamp:
        return ImportStamp(
            kind=self.kind,
            location=self.location,
            db_schema=self.db_schema,
            tables={t.name: t.origin for t in self.tables},
        )


def resolve_source(
    source: str, *, db_schema: str | None = None, tables: Iterable[str] | None = None
) -> SourcePlan:
    """Checks ``source`` and lists the tables an import of it will hold (``tables``: only
    these, by their dataset name)."""
    from benchforge.synthesis.importer.postgres import is_postgres_url, plan_postgres

    wanted = list(tables) if tables is not None else None
    if is_postgres_url(source):
        return plan_postgres(source, db_schema=db_schema or "public", tables=wanted)
    if "://" in source:
        scheme = source.split("://", 1)[0]
        raise DatasetImportError(
            f"source {source}: unsupported scheme {scheme!r} (give a folder, a DuckDB file "
            "or a postgresql:// URL)"
        )
    path = Path(source).expanduser().resolve()
    if not path.exists():
        raise DatasetImportError(f"source {path} does not exist")
    if path.is_dir():
        if db_schema is not None:
            raise DatasetImportError(f"source {path} is a folder of files: it has no schemas")
        return _plan_files(path, wanted)
    if _is_duckdb(path):
        return _plan_duckdb(path, db_schema, wanted)
    if _suffix(path.name) in SUFFIXES:
        raise DatasetImportError(
            f"source {path} is a single file: give the folder holding it (every file in the "
            "folder becomes a table)"
        )
    raise DatasetImportError(
        f"source {path} is neither a folder of CSV / Parquet files nor a DuckDB database"
    )


def table_name(stem: str) -> str:
    """A file stem as a table name: lower case, runs of anything but letters, digits and
    underscores become one underscore; a leading digit gets a ``t_`` prefix."""
    name = re.sub(r"[^0-9a-z_]+", "_", stem.strip().lower()).strip("_")
    if not name:
        raise DatasetImportError(f"{stem!r} makes no table name: rename it with a letter in it")
    return f"t_{name}" if name[0].isdigit() else name


def select_tables(found: list[SourceTable], wanted: list[str] | None, where: str) -> list[str]:
    """Names of ``found`` to import: all, or the ``wanted`` ones (each must exist)."""
    names = [t.name for t in found]
    if wanted is None:
        return names
    if not wanted:
        raise DatasetImportError(f"--tables names no table (tables of {where}: {', '.join(names)})")
    for name in wanted:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise DatasetImportError(
                f"no table {name!r} in {where}{hint}; its tables: {', '.join(names)}"
            )
    return list(dict.fromkeys(wanted))


def dedupe(candidates: list[SourceTable], where: str) -> list[SourceTable]:
    """Refuses two sources that would make the same table, naming both."""
    seen: dict[str, SourceTable] = {}
    for table in candidates:
        other = seen.get(table.name)
        if other is not None:
            raise DatasetImportError(
                f"{where}: {other.origin} and {table.origin} would both become table "
                f"{table.name!r}; rename one (or leave one out with --tables)"
            )
        seen[table.name] = table
    return sorted(seen.values(), key=lambda t: t.name)


def _suffix(name: str) -> str:
    lower = name.lower()
    return next((s for s in sorted(SUFFIXES, key=len, reverse=True) if lower.endswith(s)), "")


def _plan_files(folder: Path, wanted: list[str] | None) -> SourcePlan:
    entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    unsupported = [p.name + ("/" if p.is_dir() else "") for p in entries if not _suffix(p.name)]
    unsupported += [p.name + "/" for p in entries if _suffix(p.name) and p.is_dir()]
    if unsupported:
        raise DatasetImportError(
            f"source {folder}: cannot import {', '.join(sorted(unsupported))} (a folder source "
            f"holds only files ending in {', '.join(SUFFIXES)})"
        )
    if not entries:
        raise DatasetImportError(
            f"source {folder} is empty: put one CSV or Parquet file per table in it"
        )
    candidates = [
        SourceTable(
            name=table_name(p.name[: -len(_suffix(p.name))]),
            origin=p.name,
            path=p,
            reader=SUFFIXES[_suffix(p.name)],
        )
        for p in entries
    ]
    found = dedupe(candidates, f"source {folder}")
    keep = set(select_tables(found, wanted, f"source {folder}"))
    return SourcePlan(
        kind="files",
        location=str(folder),
        path=folder,
        tables=[t for t in found if t.name in keep],
    )


def _is_duckdb(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(12)
    except OSError as err:
        raise DatasetImportError(f"source {path} cannot be read: {err.strerror or err}") from None
    return head[8:12] == DUCKDB_MAGIC


def _attach_source(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    try:
        con.execute(f"ATTACH {literal(str(path))} AS src (READ_ONLY)")
    except duckdb.Error as err:
        raise DatasetImportError(f"source {path}: cannot open it: {first_line(err)}") from None


def _plan_duckdb(path: Path, db_schema: str | None, wanted: list[str] | None) -> SourcePlan:
    with duckdb.connect() as con:
        _attach_source(con, path)
        rows = con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'src' "
            "ORDER BY schema_name, table_name"
        ).fetchall()
        schemas = [
            str(r[0])
            for r in con.execute(
                "SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'src' "
                "ORDER BY schema_name"
            ).fetchall()
        ]
    if db_schema is None:
        db_schema = RAW if RAW in schemas else "main"
    elif db_schema not in schemas:
        close = difflib.get_close_matches(db_schema, schemas, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise DatasetImportError(
            f"source {path} has no schema {db_schema!r}{hint}; its schemas: {', '.join(schemas)}"
        )
    names = [str(t) for s, t in rows if s == db_schema]
    where = f"schema {db_schema} of {path}"
    if not names:
        raise DatasetImportError(f"{where} holds no tables (give another with --schema)")
    candidates = [
        SourceTable(name=table_name(n), origin=f"{db_schema}.{n}", reader="table") for n in names
    ]
    found = dedupe(candidates, where)
    keep = set(select_tables(found, wanted, where))
    return SourcePlan(
        kind="duckdb",
        location=str(path),
        path=path,
        db_schema=db_schema,
        tables=[t for t in found if t.name in keep],
    )


def load_files(
    plan: SourcePlan, con: duckdb.DuckDBPyConnection, warehouse: str, on_table: TableLoaded
) -> None:
    """Each file into ``<warehouse>.raw.<table>``: CSV through DuckDB's auto-detection over the
    whole file (types fit every row), Parquet as it is. The first file that does not load
    stops the import, naming the file (and the line, for CSV)."""
    for table in plan.tables:
        assert table.path is not None
        target = f"{warehouse}.{RAW}.{quote(table.name)}"
        if table.reader == "csv":
            load_csv(con, table.path, target)
        else:
            _load_parquet(con, table.path, target)
        on_table(table.name, _count(con, target))


def load_duckdb(
    plan: SourcePlan, con: duckdb.DuckDBPyConnection, warehouse: str, on_table: TableLoaded
) -> None:
    """Each table of the source schema into ``<warehouse>.raw``, types as they are."""
    assert plan.path is not None and plan.db_schema is not None
    _attach_source(con, plan.path)
    try:
        for table in plan.tables:
            schema, _, name = table.origin.partition(".")
            target = f"{warehouse}.{RAW}.{quote(table.name)}"
            try:
                con.execute(
                    f"CREATE TABLE {target} AS SELECT * FROM src.{quote(schema)}.{quote(name)}"
                )
            except duckdb.Error as err:
                raise DatasetImportError(
                    f"table {table.origin} of {plan.path}: {first_line(err)}"
                ) from None
            on_table(table.name, _count(con, target))
    finally:
        con.execute("DETACH src")


def _load_parquet(con: duckdb.DuckDBPyConnection, path: Path, target: str) -> None:
    try:
        con.execute(f"CREATE TABLE {target} AS SELECT * FROM read_parquet({literal(str(path))})")
    except duckdb.Error as err:
        raise DatasetImportError(f"{path.name} does not load: {first_line(err)}") from None


def load_csv(con: duckdb.DuckDBPyConnection, path: Path, target: str) -> None:
    """Reads the file with the types the whole file takes: the types DuckDB's sniffer finds on
    its sample when they are provably those (:func:`_load_csv_sampled`), else those it finds
    sniffing the whole file once. DuckDB's sniffer meets a file whose rows disagree on their
    number of fields by skipping its first lines, dropping the header or reading one column,
    all silently; those files are refused, naming the first row that does not fit."""
    if path.stat().st_size == 0:
        raise DatasetImportError(f"{path.name} is empty (a CSV file needs at least a header)")
    source = literal(str(path))
    if _load_csv_sampled(con, source, target):
        return
    try:
        sniffed = con.execute(
            "SELECT SkipRows, HasHeader, Columns, Delimiter, Quote, Escape, NewLineDelimiter, "
            f"Comment, DateFormat, TimestampFormat FROM sniff_csv({source}, sample_size = -1)"
        ).fetchone()
    except duckdb.Error as err:
        raise DatasetImportError(_csv_error(path, err)) from None
    assert sniffed is not None
    skipped, header, columns = int(sniffed[0]), bool(sniffed[1]), list(sniffed[2])
    if skipped or not header or len(columns) == 1:
        _check_rows(path)
    if skipped:
        raise DatasetImportError(
            f"{path.name}: its first {skipped} lines do not fit the rest of the file"
        )
    if not header:
        raise DatasetImportError(
            f"{path.name} has no header line (its first line looks like data): add a first "
            "line with the column names"
        )
    options = sniffed_options(columns, *sniffed[3:])
    try:
        con.execute(f"CREATE TABLE {target} AS SELECT * FROM read_csv({source}, {options})")
    except duckdb.Error as err:
        raise DatasetImportError(_csv_error(path, err)) from None


# Types a sniffer tries before VARCHAR; a value none of them reads keeps a column VARCHAR.
_NARROWER = ("BOOLEAN", "BIGINT", "DOUBLE", "TIME", "DATE", "TIMESTAMP")
_PLAIN_INTEGER = "'[+-]?(0|[1-9][0-9]*)'"  # no leading zero: a sniffer keeps 007 as text


def _load_csv_sampled(con: duckdb.DuckDBPyConnection, source: str, target: str) -> bool:
    """One pass instead of two: read the file with the types the sniffer finds on its default
    sample, and keep the table only when those are the whole file's types. A sniffer picks, per
    column, the narrowest type every value it saw reads as, so the whole file can only widen
    the sample's types, and a wider value fails this read (auto-detection off): the table is
    not kept and the caller sniffs the whole file. Two reads are checked here because they do
    not fail by themselves: an integer column reads ``1.5`` as 2, so it is read as text and
    each value must be a plain integer; and a column the sample saw no value of is VARCHAR by
    default, so a VARCHAR column is kept only with a value no narrower type reads. Anything
    unusual about the sample (skipped lines, no header, one column) is left to the whole-file
    path, which explains it. True when ``target`` was created."""
    try:
        sniffed = con.execute(
            "SELECT SkipRows, HasHeader, Columns, Delimiter, Quote, Escape, NewLineDelimiter, "
            f"Comment, DateFormat, TimestampFormat FROM sniff_csv({source})"
        ).fetchone()
    except duckdb.Error:
        return False
    if sniffed is None or int(sniffed[0]) or not sniffed[1] or len(sniffed[2]) == 1:
        return False
    columns = list(sniffed[2])
    as_read = [
        {"name": c["name"], "type": "VARCHAR" if c["type"] == "BIGINT" else c["type"]}
        for c in columns
    ]
    options = sniffed_options(as_read, *sniffed[3:])
    select = ", ".join(_as_sniffed(c["name"], c["type"]) for c in columns)
    try:
        con.execute(f"CREATE TABLE {target} AS SELECT {select} FROM read_csv({source}, {options})")
    except duckdb.Error:
        con.execute(f"DROP TABLE IF EXISTS {target}")
        return False
    for column in columns:
        if column["type"] == "VARCHAR" and not _reads_as_text_only(con, target, column["name"]):
            con.execute(f"DROP TABLE {target}")
            return False
    return True


def _as_sniffed(name: str, type_: str) -> str:
    """The select item of a column read as :func:`_load_csv_sampled` reads it: an integer column
    from its text, failing the statement on any value that is not a plain integer."""
    c = quote(name)
    if type_ != "BIGINT":
        return c
    return (
        f"CASE WHEN {c} IS NULL THEN NULL WHEN regexp_full_match({c}, {_PLAIN_INTEGER}) "
        f"THEN CAST({c} AS BIGINT) ELSE error('not a plain integer') END AS {c}"
    )


def _reads_as_text_only(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    """``column`` holds a value that no type a sniffer tries before VARCHAR reads."""
    c = quote(column)
    unread = " AND ".join(f"TRY_CAST({c} AS {t}) IS NULL" for t in _NARROWER)
    return (
        con.execute(f"SELECT 1 FROM {table} WHERE {c} IS NOT NULL AND {unread} LIMIT 1").fetchone()
        is not None
    )


# read_csv's buffer. With DuckDB's default a parallel read leaves row groups that the closing
# checkpoint rewrites: 5 M rows of CSV peaked at 555 MB and wrote a file twice the size; with
# 4 MB buffers the checkpoint has nothing to rewrite (366 MB, and 3.5 s instead of 4.1 s).
# A line longer than the buffer still reads (tests/synthesis/importer).
CSV_BUFFER_BYTES = 4 * 1024 * 1024


def sniffed_options(
    columns: list[dict[str, str]],
    delimiter: str,
    quote_char: str,
    escape: str,
    new_line: str,
    comment: str,
    date_format: str | None,
    timestamp_format: str | None,
) -> str:
    """``read_csv`` options that read a file as ``sniff_csv`` found it (what its ``Prompt``
    holds, with the values quoted), header on and no line skipped. The sniffer spells an
    unset character ``(empty)``."""

    def char(value: str) -> str:
        return literal("" if value == "(empty)" else value)

    types = ", ".join(f"{literal(c['name'])}: {literal(c['type'])}" for c in columns)
    options = [
        "auto_detect = false",
        "header = true",
        f"delim = {char(delimiter)}",
        f"quote = {char(quote_char)}",
        f"escape = {char(escape)}",
        f"new_line = {char(new_line)}",
        f"comment = {char(comment)}",
        f"columns = {{{types}}}",
        f"buffer_size = {CSV_BUFFER_BYTES}",
    ]
    if date_format:
        options.append(f"dateformat = {literal(date_format)}")
    if timestamp_format:
        options.append(f"timestampformat = {literal(timestamp_format)}")
    return ", ".join(options)


def _check_rows(path: Path) -> None:
    """Re-reads the file with the usual delimiter its header line holds most of, and names the
    first row whose number of fields differs from the header's (a header holding none of them
    is a one-column file: nothing to check)."""
    with _open_text(path) as fh:
        header = fh.readline()
    counts = {d: header.count(d) for d in DELIMITERS}
    delimiter = max(counts, key=lambda d: counts[d])
    if counts[delimiter] == 0:
        return
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter=delimiter)
        width = len(next(reader, []))
        for row in reader:
            if row and len(row) != width:
                raise DatasetImportError(
                    f"{path.name} line {reader.line_num}: {len(row)} fields where the header "
                    f"has {width} (delimiter {delimiter!r})"
                )


def _open_text(path: Path) -> TextIO:
    """The file as text (gzip-compressed or not), for the ragged-row diagnosis."""
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    return path.open(encoding="utf-8", errors="replace", newline="")


def _csv_error(path: Path, err: duckdb.Error) -> str:
    """DuckDB's CSV error as one line naming the file and line: its reason, not its advice."""
    text = str(err)
    line = re.search(r"CSV Error on Line: (\d+)", text)
    lines = [s.strip() for s in text.splitlines() if s.strip()]
    reasons = [
        s
        for s in lines[1:]
        if not s.startswith(("Original Line", "Possible", "*", "LINE ")) and " = " not in s
    ]
    reason = reasons[0] if reasons else first_line(err)
    where = f"{path.name} line {line.group(1)}" if line else path.name
    return f"{where} does not load: {reason}"


def first_line(err: BaseException) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def _count(con: duckdb.DuckDBPyConnection, target: str) -> int:
    row = con.execute(f"SELECT count(*) FROM {target}").fetchone()
    return int(row[0]) if row else 0

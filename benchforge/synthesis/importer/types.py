"""Column types that do not depend on the import route.

The same data arrives with different DuckDB types by route: a CSV file's integers are BIGINT
and its decimals DOUBLE (DuckDB's sniffer), a DuckDB file or Parquet keeps whatever it holds
(INTEGER, DECIMAL(10,2), ENUM...), PostgreSQL's columns map one by one (SMALLINT, DECIMAL(p,s),
UUID, JSON...). A gold build and its data contract would then differ by route. So every import
maps each column to a canonical type (:func:`canonical_type`) unless told to keep the source's
(``keep_source_types``), then applies the types a declaration file gives (``--column-types``,
``table: {column: TYPE}``), once, in the dataset's manifest (:class:`ImportTypes`) and profile.

The canonical mapping (top-level types only; see :data:`CANONICAL`):

- integers that fit 64 bits (TINYINT ... BIGINT, UTINYINT ... UINTEGER) -> BIGINT;
  UBIGINT, HUGEINT and UHUGEINT are kept (their values may not fit a BIGINT);
- FLOAT, DOUBLE and DECIMAL(p,s) -> DOUBLE (declare a DECIMAL to keep exact digits);
- VARCHAR, UUID, JSON and enums -> VARCHAR (the text a CSV file gives);
- TIMESTAMP_S / _MS / _NS -> TIMESTAMP (microseconds); TIMESTAMP WITH TIME ZONE, DATE, TIME,
  TIME WITH TIME ZONE, INTERVAL, BOOLEAN, BLOB, BIT and nested types (lists, structs, maps,
  arrays, unions) are kept as they are.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import duckdb
import yaml
from pydantic import BaseModel, Field

from benchforge.core.sql import literal, quote
from benchforge.synthesis.importer.sources import RAW, DatasetImportError, first_line

CANONICAL: dict[str, str] = {
    **dict.fromkeys(
        ["TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER"],
        "BIGINT",
    ),
    **dict.fromkeys(["FLOAT", "DOUBLE", "DECIMAL"], "DOUBLE"),
    **dict.fromkeys(["VARCHAR", "UUID", "JSON", "ENUM"], "VARCHAR"),
    **dict.fromkeys(["TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS"], "TIMESTAMP"),
}
# A type as a declaration may spell it: a name of words, an optional (p) or (p,s), list
# brackets. Anything else (quotes, semicolons, nested types) is refused before DuckDB sees it.
TYPE_SPELLING = re.compile(r"^[A-Za-z][A-Za-z0-9_ ]*(\(\s*\d+\s*(,\s*\d+\s*)?\))?(\[\])*$")
WORK_TABLE = "__benchforge_typed"


class TypeChange(BaseModel):
    """One column whose type the import changed."""

    source: str = Field(description="The type the route loaded it as.")
    type: str = Field(description="The type it has in the dataset.")
    why: Literal["canonical", "declared"]


class ImportTypes(BaseModel):
    """``types`` of an imported dataset's manifest: how its columns were typed."""

    normalized: bool = Field(
        default=False, description="The canonical mapping was applied (not keep_source_types)."
    )
    declared_from: str | None = Field(default=None, description="The declaration file.")
    declared: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="table -> column -> declared type, as DuckDB spells it."
    )
    changes: dict[str, dict[str, TypeChange]] = Field(
        default_factory=dict, description="table -> column -> its change (changed columns only)."
    )


class TypeOptions(BaseModel):
    """What an import is asked to do with types (checked before anything is written)."""

    keep_source_types: bool = False
    declared_from: str | None = None
    declared: dict[str, dict[str, str]] = Field(default_factory=dict)


def base_type(duck_type: str) -> str:
    """``DECIMAL(10,2)`` -> ``DECIMAL``, ``ENUM('a', 'b')`` -> ``ENUM``; nested types (a
    ``[``, or a STRUCT / MAP / UNION) -> themselves."""
    if duck_type.endswith("]"):
        return duck_type
    return duck_type.split("(", 1)[0].strip()


def canonical_type(duck_type: str) -> str:
    """The type a column of ``duck_type`` (as ``duckdb_columns()`` spells it) gets by default."""
    return CANONICAL.get(base_type(duck_type), duck_type)


def type_options(
    keep_source_types: bool = False, column_types: str | Path | None = None
) -> TypeOptions:
    """The options of one import, reading and checking the declaration file if one is given."""
    if column_types is None:
        return TypeOptions(keep_source_types=keep_source_types)
    path = Path(column_types).expanduser().absolute()
    return TypeOptions(
        keep_source_types=keep_source_types,
        declared_from=str(path),
        declared=read_column_types(path),
    )


def read_column_types(path: Path) -> dict[str, dict[str, str]]:
    """A declaration file (YAML ``table: {column: TYPE}``) with every type as DuckDB spells it
    (``decimal(10, 2)`` -> ``DECIMAL(10,2)``, ``int`` -> ``INTEGER``)."""
    if not path.is_file():
        raise DatasetImportError(f"column types file {path} does not exist")
    try:
        loaded = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise DatasetImportError(f"{path} is not YAML: {first_line(err)}") from None
    shape = f"{path}: give a mapping table: {{column: TYPE}}"
    if not isinstance(loaded, dict):
        raise DatasetImportError(shape)
    declared: dict[str, dict[str, str]] = {}
    with duckdb.connect() as con:
        for table, columns in loaded.items():
            if not isinstance(columns, dict) or not columns:
                raise DatasetImportError(f"{shape} (table {table!r} has none)")
            for column, spelled in columns.items():
                where = f"{path}: {table}.{column}"
                declared.setdefault(str(table), {})[str(column)] = _duck_spelling(
                    con, spelled, where
                )
    return declared


def _duck_spelling(con: duckdb.DuckDBPyConnection, spelled: object, where: str) -> str:
    if not isinstance(spelled, str) or not TYPE_SPELLING.match(spelled.strip()):
        raise DatasetImportError(f"{where}: {spelled!r} is not a DuckDB type name")
    try:
        row = con.execute(f"SELECT typeof(CAST(NULL AS {spelled.strip()}))").fetchone()
    except duckdb.Error as err:
        raise DatasetImportError(
            f"{where}: {spelled!r} is not a DuckDB type ({first_line(err)})"
        ) from None
    assert row is not None
    return str(row[0])


def check_declared_tables(options: TypeOptions, tables: Iterable[str]) -> None:
    """Every table the declaration names is one the import holds."""
    names = sorted(tables)
    for table in options.declared:
        if table not in names:
            close = difflib.get_close_matches(table, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise DatasetImportError(
                f"{options.declared_from}: no table {table!r} among the imported tables{hint}; "
                f"they are: {', '.join(names)}"
            )


def apply_types(
    con: duckdb.DuckDBPyConnection, warehouse: str, tables: Iterable[str], options: TypeOptions
) -> ImportTypes:
    """Retypes every table of ``<warehouse>.raw`` as ``options`` say (canonical types, then the
    declared ones); a table is rewritten once, only when a column changes. A declared column
    that does not exist, or holds a value its type cannot hold, fails naming the file and the
    table.column (and the value)."""
    check_declared_tables(options, tables)
    result = ImportTypes(
        normalized=not options.keep_source_types,
        declared_from=options.declared_from,
        declared=options.declared,
    )
    for table in tables:
        source = _column_types(con, warehouse, table)
        declared = options.declared.get(table, {})
        for column in declared:
            if column not in source:
                close = difflib.get_close_matches(column, list(source), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise DatasetImportError(
                    f"{options.declared_from}: {table}.{column}: no such column{hint}; "
                    f"its columns: {', '.join(source)}"
                )
        changes: dict[str, TypeChange] = {}
        for column, loaded in source.items():
            if column in declared:
                target, why = declared[column], "declared"
            elif not options.keep_source_types:
                target, why = canonical_type(loaded), "canonical"
            else:
                continue
            if target != loaded:
                changes[column] = TypeChange(source=loaded, type=target, why=why)
        target_table = f"{warehouse}.{RAW}.{quote(table)}"
        for column, change in changes.items():
            if change.why == "declared":
                _check_cast(con, target_table, table, column, change.type, options)
        if changes:
            _rewrite(con, warehouse, table, list(source), changes)
            result.changes[table] = changes
    return result


def _column_types(con: duckdb.DuckDBPyConnection, warehouse: str, table: str) -> dict[str, str]:
    rows = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() "
        f"WHERE database_name = {literal(warehouse)} AND schema_name = {literal(RAW)} "
        f"AND table_name = {literal(table)} ORDER BY column_index"
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def _check_cast(
    con: duckdb.DuckDBPyConnection,
    target: str,
    table: str,
    column: str,
    duck_type: str,
    options: TypeOptions,
) -> None:
    col = quote(column)
    bad = con.execute(
        f"SELECT count(*), min(CAST({col} AS VARCHAR)) FROM {target} "
        f"WHERE {col} IS NOT NULL AND TRY_CAST({col} AS {duck_type}) IS NULL"
    ).fetchone()
    if bad is not None and int(bad[0]):
        raise DatasetImportError(
            f"{options.declared_from}: {table}.{column}: {bad[1]!r} cannot be cast to "
            f"{duck_type} ({bad[0]} values cannot)"
        )


def _rewrite(
    con: duckdb.DuckDBPyConnection,
    warehouse: str,
    table: str,
    columns: list[str],
    changes: dict[str, TypeChange],
) -> None:
    """The table again, with the changed columns cast, in the same row order."""
    select = ", ".join(
        f"CAST({quote(c)} AS {changes[c].type}) AS {quote(c)}" if c in changes else quote(c)
        for c in columns
    )
    schema = f"{warehouse}.{RAW}"
    con.execute(
        f"CREATE TABLE {schema}.{WORK_TABLE} AS SELECT {select} FROM {schema}.{quote(table)}"
    )
    con.execute(f"DROP TABLE {schema}.{quote(table)}")
    con.execute(f"ALTER TABLE {schema}.{WORK_TABLE} RENAME TO {quote(table)}")

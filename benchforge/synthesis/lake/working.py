"""The working copy a lake is written from: the dataset's ``raw`` tables copied, in their
order (so ``rowid`` is the same as in the dataset), into an in-memory DuckDB under the same
schema name; and what a lake step reads of the dataset first (its record, its column types)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from benchforge.core.artifacts import LAYOUT
from benchforge.core.records import DatasetRecord
from benchforge.core.sql import literal, quote
from benchforge.synthesis.lake.loader import load_lake_spec
from benchforge.synthesis.lake.spec import LakeSpec


def resolve_spec(spec: LakeSpec | Path | str) -> tuple[LakeSpec, Path | str]:
    if isinstance(spec, LakeSpec):
        return spec, "<lake spec>"
    return load_lake_spec(spec), spec


def read_dataset_record(dataset_dir: Path) -> DatasetRecord:
    return DatasetRecord.model_validate_json(
        LAYOUT.dataset_record_file(dataset_dir).read_text(encoding="utf-8")
    )


def dataset_column_types(warehouse: Path) -> dict[str, dict[str, str]]:
    """Table -> column -> DuckDB type, of the warehouse's ``raw`` schema."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return column_types(con)


def column_types(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'raw' AND table_catalog = current_database() "
        "ORDER BY table_name, ordinal_position"
    ).fetchall()
    columns: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        columns.setdefault(table, {})[column] = kind
    return columns


@contextmanager
def open_lake_copy(warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse's ``raw`` tables copied, in their order (so rowids match), into an
    in-memory DuckDB under the same schema name."""
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET preserve_insertion_order = true")
        con.execute(f"ATTACH {literal(str(warehouse))} AS source (READ_ONLY)")
        tables = con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_catalog = 'source' AND table_schema = 'raw' ORDER BY table_name"
        ).fetchall()
        con.execute("CREATE SCHEMA raw")
        for (table,) in tables:
            con.execute(
                f"CREATE TABLE raw.{quote(table)} AS SELECT * FROM source.raw.{quote(table)} "
                "ORDER BY rowid"
            )
        con.execute("DETACH source")
        yield con
    finally:
        con.close()

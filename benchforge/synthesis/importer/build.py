"""Importing a dataset end to end: resolve -> load -> export -> profile -> validate -> record ->
publish atomically, the same steps and layout as a synthesized dataset
(:mod:`benchforge.synthesis.dataset`), so every consumer of datasets takes an imported one.

A dataset folder (or ``s3://`` prefix) holds ``warehouse.duckdb`` (every table in schema
``raw``; with ``source_schemas``, a view per table in each of those schemas),
``parquet/<table>.parquet``, ``manifest.json`` (:class:`ImportManifest`: rows, columns, the
sha256 of each Parquet file, the source schemas), ``validation/`` (the profile-derived
expectations, their results and Great Expectations Data Docs) and ``dataset.json``
(:class:`~benchforge.core.records.DatasetRecord`, origin ``imported``), written last. Every
step works in a hidden staging folder that :func:`~benchforge.core.publish.publish` moves into
place (or uploads, record last); a failure anywhere publishes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import duckdb
from pydantic import BaseModel, Field, field_validator

from benchforge.core.artifacts import LAYOUT
from benchforge.core.publish import Target
from benchforge.core.records import DatasetRecord, ImportStamp
from benchforge.core.settings import BenchforgeSettings, load_settings
from benchforge.core.source_schemas import add_source_views, check_source_schemas
from benchforge.core.sql import literal, quote
from benchforge.synthesis.dataset import publish_dataset, stage_record, staged
from benchforge.synthesis.engine import MANIFEST, PARQUET_DIR, WAREHOUSE, TableSummary
from benchforge.synthesis.importer.profile import ProfileSuite, profile_warehouse
from benchforge.synthesis.importer.sources import (
    RAW,
    DatasetImportError,
    SourcePlan,
    first_line,
    load_duckdb,
    load_files,
    resolve_source,
)
from benchforge.synthesis.importer.types import (
    ImportTypes,
    TypeOptions,
    apply_types,
    check_declared_tables,
    type_options,
)

if TYPE_CHECKING:
    from benchforge.synthesis.validation.report import ValidationReport

VALIDATION_DIR = "validation"
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
WORK_DB = "_work.duckdb"
SPILL_DIR = "_spill"

TableLoaded = Callable[[str, int], None]


class ImportManifest(BaseModel):
    """``manifest.json`` of an imported dataset: what was imported, from where, and each table
    as published (the same table summaries as a synthesized dataset's)."""

    kind: Literal["imported"] = "imported"
    domain: str
    source: ImportStamp
    duckdb_version: str
    tables: dict[str, TableSummary]
    types: ImportTypes = Field(
        default_factory=ImportTypes,
        description="How the columns were typed: canonical mapping, declarations, changes.",
    )
    source_schemas: list[str] = Field(
        default_factory=list,
        description=(
            "Schemas of the warehouse with one view per table over raw "
            "(benchforge.core.source_schemas); not tables: no Parquet, no profile."
        ),
    )

    @field_validator("source_schemas")
    @classmethod
    def _valid_schemas(cls, value: list[str]) -> list[str]:
        return check_source_schemas(value)

    @property
    def total_rows(self) -> int:
        return sum(t.rows for t in self.tables.values())


def check_name(name: str) -> str:
    """A dataset name is its domain and a folder name: a letter, then letters, digits, ``_``
    and ``-``."""
    if not NAME.match(name):
        raise DatasetImportError(
            f"dataset name {name!r}: use a letter, then letters, digits, '_' or '-'"
        )
    return name


def default_location(name: str, settings: BenchforgeSettings | None = None) -> str:
    """``<artifact_root>/datasets-imported/<name>``."""
    root = (settings or load_settings()).artifact_root.rstrip("/")
    return f"{root}/{LAYOUT.imported_dataset(check_name(name))}"


def source_schema_options(schemas: Iterable[str] | None) -> list[str]:
    """The ``--source-schema`` values of an import, checked before anything is written
    (:func:`~benchforge.core.source_schemas.check_source_schemas`)."""
    try:
        return check_source_schemas(schemas or [])
    except ValueError as err:
        raise DatasetImportError(f"--source-schema: {err}") from None


def stage_import(
    plan: SourcePlan,
    staging: Path,
    name: str,
    *,
    types: TypeOptions | None = None,
    source_schemas: Sequence[str] = (),
    memory_limit: str = "1GB",
    on_table: TableLoaded | None = None,
) -> ImportManifest:
    """Loads the plan's tables into ``staging/warehouse.duckdb`` (schema ``raw``), types their
    columns (:mod:`.types`: canonical types unless ``types`` keeps the source's, then the
    declared ones), exports ``parquet/``, adds a view per table in each of ``source_schemas``
    (:mod:`benchforge.core.source_schemas`) and writes ``manifest.json``. ``staging`` must be
    empty or absent."""
    from benchforge.synthesis.importer.postgres import load_postgres

    staging.mkdir(parents=True, exist_ok=True)
    if any(staging.iterdir()):
        raise DatasetImportError(f"{staging} is not empty")
    report = on_table or (lambda _t, _n: None)
    types = types or TypeOptions()
    schemas = source_schema_options(source_schemas)
    work = staging / WORK_DB
    con = duckdb.connect(str(work))
    try:
        con.execute(f"SET memory_limit = {literal(memory_limit)}")
        con.execute(f"SET temp_directory = {literal(str(staging / SPILL_DIR))}")
        con.execute("SET preserve_insertion_order = true")
        con.execute(f"ATTACH {literal(str(staging / WAREHOUSE))} AS wh")
        con.execute(f"CREATE SCHEMA wh.{RAW}")
        if plan.kind == "files":
            load_files(plan, con, "wh", report)
        elif plan.kind == "duckdb":
            load_duckdb(plan, con, "wh", report)
        else:
            load_postgres(plan, con, "wh", staging / SPILL_DIR / "copy", report)
        typed = apply_types(con, "wh", [t.name for t in plan.tables], types)
        tables = _export(con, staging, [t.name for t in plan.tables])
        version = con.execute("SELECT version()").fetchone()
    finally:
        con.close()
        work.unlink(missing_ok=True)
        Path(f"{work}.wal").unlink(missing_ok=True)
        shutil.rmtree(staging / SPILL_DIR, ignore_errors=True)
    try:
        add_source_views(staging / WAREHOUSE, schemas, list(tables))
    except duckdb.Error as err:
        raise DatasetImportError(
            f"--source-schema: the views cannot be created: {first_line(err)}"
        ) from None
    manifest = ImportManifest(
        domain=name,
        source=plan.stamp(),
        duckdb_version=str(version[0]) if version else "unknown",
        tables=tables,
        types=typed,
        source_schemas=schemas,
    )
    (staging / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n")
    return manifest


def _export(
    con: duckdb.DuckDBPyConnection, staging: Path, names: list[str]
) -> dict[str, TableSummary]:
    """``parquet/<table>.parquet`` of every table (zstd, as the synthesizer writes them)."""
    folder = staging / PARQUET_DIR
    folder.mkdir()
    tables: dict[str, TableSummary] = {}
    for name in names:
        source = f"wh.{RAW}.{quote(name)}"
        path = folder / f"{name}.parquet"
        try:
            con.execute(f"COPY {source} TO {literal(str(path))} (FORMAT parquet, COMPRESSION zstd)")
        except duckdb.Error as err:
            first = str(err).strip().splitlines()[0]
            raise DatasetImportError(
                f"table {name} cannot be written as Parquet: {first}"
            ) from None
        rows = con.execute(f"SELECT count(*) FROM {source}").fetchone()
        columns = con.execute(f"SELECT * FROM {source} LIMIT 0").description or []
        tables[name] = TableSummary(
            rows=int(rows[0]) if rows else 0,
            columns=len(columns),
            parquet_sha256=sha256_file(path),
            parquet_bytes=path.stat().st_size,
        )
    return tables


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_import_manifest(folder: Path) -> ImportManifest:
    return ImportManifest.model_validate(json.loads((folder / MANIFEST).read_text()))


def profile_step(staging: Path, name: str, *, memory_limit: str = "512MB") -> ProfileSuite:
    """Profiles the staged warehouse: the expectations the data implies. Distinct counts over
    every column grow with the data, so DuckDB is capped and spills to the staging folder. The
    columns the manifest says were declared are marked so in the profile."""
    declared = read_import_manifest(staging).types.declared
    try:
        with duckdb.connect() as con:
            con.execute(f"SET memory_limit = {literal(memory_limit)}")
            con.execute(f"SET temp_directory = {literal(str(staging / SPILL_DIR))}")
            con.execute(f"ATTACH {literal(str(staging / WAREHOUSE))} AS wh (READ_ONLY)")
            return profile_warehouse(con, name, "wh", RAW, declared=declared)
    finally:
        shutil.rmtree(staging / SPILL_DIR, ignore_errors=True)


def validate_step(staging: Path, suite: ProfileSuite) -> ValidationReport:
    """Runs the suite with Great Expectations; Data Docs, results and the suite land in
    ``staging/validation``."""
    from benchforge.synthesis.importer.validate import validate_warehouse

    return validate_warehouse(staging / WAREHOUSE, suite, docs_dir=staging / VALIDATION_DIR)


def write_record(target: Target, report: ValidationReport | None) -> DatasetRecord:
    """Writes the imported dataset's ``dataset.json`` (where it came from, no seed or scale)
    into the staging folder."""
    manifest = read_import_manifest(target.staging)
    return stage_record(target, manifest, report, origin="imported", imported=manifest.source)


def import_dataset(
    source: str,
    *,
    name: str,
    out: str | None = None,
    db_schema: str | None = None,
    tables: Iterable[str] | None = None,
    validate: bool = True,
    keep_source_types: bool = False,
    column_types: str | Path | None = None,
    source_schemas: Iterable[str] | None = None,
    settings: BenchforgeSettings | None = None,
    on_table: TableLoaded | None = None,
) -> DatasetRecord:
    """Imports ``source`` (a folder of CSV / Parquet files, a DuckDB file or a PostgreSQL URL)
    as the dataset ``name`` at ``out`` (a folder or s3:// prefix; default
    :func:`default_location`). ``db_schema``: the database schema to import (DuckDB: ``raw``
    if it exists, else ``main``; PostgreSQL: ``public``); ``tables``: only these;
    ``keep_source_types``: no canonical type mapping; ``column_types``: a declaration file
    (YAML ``table: {column: TYPE}``), applied last (see :mod:`.types`); ``source_schemas``:
    schemas that get a view per table over ``raw`` (for dbt sources that read another schema,
    see :mod:`benchforge.core.source_schemas`)."""
    settings = settings or load_settings()
    check_name(name)
    schemas = source_schema_options(source_schemas)
    types = type_options(keep_source_types, column_types)
    plan = resolve_source(source, db_schema=db_schema, tables=tables)
    check_declared_tables(types, [t.name for t in plan.tables])
    with staged(out or default_location(name, settings)) as target:
        stage_import(
            plan,
            target.staging,
            name,
            types=types,
            source_schemas=schemas,
            on_table=on_table,
        )
        report = None
        if validate:
            report = validate_step(target.staging, profile_step(target.staging, name))
            report.raise_for_failures()
        return publish_dataset(target, report, settings, write_record)

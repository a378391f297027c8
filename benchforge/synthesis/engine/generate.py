"""Generates a dataset folder from a spec: DuckDB warehouse (schema raw), Parquet, manifest."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
from pydantic import BaseModel

from benchforge.core.errors import BenchforgeError
from benchforge.core.progress import DatasetEvent, RowsGenerated, TableExported
from benchforge.synthesis.engine.calendars import register_calendar
from benchforge.synthesis.engine.columns import BuildContext
from benchforge.synthesis.engine.pools import register_pool
from benchforge.synthesis.engine.preflight import sql_problems
from benchforge.synthesis.engine.sql import quote
from benchforge.synthesis.engine.stress import MANIFEST_COLUMNS, stress_plan
from benchforge.synthesis.engine.tables import (
    build_derived_table,
    drop_scd_base,
    materialize,
    plain_table_query,
    scd_table_query,
)
from benchforge.synthesis.spec.generators import FakerGen
from benchforge.synthesis.spec.models import DomainSpec, Table

WAREHOUSE = "warehouse.duckdb"
PARQUET_DIR = "parquet"
ANOMALIES = "anomalies.parquet"
MANIFEST = "manifest.json"


class TableSummary(BaseModel):
    rows: int
    columns: int
    parquet_sha256: str
    parquet_bytes: int


class GenerationManifest(BaseModel):
    """What was generated, from what; identical for identical (spec, seed, scale)."""

    domain: str
    spec_version: str
    spec_sha256: str
    seed: int
    scale: float
    duckdb_version: str
    tables: dict[str, TableSummary]
    anomaly_counts: dict[str, dict[str, dict[str, int]]]  # table -> column -> kind -> count
    anomaly_total: int

    @property
    def total_rows(self) -> int:
        return sum(t.rows for t in self.tables.values())


ProgressFn = Callable[[DatasetEvent], None]


class GenerationError(BenchforgeError):
    """DuckDB rejected the SQL of a table (usually an ``expression`` in the spec)."""


def spec_fingerprint(spec: DomainSpec) -> str:
    return hashlib.sha256(spec.model_dump_json().encode()).hexdigest()


def estimated_rows(spec: DomainSpec, scale: float) -> dict[str, int]:
    est: dict[str, int] = {}
    for t in spec.generation_order():
        if t.scd:
            est[t.name] = round(est.get(t.scd.entity, 0) * min(t.scd.versions.mean, 50))
        elif t.derived_sql:
            est[t.name] = 0
        else:
            est[t.name] = t.row_count(scale)
    return est


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def generate_dataset(
    spec: DomainSpec,
    *,
    scale: float,
    seed: int,
    out: Path,
    chunk_rows: int = 500_000,
    memory_limit: str = "512MB",
    threads: int | None = None,
    on_progress: ProgressFn | None = None,
) -> GenerationManifest:
    """Writes ``out/warehouse.duckdb`` (schema raw), ``out/parquet/*.parquet``,
    ``out/anomalies.parquet`` and ``out/manifest.json``. ``out`` must be empty or absent.

    Deterministic: the same spec, seed and scale give byte-identical Parquet files.
    """
    if scale <= 0:
        raise GenerationError("scale must be positive")
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    report = on_progress or (lambda _e: None)
    work_path = out / "_work.duckdb"
    con = duckdb.connect(str(work_path))
    try:
        tmp = out / "_spill"
        con.execute(f"SET memory_limit = '{memory_limit}'")
        con.execute(f"SET temp_directory = '{tmp}'")
        con.execute("SET preserve_insertion_order = true")
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        con.execute(f"ATTACH '{out / WAREHOUSE}' AS wh")
        con.execute("CREATE SCHEMA _gen; CREATE SCHEMA _meta; CREATE SCHEMA wh.raw")
        con.execute(f"CREATE TABLE _meta.anomalies ({MANIFEST_COLUMNS})")
        counts = _generate_tables(con, spec, scale, seed, chunk_rows, report)
        tables = _export(con, spec, out, counts, report)
        con.execute(
            f"COPY (SELECT * FROM _meta.anomalies ORDER BY table_name, column_name, kind, row_key)"
            f" TO '{out / ANOMALIES}' (FORMAT parquet, COMPRESSION zstd)"
        )
        anomaly_counts = _anomaly_counts(con)
        version = con.execute("SELECT version()").fetchone()
    finally:
        con.close()
        work_path.unlink(missing_ok=True)
        Path(str(work_path) + ".wal").unlink(missing_ok=True)
        shutil.rmtree(out / "_spill", ignore_errors=True)
    manifest = GenerationManifest(
        domain=spec.domain,
        spec_version=spec.version,
        spec_sha256=spec_fingerprint(spec),
        seed=seed,
        scale=scale,
        duckdb_version=str(version[0]) if version else "unknown",
        tables=tables,
        anomaly_counts=anomaly_counts,
        anomaly_total=sum(
            n for cols in anomaly_counts.values() for kinds in cols.values() for n in kinds.values()
        ),
    )
    (out / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n")
    return manifest


def generate_without_outputs(
    spec: DomainSpec,
    *,
    scale: float,
    seed: int,
    chunk_rows: int = 500_000,
    memory_limit: str = "1GB",
) -> int:
    """Runs the generation and stress pass with an in-memory warehouse and no Parquet export:
    the engine's row production alone, for benchmarks. Returns the row count."""
    with tempfile.TemporaryDirectory(prefix="benchforge-gen-") as tmp:
        con = duckdb.connect(str(Path(tmp) / "work.duckdb"))
        try:
            con.execute(f"SET memory_limit = '{memory_limit}'")
            con.execute(f"SET temp_directory = '{Path(tmp) / 'spill'}'")
            con.execute("ATTACH ':memory:' AS wh")
            con.execute("CREATE SCHEMA _gen; CREATE SCHEMA _meta; CREATE SCHEMA wh.raw")
            con.execute(f"CREATE TABLE _meta.anomalies ({MANIFEST_COLUMNS})")
            counts = _generate_tables(con, spec, scale, seed, chunk_rows, lambda _e: None)
        finally:
            con.close()
    return sum(counts.values())


def _generate_tables(
    con: duckdb.DuckDBPyConnection,
    spec: DomainSpec,
    scale: float,
    seed: int,
    chunk_rows: int,
    report: ProgressFn,
) -> dict[str, int]:
    """Generates every table in FK order straight into ``wh.raw`` (stressed) and the manifest.

    Only tables that other tables read (parents, SCD entities, inputs of derived SQL) are also
    kept clean in ``_gen``; leaf tables go from the generating query to ``raw`` directly, the
    query being run a second time (cheap: no I/O) to list the rows their stressors touched.
    """
    calendars: dict[tuple[str, date, date], tuple[str, str]] = {}

    def calendar(name: str, start: date, end: date) -> tuple[str, str]:
        key = (name, start, end)
        if key not in calendars:
            label = f"{name}_{start:%Y%m%d}_{end:%Y%m%d}"
            calendars[key] = register_calendar(con, label, spec.calendars[name], start, end)
        return calendars[key]

    today = spec.faker_today()

    def pool(gen: FakerGen, _table: str, _column: str) -> str:
        return register_pool(con, gen, today)

    ctx = BuildContext(spec, seed, scale, pool, calendar)
    estimates = estimated_rows(spec, scale)
    read_by_others = {p for t in spec.tables for p in spec.parents_of(t)}
    for table in spec.generation_order():
        total = estimates[table.name]

        def chunk_done(n: int, name: str = table.name, total: int = total) -> None:
            report(RowsGenerated(table=name, rows=n, total_rows=total))

        try:
            rows = _build_table(
                con,
                spec,
                table,
                ctx,
                chunk_rows,
                chunk_done,
                keep_clean=table.name in read_by_others,
            )
        except duckdb.Error as err:
            first = str(err).strip().splitlines()[0]
            where = "".join(f"\n  {path}: {msg}" for path, msg in sql_problems(spec))
            raise GenerationError(
                f"table '{table.name}' could not be generated: {first}{where}"
            ) from err
        ctx.parent_rows[table.name] = rows
    return dict(ctx.parent_rows)


def _build_table(
    con: duckdb.DuckDBPyConnection,
    spec: DomainSpec,
    table: Table,
    ctx: BuildContext,
    chunk_rows: int,
    chunk_done: Callable[[int], None],
    keep_clean: bool,
) -> int:
    plan = stress_plan(spec, table, ctx.seed)
    clean = f"_gen.{quote(table.name)}"
    raw = f"wh.raw.{quote(table.name)}"
    if table.derived_sql:
        rows = build_derived_table(con, table)
        chunk_done(rows)
        query = None
    elif table.scd:
        query, rows = scd_table_query(con, table, ctx)
    else:
        query, rows = plain_table_query(table, ctx), table.row_count(ctx.scale)
    if query is not None and keep_clean:
        materialize(con, clean, query, rows, chunk_rows, chunk_done)
    if query is None or keep_clean:
        con.execute(f"CREATE TABLE {raw} AS {plan.raw_sql(clean)}")
        manifest = plan.manifest_sql(f"SELECT * FROM {clean}")
        if manifest:
            con.execute(manifest)
    else:
        for lo in range(0, max(rows, 1), chunk_rows):
            chunk = query.format(lo=lo, hi=min(rows, lo + chunk_rows))
            verb = f"CREATE TABLE {raw} AS" if lo == 0 else f"INSERT INTO {raw}"
            con.execute(f"{verb} {plan.raw_sql(f'({chunk})')}")
            manifest = plan.manifest_sql(chunk)
            if manifest:
                con.execute(manifest)
            chunk_done(min(rows, lo + chunk_rows) - lo)
    if table.scd:
        drop_scd_base(con, table)
    return rows


def _export(
    con: duckdb.DuckDBPyConnection,
    spec: DomainSpec,
    out: Path,
    counts: dict[str, int],
    report: ProgressFn,
) -> dict[str, TableSummary]:
    parquet_dir = out / PARQUET_DIR
    parquet_dir.mkdir()
    tables: dict[str, TableSummary] = {}
    for table in spec.tables:
        target = f"wh.raw.{quote(table.name)}"
        path = parquet_dir / f"{table.name}.parquet"
        con.execute(f"COPY {target} TO '{path}' (FORMAT parquet, COMPRESSION zstd)")
        ncols = len(con.execute(f"DESCRIBE {target}").fetchall())
        tables[table.name] = TableSummary(
            rows=counts[table.name],
            columns=ncols,
            parquet_sha256=_sha256(path),
            parquet_bytes=path.stat().st_size,
        )
        report(TableExported(table=table.name, rows=counts[table.name]))
    return tables


def _anomaly_counts(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, dict[str, int]]]:
    rows = con.execute(
        "SELECT table_name, coalesce(column_name, ''), kind, count(*) FROM _meta.anomalies "
        "GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    result: dict[str, dict[str, dict[str, int]]] = {}
    for table, column, kind, n in rows:
        result.setdefault(table, {}).setdefault(column, {})[kind] = int(n)
    return result


def read_manifest(dataset_dir: Path) -> GenerationManifest:
    return GenerationManifest.model_validate(json.loads((dataset_dir / MANIFEST).read_text()))

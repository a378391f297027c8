"""Flow ``import-dataset``: a folder of CSV / Parquet files, a DuckDB file or a PostgreSQL
database -> load -> profile + validate (Great Expectations) -> publish a dataset.

The steps are the library's (:mod:`benchforge.synthesis.importer`); the source is checked and
its tables listed before anything is written, and a failure in any task publishes nothing.
"""

from __future__ import annotations

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from benchforge.core.publish import Target
from benchforge.core.records import DatasetRecord
from benchforge.core.settings import load_settings
from benchforge.flows.synthesize import artifact_key
from benchforge.synthesis.dataset import publish_dataset, staged
from benchforge.synthesis.importer import (
    ImportManifest,
    SourcePlan,
    check_name,
    default_location,
    profile_step,
    resolve_source,
    source_schema_options,
    stage_import,
    validate_step,
    write_record,
)
from benchforge.synthesis.importer.types import TypeOptions, check_declared_tables, type_options
from benchforge.synthesis.validation import ValidationReport


@task(name="load-source")
def load_task(
    plan: SourcePlan, target: Target, name: str, types: TypeOptions, source_schemas: list[str]
) -> ImportManifest:
    return stage_import(plan, target.staging, name, types=types, source_schemas=source_schemas)


@task(name="validate-dataset")
def validate_task(target: Target, name: str) -> ValidationReport:
    report = validate_step(target.staging, profile_step(target.staging, name))
    report.raise_for_failures()
    return report


@task(name="publish-dataset")
def publish_task(target: Target, report: ValidationReport | None) -> DatasetRecord:
    return publish_dataset(target, report, load_settings(), write_record)


def summary(record: DatasetRecord, manifest: ImportManifest) -> str:
    """The run's markdown artifact: where the data came from and every table imported."""
    stamp = manifest.source
    schema = f" (schema `{stamp.db_schema}`)" if stamp.db_schema else ""
    checks = (
        f"{record.validation_expectations} profile-derived expectations passed"
        if record.validation_success
        else "not run"
    )
    lines = [
        f"# Imported dataset {record.domain}",
        "",
        f"- source: {stamp.kind} `{stamp.location}`{schema}",
        f"- location: `{record.location}`",
        f"- rows: {record.total_rows:,} in {len(manifest.tables)} tables",
        f"- Great Expectations: {checks}",
        *(
            [f"- source schemas (views over raw): {', '.join(manifest.source_schemas)}"]
            if manifest.source_schemas
            else []
        ),
        "",
        "| table | from | rows | columns |",
        "|---|---|---|---|",
    ]
    for name, table in manifest.tables.items():
        lines.append(f"| {name} | `{stamp.tables[name]}` | {table.rows:,} | {table.columns} |")
    return "\n".join(lines)


@flow(name="import-dataset")
def import_dataset(
    source: str,
    name: str,
    out: str | None = None,
    db_schema: str | None = None,
    tables: list[str] | None = None,
    run_validation: bool = True,
    keep_source_types: bool = False,
    column_types: str | None = None,
    source_schemas: list[str] | None = None,
) -> DatasetRecord:
    """Imports ``source`` as the dataset ``name`` and publishes it to ``out``.

    Args:
        source: a folder of CSV / Parquet files (one table per file), a DuckDB database file,
            or a postgresql:// URL. Flow parameters are stored by Prefect: give a PostgreSQL
            password through PGPASSWORD or ~/.pgpass, not in the URL (``benchforge dataset
            import`` moves one found in the URL to PGPASSWORD for you).
        name: the dataset's name (its domain in task specs).
        out: a folder or s3:// prefix; default <artifact_root>/datasets-imported/NAME.
        db_schema: the database schema to import (DuckDB: raw if it exists, else main;
            PostgreSQL: public).
        tables: only these tables (by their name in the dataset).
        run_validation: profile the data and validate it with Great Expectations before
            publishing (a parameter named ``validate`` would shadow an attribute of Prefect's
            parameter model).
        keep_source_types: keep each column's type as the source gives it, instead of the
            canonical types every route agrees on (BIGINT, DOUBLE, VARCHAR, ...).
        column_types: a YAML file ``table: {column: TYPE}`` of declared DuckDB types,
            applied after the canonical mapping and recorded in the manifest and profile.
        source_schemas: schemas that get one view per table over raw (``S.t`` = ``select *
            from raw.t``), for dbt sources that read another schema; listed in the manifest.
    """
    logger = get_run_logger()
    check_name(name)
    schemas = source_schema_options(source_schemas)  # all fail before writing
    types = type_options(keep_source_types, column_types)
    plan = resolve_source(source, db_schema=db_schema, tables=tables)
    check_declared_tables(types, [t.name for t in plan.tables])
    with staged(out or default_location(name)) as target:
        manifest = load_task(plan, target, name, types, schemas)
        logger.info("loaded %s rows of %d tables", f"{manifest.total_rows:,}", len(plan.tables))
        report = validate_task(target, name) if run_validation else None
        if report is not None:
            logger.info("%d expectations passed", len(report.results))
        record = publish_task(target, report)
    create_markdown_artifact(
        key=artifact_key(f"dataset-import-{name}"),
        markdown=summary(record, manifest),
        description=f"Imported dataset {name}",
    )
    return record

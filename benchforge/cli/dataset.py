"""``benchforge dataset import``: bring a dataset Benchforge did not synthesize."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchforge.cli.common import Subparsers
from benchforge.cli.prefect_server import use_prefect


def add_parser(sub: Subparsers) -> None:
    dataset = sub.add_parser(
        "dataset",
        help="import a dataset from CSV / Parquet files, a DuckDB file or PostgreSQL",
        description="Datasets Benchforge did not synthesize.",
    )
    commands = dataset.add_subparsers(dest="dataset_command", required=True, metavar="COMMAND")
    imp = commands.add_parser(
        "import",
        help="import a folder of CSV / Parquet files, a DuckDB file or a PostgreSQL schema",
        description=(
            "Import SOURCE as the dataset NAME: a folder of CSV / Parquet files (one table per\n"
            "file, named after the file), a DuckDB database file (the tables of schema raw if\n"
            "it has one, else main) or a postgresql://USER@HOST:PORT/DB URL (the tables of\n"
            "schema public). OUT (a folder or s3://bucket/prefix) gets warehouse.duckdb (schema\n"
            "raw), parquet/, manifest.json (rows and sha256 per table), validation/ (profile-\n"
            "derived Great Expectations checks and Data Docs) and dataset.json, written last;\n"
            "nothing is published if any step fails. Column types are the same whatever the\n"
            "route: integers BIGINT, decimals and floats DOUBLE, text (and UUID, JSON, enums)\n"
            "VARCHAR, timestamps TIMESTAMP (docs/importing.md); --keep-source-types keeps the\n"
            "source's, --column-types FILE (YAML table: {column: TYPE}) declares some.\n"
            "--source-schema S (repeatable) adds schema S with a view per table over raw\n"
            "(S.t = select * from raw.t), for a dbt project whose sources read schema S.\n"
            "Use it in a task spec as\n"
            "  dataset: {domain: NAME, location: OUT}\n"
            "Runs as the Prefect flow 'import-dataset'."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    imp.add_argument("source", help="folder, DuckDB file or postgresql:// URL")
    imp.add_argument("--name", required=True, help="the dataset's name (its domain in tasks)")
    imp.add_argument(
        "--out",
        help="folder or s3://bucket/prefix (default <artifact_root>/datasets-imported/NAME)",
    )
    imp.add_argument("--schema", help="database schema to import (DuckDB, PostgreSQL)")
    imp.add_argument("--tables", help="comma-separated tables to import (default: all)")
    imp.add_argument("--no-validate", action="store_true", help="skip Great Expectations")
    imp.add_argument(
        "--keep-source-types",
        action="store_true",
        help="keep each column's type as the source gives it (no canonical mapping)",
    )
    imp.add_argument(
        "--column-types",
        metavar="FILE",
        help="YAML table: {column: TYPE} of declared DuckDB types, applied last",
    )
    imp.add_argument(
        "--source-schema",
        dest="source_schemas",
        action="append",
        metavar="SCHEMA",
        help="also give every table as a view SCHEMA.table over raw.table (repeatable)",
    )
    imp.add_argument(
        "--no-prefect", action="store_true", help="run the library directly, not as a flow"
    )
    imp.set_defaults(func=import_command)


def import_command(args: argparse.Namespace) -> int:
    from benchforge.synthesis.importer.postgres import is_postgres_url, split_password

    source = args.source
    if is_postgres_url(source):
        source, password = split_password(source)
        if password is not None:  # never a flow parameter or a log line
            os.environ["PGPASSWORD"] = password
    tables = None
    if args.tables is not None:
        tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    if args.no_prefect:
        from benchforge.synthesis.importer import import_dataset

        record = import_dataset(
            source,
            name=args.name,
            out=args.out,
            db_schema=args.schema,
            tables=tables,
            validate=not args.no_validate,
            keep_source_types=args.keep_source_types,
            column_types=args.column_types,
            source_schemas=args.source_schemas,
        )
    else:
        use_prefect(args.verbose, has_no_prefect=True)
        from benchforge.flows.dataset_import import import_dataset as import_flow

        record = import_flow(
            source=source,
            name=args.name,
            out=args.out,
            db_schema=args.schema,
            tables=tables,
            run_validation=not args.no_validate,
            keep_source_types=args.keep_source_types,
            column_types=(
                str(Path(args.column_types).expanduser().absolute()) if args.column_types else None
            ),
            source_schemas=args.source_schemas,
        )
    stamp = record.imported
    tables_count = len(record.table_checksums)
    print(f"dataset {record.domain}: {record.total_rows:,} rows in {tables_count} tables")
    print(f"  -> {record.location}")
    if stamp is not None:
        print(
            f"  imported from {stamp.location}"
            + (f" (schema {stamp.db_schema})" if stamp.db_schema else "")
        )
    if args.source_schemas:
        print(f"  views over raw in schema {', '.join(args.source_schemas)}")
    if record.validation_success is not None:
        print(f"  Great Expectations: {record.validation_expectations} expectations passed")
    return 0

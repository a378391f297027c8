"""``perturb``: a dataset's tables spread over logical databases with their keys rewritten,
some columns written into free text, some tables turned into JSON documents; written with
``db_config.yaml``, ``schema.md``, ``hints.md`` and the record ``perturbations.json``. The
dataset itself is not touched: gold answers are computed on it, before perturbation."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import duckdb
import yaml

from benchforge.core.artifacts import LAYOUT
from benchforge.core.derivations import register_derivation
from benchforge.core.engines.config import DB_CONFIG_FILE
from benchforge.core.engines.models import DbConfig
from benchforge.core.llm import LlmConfig
from benchforge.core.records import DatasetRecord
from benchforge.core.settings import load_settings
from benchforge.synthesis.engine.generate import WAREHOUSE
from benchforge.synthesis.perturb.describe import hints_markdown, schema_markdown
from benchforge.synthesis.perturb.embed import embed_columns
from benchforge.synthesis.perturb.keys import reformat_keys
from benchforge.synthesis.perturb.loader import check_against_dataset, load_perturb_spec
from benchforge.synthesis.perturb.postgres_dump import (
    ensure_postgres_template,
    load_postgres_template,
    template_name,
    write_postgres_script,
)
from benchforge.synthesis.perturb.record import PerturbRecord, PlacedTable
from benchforge.synthesis.perturb.rewrite import SentenceRewriter
from benchforge.synthesis.perturb.spec import PerturbSpec
from benchforge.synthesis.perturb.working import column_types, dataset_columns, open_working_copy
from benchforge.synthesis.perturb.writers import write_duckdb, write_sqlite

RECORD_FILE = "perturbations.json"
SCHEMA_FILE = "schema.md"
HINTS_FILE = "hints.md"
DATABASES_DIR = "databases"
POSTGRES_DIR = "postgres"


def perturb(
    dataset_dir: Path | str,
    spec: PerturbSpec | Path | str,
    out_dir: Path | str,
    seed: int,
    rewriter: SentenceRewriter | None = None,
) -> PerturbRecord:
    """Writes the perturbed databases of ``dataset_dir`` and their descriptions to ``out_dir``.
    ``spec``: a spec or its YAML file (named in errors). PostgreSQL databases are written as
    scripts (``postgres/<name>.sql``); :func:`load_postgres_templates` loads them.
    ``rewriter``: for embed rules with ``rewrite``; default: the LLM client as the settings
    configure it (``openai_base_url``, ``openai_api_key``)."""
    dataset_dir, out_dir = Path(dataset_dir), Path(out_dir)
    source: Path | str = spec if not isinstance(spec, PerturbSpec) else "<perturb spec>"
    if not isinstance(spec, PerturbSpec):
        spec = load_perturb_spec(spec)
    warehouse = dataset_dir / WAREHOUSE
    dataset = DatasetRecord.model_validate_json(
        LAYOUT.dataset_record_file(dataset_dir).read_text(encoding="utf-8")
    )
    check_against_dataset(spec, dataset_columns(warehouse), source)
    placement = spec.placement()
    spec_sha = hashlib.sha256(spec.model_dump_json().encode()).hexdigest()
    dataset_sha = hashlib.sha256(
        json.dumps(dataset.table_checksums, sort_keys=True).encode()
    ).hexdigest()
    out_dir.mkdir(parents=True, exist_ok=True)
    with open_working_copy(warehouse, placement) as con:
        keys = [change for key in spec.keys for change in reformat_keys(con, key, seed)]
        if rewriter is None and any(rule.rewrite is not None for rule in spec.embed):
            rewriter = settings_rewriter()
        embeds = [embed_columns(con, rule, seed, rewriter) for rule in spec.embed]
        documents = {
            table: column_types(con, table)
            for db in spec.databases.values()
            for table in db.documents
        }
        templates = {
            name: template_name(name, f"{spec_sha}\0{dataset_sha}\0{seed}")
            for name, db in spec.databases.items()
            if db.engine == "postgres"
        }
        tables = _write_databases(con, spec, out_dir)
    record = PerturbRecord(
        seed=seed,
        spec_sha256=spec_sha,
        dataset_domain=dataset.domain,
        dataset_sha256=dataset_sha,
        tables=tables,
        key_changes=keys,
        embeds=embeds,
        postgres_templates=templates,
    )
    (out_dir / DB_CONFIG_FILE).write_text(_db_config_yaml(spec, templates), encoding="utf-8")
    (out_dir / SCHEMA_FILE).write_text(schema_markdown(spec, record, documents), encoding="utf-8")
    (out_dir / HINTS_FILE).write_text(hints_markdown(spec, record), encoding="utf-8")
    (out_dir / RECORD_FILE).write_text(record.json_text(), encoding="utf-8")
    return record


def settings_rewriter() -> SentenceRewriter:
    """The sentence rewriter on the LLM endpoint and key of the Benchforge settings."""
    settings = load_settings()
    return SentenceRewriter(lambda model: LlmConfig.from_settings(settings, "perturb", model))


def read_perturb_record(out_dir: Path | str) -> PerturbRecord:
    return PerturbRecord.model_validate_json((Path(out_dir) / RECORD_FILE).read_text("utf-8"))


def load_postgres_templates(out_dir: Path | str, admin_url: str) -> dict[str, str]:
    """Loads every PostgreSQL database of a perturbed dataset into its template database on
    ``admin_url``'s server; returns logical name -> template name."""
    out_dir = Path(out_dir)
    templates = read_perturb_record(out_dir).postgres_templates
    for logical, template in templates.items():
        load_postgres_template(admin_url, out_dir / POSTGRES_DIR / f"{logical}.sql", template)
    return templates


def ensure_postgres_templates(out_dir: Path | str, admin_url: str) -> dict[str, str]:
    """As :func:`load_postgres_templates`, but a template that exists on the server already is
    kept (its name is a digest of the spec, dataset and seed: the same data): what a run
    calls before its trials, once per perturbed dataset."""
    out_dir = Path(out_dir)
    templates = read_perturb_record(out_dir).postgres_templates
    for logical, template in templates.items():
        ensure_postgres_template(admin_url, out_dir / POSTGRES_DIR / f"{logical}.sql", template)
    return templates


def _write_databases(
    con: duckdb.DuckDBPyConnection, spec: PerturbSpec, out_dir: Path
) -> list[PlacedTable]:
    placed: list[PlacedTable] = []
    for name, database in spec.databases.items():
        tables = {t: False for t in database.tables} | {t: True for t in database.documents}
        if database.engine == "duckdb":
            (out_dir / DATABASES_DIR).mkdir(exist_ok=True)
            written = write_duckdb(con, out_dir / DATABASES_DIR / f"{name}.duckdb", tables)
        elif database.engine == "sqlite":
            (out_dir / DATABASES_DIR).mkdir(exist_ok=True)
            written = write_sqlite(con, out_dir / DATABASES_DIR / f"{name}.sqlite", list(tables))
        else:
            (out_dir / POSTGRES_DIR).mkdir(exist_ok=True)
            written = write_postgres_script(con, out_dir / POSTGRES_DIR / f"{name}.sql", tables)
        for table, as_documents in tables.items():
            counted = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()
            placed.append(
                PlacedTable(
                    table=table,
                    database=name,
                    engine=database.engine,
                    as_documents=as_documents,
                    rows=int(counted[0]) if counted else 0,
                    columns=written[table],
                )
            )
    return placed


def _db_config_yaml(spec: PerturbSpec, templates: dict[str, str]) -> str:
    databases: dict[str, dict[str, Any]] = {}
    for name, database in spec.databases.items():
        entry: dict[str, Any] = {"engine": database.engine, "description": database.description}
        if database.engine == "postgres":
            entry["template"] = templates[name]
        else:
            suffix = "duckdb" if database.engine == "duckdb" else "sqlite"
            entry["path"] = f"{DATABASES_DIR}/{name}.{suffix}"
        databases[name] = entry
    DbConfig.model_validate({"databases": databases})  # the engines layer reads what we write
    return yaml.safe_dump({"databases": databases}, sort_keys=False, allow_unicode=True)


def _derive(dataset_dir: Path, spec_file: Path, out_dir: Path, seed: int) -> None:
    perturb(dataset_dir, spec_file, out_dir, seed)


register_derivation("perturb", _derive)  # for the families that give agents perturbed data

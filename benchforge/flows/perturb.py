"""Flow ``perturb``: a dataset -> the multi-database dataset of ``dab_query`` tasks (tables
spread over DuckDB / SQLite / PostgreSQL, keys reformatted, columns written into text, JSON
documents), optionally loading its PostgreSQL databases as templates on a server.

The steps are the library's (:mod:`benchforge.synthesis.perturb`); the spec is read and checked
against the dataset before anything is written."""

from __future__ import annotations

from typing import Annotated

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from pydantic import Field

from benchforge.flows.synthesize import artifact_key
from benchforge.synthesis.perturb import (
    PerturbRecord,
    load_perturb_spec,
    load_postgres_templates,
    perturb,
)

Seed = Annotated[int, Field(ge=0)]


@task(name="perturb-dataset")
def perturb_task(dataset: str, spec: str, out: str, seed: int) -> PerturbRecord:
    return perturb(dataset, spec, out, seed)


@task(name="load-postgres-templates")
def load_templates_task(out: str, postgres_url: str) -> dict[str, str]:
    return load_postgres_templates(out, postgres_url)


def summary(record: PerturbRecord, out: str, loaded: dict[str, str]) -> str:
    """The run's markdown artifact: where each table went and every change made."""
    lines = [
        f"# Perturbed dataset {record.dataset_domain} (seed {record.seed})",
        "",
        f"- location: `{out}`",
        *(f"- PostgreSQL template `{t}` loaded for `{name}`" for name, t in loaded.items()),
        "",
        "| table | database | engine | rows | as documents |",
        "|---|---|---|---|---|",
        *(
            f"| {t.table} | {t.database} | {t.engine} | {t.rows:,} | {t.as_documents} |"
            for t in record.tables
        ),
        "",
        "| change | table.column | parameters | rows |",
        "|---|---|---|---|",
        *(
            f"| {k.kind} | {k.table}.{k.column} | {k.parameters} | {k.rows_changed:,} |"
            for k in record.key_changes
        ),
        *(
            f"| embed | {e.table}.{'+'.join(e.columns)} -> {e.into} | "
            f"{len(e.templates)} templates | {e.rows_embedded:,} |"
            for e in record.embeds
        ),
    ]
    return "\n".join(lines)


@flow(name="perturb")
def perturb_dataset(
    dataset: str,
    spec: str,
    out: str,
    seed: Seed = 1,
    postgres_url: str | None = None,
) -> PerturbRecord:
    """Perturbs the local dataset folder ``dataset`` by the perturb spec ``spec`` into ``out``.

    Args:
        dataset: a local dataset folder (``warehouse.duckdb`` + ``dataset.json``).
        spec: a perturb spec YAML file (e.g. task_specs/dab-crm/perturb.yaml).
        out: the local folder written: databases, db_config.yaml, schema.md, hints.md,
            perturbations.json.
        seed: every perturbation is a function of the seed.
        postgres_url: an admin URL of the PostgreSQL server whose template databases trials
            copy; None writes the PostgreSQL scripts only. Flow parameters are stored by
            Prefect: give a password through PGPASSWORD or ~/.pgpass, not in the URL.
    """
    logger = get_run_logger()
    load_perturb_spec(spec)  # a malformed spec fails here, naming its file and field
    record = perturb_task(dataset, spec, out, seed)
    logger.info(
        "%d tables in %d databases, %d key changes, %d embeds",
        len(record.tables),
        len({t.database for t in record.tables}),
        len(record.key_changes),
        len(record.embeds),
    )
    loaded = load_templates_task(out, postgres_url) if postgres_url else {}
    create_markdown_artifact(
        key=artifact_key(f"perturb-{record.dataset_domain}-seed-{seed}"),
        markdown=summary(record, out, loaded),
        description=f"Perturbed dataset {record.dataset_domain}",
    )
    return record

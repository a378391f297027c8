"""Flow ``build_exploration_environment``: a dataset (synthesized, imported or an anonymized
release) -> a DataClawBench-style exploration environment: folders of CSV tables and Markdown
policy texts with seeded noise and no schema documentation, plus the hidden record
``noise.json`` beside it.

The steps are the library's (:mod:`benchforge.synthesis.explore_env`); the spec is read and
checked against the dataset before anything is written."""

from __future__ import annotations

from typing import Annotated

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from pydantic import Field

from benchforge.flows.synthesize import artifact_key
from benchforge.synthesis.explore_env import (
    EnvironmentRecord,
    build_environment,
    load_environment_spec,
)

Seed = Annotated[int, Field(ge=0)]


@task(name="build-environment")
def build_task(dataset: str, spec: str, out: str, seed: int) -> EnvironmentRecord:
    return build_environment(dataset, spec, out, seed)


def summary(record: EnvironmentRecord, out: str) -> str:
    """The run's markdown artifact: every table written and the noise applied to it."""
    lines = [
        f"# Exploration environment of {record.dataset_domain} (seed {record.seed})",
        "",
        f"- location: `{out}` (the environment: `environment/`; the record: `noise.json`)",
        f"- files: {len(record.files):,}",
        "",
        "| table | rows | totals | variants | rounding | units | missing |",
        "|---|---|---|---|---|---|---|",
        *(
            f"| {t.table} | {t.rows:,} | {len(t.totals.rows) if t.totals else 0} "
            f"| {sum(v.rows_changed for v in t.variants)} "
            f"| {sum(sum(r.rows_per_decimals.values()) for r in t.rounding)} "
            f"| {', '.join(u.column for u in t.units)} "
            f"| {sum(len(m.cells) for m in t.missing)} |"
            for t in record.tables
        ),
        "",
        "| derived | kind | from | rows |",
        "|---|---|---|---|",
        *(f"| {d.name} | {d.kind} | {d.source_table} | {d.rows:,} |" for d in record.derived),
    ]
    return "\n".join(lines)


@flow(name="build_exploration_environment")
def build_exploration_environment(
    dataset: str, spec: str, out: str, seed: Seed = 1
) -> EnvironmentRecord:
    """Builds the exploration environment of the local dataset folder ``dataset``.

    Args:
        dataset: a local dataset folder (``warehouse.duckdb`` + ``dataset.json``); an
            anonymized release is one.
        spec: an environment spec YAML file (e.g.
            task_specs/explore-enterprise/environment.yaml).
        out: the local folder written: ``environment/`` (what agents read) and ``noise.json``
            (the record, never shown to agents).
        seed: every noise decision is a function of the seed.
    """
    logger = get_run_logger()
    load_environment_spec(spec)  # a malformed spec fails here, naming its file and field
    record = build_task(dataset, spec, out, seed)
    logger.info(
        "%d tables, %d derived, %d files",
        len(record.tables),
        len(record.derived),
        len(record.files),
    )
    create_markdown_artifact(
        key=artifact_key(f"explore-{record.dataset_domain}-seed-{seed}"),
        markdown=summary(record, out),
        description=f"Exploration environment of {record.dataset_domain}",
    )
    return record

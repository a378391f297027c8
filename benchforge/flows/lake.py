"""Flow ``build-lake``: a dataset -> the data lake of lake pipeline tasks (KramaBench style):
exports split into files of mixed formats, prose reports, seeded distractors, each file's
provenance in ``lake_record.json``; with ``obscured``, also the obscured lake and its mapping.

The steps are the library's (:mod:`benchforge.synthesis.lake`); the spec is read before
anything is written, and checked against the dataset by each step."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from pydantic import Field

from benchforge.flows.synthesize import artifact_key
from benchforge.synthesis import lake

Seed = Annotated[int, Field(ge=0)]

OBSCURED_DIR = "obscured"


@task(name="build-lake")
def build_lake_task(dataset: str, spec: str, out: str, seed: int) -> lake.LakeRecord:
    return lake.build_lake(dataset, spec, out, seed)


@task(name="obscure-lake")
def obscure_task(dataset: str, spec: str, out: str, seed: int) -> lake.LakeRecord:
    return lake.obscure(dataset, spec, out, seed).record  # the mapping stays on disk


def summary(record: lake.LakeRecord, out: str, obscured_out: str | None) -> str:
    """The run's markdown artifact: every file, its role, source table and rows."""
    lines = [
        f"# Data lake of {record.dataset_domain} (seed {record.seed})",
        "",
        f"- lake: `{Path(out) / lake.LAKE_DIR}`; record: `{Path(out) / lake.RECORD_FILE}`",
        *([f"- obscured lake: `{obscured_out}`"] if obscured_out else []),
        "",
        "| file | role | table | rows | format |",
        "|---|---|---|---|---|",
        *(
            f"| {f.path} | {f.distractor or f.role} | {f.table} | {f.rows:,} | {f.format} |"
            for f in record.files
        ),
    ]
    return "\n".join(lines)


@flow(name="build-lake")
def build_lake(
    dataset: str,
    spec: str,
    out: str,
    seed: Seed = 1,
    obscured: bool = False,
) -> lake.LakeRecord:
    """Writes the lake of the local dataset folder ``dataset`` by the lake spec ``spec``.

    Args:
        dataset: a local dataset folder (``warehouse.duckdb`` + ``dataset.json``): a shipped
            domain synthesized, an imported dataset or an anonymized release.
        spec: a lake spec YAML file (e.g. task_specs/lake-crm/lake.yaml).
        out: the local folder written: ``lake/`` (the files an agent is given) and
            ``lake_record.json`` (every file's provenance).
        seed: every split, format, encoding, delimiter and distractor is a function of it.
        obscured: also write the obscured lake (identifiers, names and numbers replaced) and
            its mapping under ``out/obscured``.
    """
    logger = get_run_logger()
    lake.load_lake_spec(spec)  # a malformed spec fails here, naming its file and field
    record = build_lake_task(dataset, spec, out, seed)
    roles = {role: sum(f.role == role for f in record.files) for role in ("export", "report")}
    logger.info(
        "%d files: %d exports, %d reports, %d distractors",
        len(record.files),
        roles["export"],
        roles["report"],
        len(record.files) - sum(roles.values()),
    )
    obscured_out = str(Path(out) / OBSCURED_DIR) if obscured else None
    if obscured_out:
        obscure_task(dataset, spec, obscured_out, seed)
    create_markdown_artifact(
        key=artifact_key(f"lake-{record.dataset_domain}-seed-{seed}"),
        markdown=summary(record, out, obscured_out),
        description=f"Data lake of {record.dataset_domain}",
    )
    return record

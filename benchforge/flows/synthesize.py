"""Flow ``synthesize``: generate -> validate (Great Expectations) -> publish a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from pydantic import Field

from benchforge.core.progress import emit
from benchforge.core.publish import Target
from benchforge.core.records import DatasetRecord
from benchforge.core.settings import load_settings
from benchforge.harness.datasets import default_dataset_location
from benchforge.synthesis.dataset import publish_dataset, staged, validate_step
from benchforge.synthesis.engine import generate_dataset
from benchforge.synthesis.engine.preflight import check_generates
from benchforge.synthesis.spec import load_domain
from benchforge.synthesis.spec.loader import domain_spec_path
from benchforge.synthesis.validation import ValidationReport

Scale = Annotated[float, Field(gt=0, le=1000)]
Seed = Annotated[int, Field(ge=0)]


def artifact_key(text: str) -> str:
    """Prefect artifact keys allow lower-case letters, digits and dashes only."""
    return "".join(c if c.isalnum() else "-" for c in text.lower())[:100]


@task(name="generate-dataset")
def generate_task(domain: str, scale: float, seed: int, target: Target) -> int:
    manifest = generate_dataset(
        load_domain(domain), scale=scale, seed=seed, out=target.staging, on_progress=emit
    )
    return manifest.total_rows


@task(name="validate-dataset")
def validate_task(domain: str, target: Target) -> ValidationReport:
    report = validate_step(load_domain(domain), target.staging)
    report.raise_for_failures()
    return report


@task(name="publish-dataset")
def publish_task(target: Target, report: ValidationReport | None) -> DatasetRecord:
    return publish_dataset(target, report, load_settings())


@flow(name="synthesize")
def synthesize(
    domain: str = "crm",
    scale: Scale = 1.0,
    seed: Seed = 7,
    out: str | None = None,
    run_validation: bool = True,
) -> DatasetRecord:
    """Builds a dataset of ``domain`` at ``scale`` from ``seed`` and publishes it to ``out``.

    Args:
        domain: a shipped domain (crm, ads, enterprise) or the path of a domain spec YAML.
        scale: size multiplier; 1.0 is the domain's reference size (crm: about 1 M rows).
        seed: every value is a function of the seed: the same seed gives the same data.
        out: a folder or s3:// prefix; default <artifact_root>/datasets/DOMAIN/scale-S/seed-N.
        run_validation: run the Great Expectations suite before publishing (a parameter
            named ``validate`` would shadow an attribute of Prefect's parameter model).
    """
    logger = get_run_logger()
    # A malformed spec, or one that would not generate, fails here, before anything is written.
    check_generates(load_domain(domain), str(domain_spec_path(domain)))
    with staged(out or default_dataset_location(domain, scale, seed)) as target:
        rows = generate_task(domain, scale, seed, target)
        logger.info("generated %s rows of %s", f"{rows:,}", domain)
        report = validate_task(domain, target) if run_validation else None
        if report is not None:
            logger.info("%d expectations passed", len(report.results))
        record = publish_task(target, report)
    create_markdown_artifact(
        key=artifact_key(f"dataset-{Path(domain).stem}"),
        markdown=(
            f"# Dataset {domain} (scale {scale:g}, seed {seed})\n\n"
            f"- location: `{record.location}`\n- rows: {record.total_rows:,}\n"
            f"- anomalies injected: {record.anomaly_total:,}\n"
            f"- expectations: {record.validation_expectations} "
            f"({'passed' if record.validation_success else 'not run'})\n"
        ),
        description=f"Synthesized {domain} dataset",
    )
    return record

"""Building a dataset end to end: generate -> validate -> record -> publish atomically.

Every step works on a hidden staging folder; only ``publish`` makes the dataset visible, and the
``dataset.json`` record is always written last, so a folder or S3 prefix without it is never a
dataset (an interrupted run leaves nothing that looks complete).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from benchforge.core.artifacts import LAYOUT
from benchforge.core.publish import Target, discard, prepare_target, publish
from benchforge.core.records import DatasetRecord, ImportStamp, Origin
from benchforge.core.settings import BenchforgeSettings, load_settings
from benchforge.synthesis.engine import (
    GenerationManifest,
    ProgressFn,
    TableSummary,
    generate_dataset,
    read_manifest,
)
from benchforge.synthesis.spec import DomainSpec, load_domain
from benchforge.synthesis.validation.report import ValidationReport

VALIDATION_DIR = "validation"

RecordWriter = Callable[[Target, "ValidationReport | None"], DatasetRecord]


def validate_step(spec: DomainSpec, staging: Path) -> ValidationReport:
    """Runs the expectation suite; Data Docs and results land in ``staging/validation``."""
    from benchforge.synthesis.validation import validate_dataset

    report = validate_dataset(spec, staging, docs_dir=staging / VALIDATION_DIR)
    return report


class StagedManifest(Protocol):
    """What the ``manifest.json`` of a staged dataset, synthesized or imported, says of it."""

    @property
    def domain(self) -> str: ...

    @property
    def tables(self) -> Mapping[str, TableSummary]: ...

    @property
    def total_rows(self) -> int: ...


def stage_record(
    target: Target,
    manifest: StagedManifest,
    report: ValidationReport | None,
    *,
    origin: Origin = "synthesized",
    seed: int | None = None,
    scale: float | None = None,
    anomaly_total: int = 0,
    imported: ImportStamp | None = None,
) -> DatasetRecord:
    """Writes ``dataset.json`` into the staging folder: the last file of a dataset, whatever its
    origin (the keyword arguments: how it came to be, see :class:`DatasetRecord`)."""
    record = DatasetRecord(
        domain=manifest.domain,
        origin=origin,
        seed=seed,
        scale=scale,
        imported=imported,
        created_at=datetime.now(UTC),
        location=target.out,
        total_rows=manifest.total_rows,
        anomaly_total=anomaly_total,
        table_checksums={n: t.parquet_sha256 for n, t in manifest.tables.items()},
        validation_success=report.success if report else None,
        validation_expectations=len(report.results) if report else 0,
    )
    LAYOUT.dataset_record_file(target.staging).write_text(record.model_dump_json(indent=2) + "\n")
    return record


def write_record(target: Target, report: ValidationReport | None) -> DatasetRecord:
    """Writes the synthesized dataset's ``dataset.json`` (seed, scale and anomalies from the
    engine's manifest) into the staging folder."""
    manifest: GenerationManifest = read_manifest(target.staging)
    return stage_record(
        target,
        manifest,
        report,
        seed=manifest.seed,
        scale=manifest.scale,
        anomaly_total=manifest.anomaly_total,
    )


@contextmanager
def staged(out: str) -> Iterator[Target]:
    """The staging target of a dataset bound for ``out`` (checked before anything is written),
    discarded when the block fails: a failure anywhere publishes nothing."""
    target = prepare_target(out)
    try:
        yield target
    except BaseException:
        discard(target)
        raise


def publish_dataset(
    target: Target,
    report: ValidationReport | None,
    settings: BenchforgeSettings,
    record: RecordWriter = write_record,
) -> DatasetRecord:
    """The last step of every dataset: ``record`` writes its ``dataset.json`` (synthesized:
    :func:`write_record`; imported: the importer's), then the staging folder is published."""
    written = record(target, report)
    publish(target, settings)
    return written


def build_dataset(
    domain: str | DomainSpec,
    *,
    scale: float = 1.0,
    seed: int = 7,
    out: str,
    validate: bool = True,
    settings: BenchforgeSettings | None = None,
    on_progress: ProgressFn | None = None,
) -> DatasetRecord:
    """The whole pipeline without an orchestrator (the Prefect flow composes the same steps)."""
    spec = load_domain(domain) if isinstance(domain, str) else domain
    settings = settings or load_settings()
    with staged(out) as target:
        generate_dataset(spec, scale=scale, seed=seed, out=target.staging, on_progress=on_progress)
        report = validate_step(spec, target.staging) if validate else None
        if report is not None:
            report.raise_for_failures()
        return publish_dataset(target, report, settings)

"""Building a dataset end to end: generate -> validate -> record -> publish atomically.

Every step works on a hidden staging folder; only ``publish`` makes the dataset visible, and the
``dataset.json`` record is always written last, so a folder or S3 prefix without it is never a
dataset (an interrupted run leaves nothing that looks complete).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.errors import BenchforgeError
from benchforge.core.records import DatasetRecord
from benchforge.core.settings import BenchforgeSettings, load_settings
from benchforge.synthesis.engine import (
    GenerationManifest,
    ProgressFn,
    generate_dataset,
    read_manifest,
)
from benchforge.synthesis.spec import DomainSpec, load_domain
from benchforge.synthesis.validation.report import ValidationReport

VALIDATION_DIR = "validation"


class DatasetError(BenchforgeError):
    """A dataset could not be built or published; nothing was published."""


class Target(BaseModel):
    """Where a dataset goes, and the local staging folder it is built in first."""

    out: str
    staging: Path
    is_s3: bool


def prepare_target(out: str) -> Target:
    """Checks the destination before any data is written and picks a staging folder."""
    if out.startswith("s3://"):
        bucket_and_prefix = out.removeprefix("s3://").strip("/")
        if "/" not in bucket_and_prefix:
            raise DatasetError(f"output {out}: give a prefix under the bucket (s3://bucket/name)")
        parent, _, name = out.rstrip("/").rpartition("/")
        open_store(parent).exists(LAYOUT.dataset_record(name))  # fails fast: bad bucket/endpoint
        staging = Path(tempfile.mkdtemp(prefix="benchforge-dataset-"))
        return Target(out=out.rstrip("/"), staging=staging / "data", is_s3=True)
    dest = Path(out).expanduser().resolve()
    if dest.exists() and not dest.is_dir():
        raise DatasetError(f"output {dest} exists and is not a folder")
    if dest.is_dir() and any(dest.iterdir()) and not LAYOUT.dataset_record_file(dest).exists():
        raise DatasetError(f"output {dest} is not empty and is not a Benchforge dataset")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        probe = dest.parent / f".{dest.name}.probe-{uuid.uuid4().hex}"
        probe.touch()
        probe.unlink()
    except OSError as err:
        raise DatasetError(f"output {dest} is not writable: {err.strerror or err}") from None
    staging = dest.parent / f".{dest.name}.staging-{uuid.uuid4().hex[:12]}"
    return Target(out=str(dest), staging=staging, is_s3=False)


def validate_step(spec: DomainSpec, staging: Path) -> ValidationReport:
    """Runs the expectation suite; Data Docs and results land in ``staging/validation``."""
    from benchforge.synthesis.validation import validate_dataset

    report = validate_dataset(spec, staging, docs_dir=staging / VALIDATION_DIR)
    return report


def write_record(target: Target, report: ValidationReport | None) -> DatasetRecord:
    """Writes ``dataset.json`` into the staging folder: the last file of a dataset."""
    manifest: GenerationManifest = read_manifest(target.staging)
    record = DatasetRecord(
        domain=manifest.domain,
        seed=manifest.seed,
        scale=manifest.scale,
        created_at=datetime.now(UTC),
        location=target.out,
        total_rows=manifest.total_rows,
        anomaly_total=manifest.anomaly_total,
        table_checksums={n: t.parquet_sha256 for n, t in manifest.tables.items()},
        validation_success=report.success if report else None,
        validation_expectations=len(report.results) if report else 0,
    )
    LAYOUT.dataset_record_file(target.staging).write_text(record.model_dump_json(indent=2) + "\n")
    return record


def publish(target: Target, settings: BenchforgeSettings | None = None) -> str:
    """Moves the staging folder into place (local) or uploads it record-last (S3)."""
    if not LAYOUT.dataset_record_file(target.staging).exists():
        raise DatasetError("refusing to publish a dataset without its record")
    if target.is_s3:
        parent, _, name = target.out.rpartition("/")
        store = open_store(parent, settings)
        record_key = LAYOUT.dataset_record(name)
        if store.exists(record_key):
            store.delete(record_key)  # the old dataset stops looking complete first
            store.delete_prefix(name)
        store.put_dir(name, target.staging, marker=LAYOUT.DATASET_RECORD)
        shutil.rmtree(target.staging.parent, ignore_errors=True)
        return target.out
    dest = Path(target.out)
    old = dest.parent / f".{dest.name}.old-{uuid.uuid4().hex[:12]}"
    if dest.exists():
        os.rename(dest, old)
    os.rename(target.staging, dest)
    shutil.rmtree(old, ignore_errors=True)
    return str(dest)


def discard(target: Target) -> None:
    shutil.rmtree(target.staging.parent if target.is_s3 else target.staging, ignore_errors=True)


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
    target = prepare_target(out)
    try:
        generate_dataset(spec, scale=scale, seed=seed, out=target.staging, on_progress=on_progress)
        report = validate_step(spec, target.staging) if validate else None
        if report is not None:
            report.raise_for_failures()
        record = write_record(target, report)
        publish(target, settings)
        return record
    except BaseException:
        discard(target)
        raise

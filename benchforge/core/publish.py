"""Publishing a dataset folder atomically: build it in a hidden staging folder, then move it into
place (local) or upload it with ``dataset.json`` last (S3). A folder or S3 prefix without its
record is never a dataset, so an interrupted build or upload leaves nothing that looks complete.
Both the synthesizer and the anonymizer publish through here."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

from pydantic import BaseModel

from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.errors import BenchforgeError
from benchforge.core.settings import BenchforgeSettings


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

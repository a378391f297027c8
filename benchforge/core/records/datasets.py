"""The completion records of the stages before a run: a published dataset and a gold build."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pydantic import BaseModel

GOLD_DB = "gold.duckdb"


class DatasetRecord(BaseModel):
    """The completion marker of a published dataset (``dataset.json``, written last)."""

    domain: str
    seed: int
    scale: float
    created_at: datetime
    location: str
    total_rows: int
    anomaly_total: int
    table_checksums: dict[str, str]
    validation_success: bool | None
    validation_expectations: int
    release: ReleaseStamp | None = None


class ReleaseStamp(BaseModel):
    """Set on an anonymized release: what it was made from and under which policy. No original
    value, only versions and digests."""

    source_version: str  # the source dataset's version (a digest of its table checksums)
    policy: str  # the policy file
    policy_sha256: str
    report_passed: bool


class GoldBuild(BaseModel):
    """A gold dbt repository built on a dataset (``build.json`` beside the build, written last).
    Keyed by the dataset version (a hash of its table checksums) and the repository version (a
    hash of its files)."""

    domain: str
    repo: str
    repo_version: str
    dataset_version: str
    folder: Path
    seconds: float
    models: int
    tests: int

    @property
    def db(self) -> Path:
        return self.folder / GOLD_DB

    @property
    def manifest(self) -> Path:
        return self.folder / "manifest.json"

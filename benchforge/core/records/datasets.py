"""The completion records of the stages before a run: a published dataset and a gold build."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator

GOLD_DB = "gold.duckdb"
PACKAGES_DIR = "dbt_packages"  # a gold build's vendored dbt packages (when its project has any)

Origin = Literal["synthesized", "imported", "released"]


class DatasetRecord(BaseModel):
    """The completion marker of a published dataset (``dataset.json``, written last).

    ``origin`` says how the data came to be: synthesized from a domain spec at a ``scale`` and
    ``seed``, imported as it was from somewhere else (``imported`` says from where; scale and
    seed mean nothing there and are null), or released by the anonymizer (``release``; it
    keeps its source's scale and seed). Records written before ``origin`` existed read as
    synthesized, or released when they carry a release stamp."""

    domain: str
    seed: int | None
    scale: float | None
    origin: Origin = "synthesized"
    created_at: datetime
    location: str
    total_rows: int
    anomaly_total: int
    table_checksums: dict[str, str]
    validation_success: bool | None
    validation_expectations: int
    release: ReleaseStamp | None = None
    imported: ImportStamp | None = None

    @model_validator(mode="before")
    @classmethod
    def _released_when_stamped(cls, data: object) -> object:
        """A record with a release stamp and no origin (the anonymizer's, and every release
        stored before ``origin`` existed) is a release."""
        if isinstance(data, dict) and data.get("release") and "origin" not in data:
            return {**data, "origin": "released"}
        return data

    @model_validator(mode="after")
    def _origin_matches(self) -> DatasetRecord:
        if self.origin == "synthesized" and (self.seed is None or self.scale is None):
            raise ValueError("a synthesized dataset's record needs its seed and scale")
        if self.origin == "imported" and (
            self.imported is None or self.seed is not None or self.scale is not None
        ):
            raise ValueError("an imported dataset's record needs `imported`, and no seed or scale")
        if self.origin == "released" and self.release is None:
            raise ValueError("a released dataset's record needs its release stamp")
        return self


class ImportStamp(BaseModel):
    """Set on an imported dataset: what it was imported from (never a password)."""

    kind: Literal["files", "duckdb", "postgres"]
    location: str = Field(description="The folder, DuckDB file or PostgreSQL URL (no password).")
    db_schema: str | None = Field(default=None, description="The source schema (databases).")
    tables: dict[str, str] = Field(
        description="Each dataset table -> where it came from (a file name or schema.table)."
    )


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

"""What a build did (``noise.json``, kept beside the environment, never in it): every file
written with its checksum and every noise decision, enough to undo the noise
(:mod:`benchforge.synthesis.explore_env.clean`) and to compute milestone values on the clean
data. Nothing in it depends on where the dataset or the output lives, or on the time."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ENVIRONMENT_RECORD_VERSION = 1
ENVIRONMENT_DIR = "environment"
RECORD_FILE = "noise.json"


class TotalsApplied(BaseModel):
    label_column: str
    label: str
    group_by: list[str]
    measures: list[str]
    rows: list[int] = Field(description="Data-row numbers (from 0) of the total rows written.")


class VariantsApplied(BaseModel):
    column: str
    variants: dict[str, str] = Field(description="Written variant -> the canonical name.")
    rows_per_kind: dict[str, int]
    rows_changed: int


class RoundingApplied(BaseModel):
    column: str
    decimals: list[int]
    rows_per_decimals: dict[str, int]
    max_abs_error: float


class UnitsApplied(BaseModel):
    column: str
    unit_column: str | None = Field(description="None: the label is a suffix of the value.")
    units: dict[str, float] = Field(description="Label -> stored units per written unit.")
    per: Literal["row", "entity"]
    entity: str | None
    decimals: int | None
    rows_per_unit: dict[str, int]
    entity_units: dict[str, str] = Field(default_factory=dict, description="Entity -> label.")


class MissingApplied(BaseModel):
    column: str
    markers: list[str]
    cells: list[tuple[int, str]] = Field(description="(data row, the text blanked).")


class WrittenTable(BaseModel):
    """One dataset table as written, with the noise applied to it, in order."""

    table: str
    path: str
    rows: int
    source_types: dict[str, str] = Field(description="Column -> its type in the dataset.")
    written_columns: list[str]
    totals: TotalsApplied | None = None
    variants: list[VariantsApplied] = Field(default_factory=list)
    rounding: list[RoundingApplied] = Field(default_factory=list)
    units: list[UnitsApplied] = Field(default_factory=list)
    missing: list[MissingApplied] = Field(default_factory=list)
    subsets: dict[str, str] = Field(
        default_factory=dict, description="Subset file -> the value of the split column."
    )
    subset_column: str | None = None


class DerivedFile(BaseModel):
    """A table or folder derived from the clean data: wide annual, year over year, aggregates,
    distractor, documents."""

    kind: Literal["wide_annual", "year_over_year", "aggregates", "distractor", "documents"]
    name: str
    path: str
    source_table: str
    rows: int
    parameters: dict[str, Any]


class EnvironmentRecord(BaseModel):
    version: int = ENVIRONMENT_RECORD_VERSION
    seed: int
    spec_sha256: str
    dataset_domain: str
    dataset_origin: str
    dataset_sha256: str = Field(description="Of the dataset's table checksums.")
    tables: list[WrittenTable]
    derived: list[DerivedFile]
    files: dict[str, str] = Field(description="Every file of the environment -> its sha256.")

    def table(self, name: str) -> WrittenTable:
        for written in self.tables:
            if written.table == name:
                return written
        raise KeyError(f"no table {name!r} in the environment")

    def derived_file(self, name: str) -> DerivedFile:
        for derived in self.derived:
            if derived.name == name:
                return derived
        raise KeyError(f"no derived table or documents {name!r} in the environment")

    def json_text(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

"""What a lake build wrote (``lake_record.json``): every file with its provenance, the query
over the dataset's ``raw`` tables that gives its rows, and the seeded choices made. Nothing in
it depends on where the dataset or the lake lives, so the same dataset, spec and seed give a
byte-identical record."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

LAKE_RECORD_VERSION = 1

FileRole = Literal["export", "report", "workbook", "distractor"]
DistractorKind = Literal["near_duplicate", "stale_copy", "overlapping_period", "unrelated"]


class SheetBlock(BaseModel):
    """One table block on a workbook's sheet."""

    sheet: str
    part: str | None
    row_filter: str
    note_row: int = Field(description="1-based row of the note line above the header.")
    header_row: int = Field(description="1-based row of the block's header.")
    rows: int
    query: str = Field(description="The block's rows as written, in order.")


class LakeFile(BaseModel):
    """One file of the lake and where its content comes from."""

    path: str = Field(description="Relative to the lake folder, '/'-separated.")
    role: FileRole
    distractor: DistractorKind | None = None
    of_file: str | None = Field(default=None, description="The file a distractor copies.")
    table: str
    columns: list[str]
    row_filter: str = Field(description="DuckDB predicate over the table ('TRUE': all rows).")
    rows: int
    query: str = Field(
        description="The rows as written, in order: SQL over schema raw of the dataset."
    )
    changed: dict[str, str] = Field(
        default_factory=dict, description="Column -> the SQL expression that changed it."
    )
    part: str | None = Field(default=None, description="The split part ('2024-Q3', 'EMEA').")
    split: str = Field(default="none", description="How the export was split.")
    format: Literal["csv", "json", "jsonl", "parquet", "markdown", "text", "xlsx"]
    encoding: str | None = None
    delimiter: str | None = None
    skip_rows: int = Field(default=0, description="Lines of notes above a CSV file's header.")
    sentence: str | None = Field(default=None, description="A report's sentence per row.")
    blocks: list[SheetBlock] = Field(
        default_factory=list, description="A workbook's table blocks, top to bottom."
    )
    sha256: str


class LakeRecord(BaseModel):
    version: int = LAKE_RECORD_VERSION
    seed: int
    spec_sha256: str
    dataset_domain: str
    dataset_sha256: str = Field(description="Of the dataset's table checksums.")
    obscured: bool = False
    files: list[LakeFile]

    def file(self, path: str) -> LakeFile:
        for lake_file in self.files:
            if lake_file.path == path:
                return lake_file
        raise KeyError(path)

    def json_text(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

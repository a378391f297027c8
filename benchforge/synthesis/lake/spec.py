"""The lake spec (``lake.yaml``): which exports of a dataset's tables a lake holds (how each is
split into files and in which formats), which prose reports state facts in sentences, how many
distractors of each kind are mixed in, and how the ``obscured`` setting rewrites values.

Where a spec lists alternatives (``splits``, ``formats``, ``delimiters``, ``encodings``), the
seed picks one (per export or per file) and the record says which, so a seed gives a new lake."""

from __future__ import annotations

import re
import string
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

TableFormat = Literal["csv", "json", "jsonl", "parquet"]
ProseFormat = Literal["markdown", "text"]
Encoding = Literal["utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1252"]
Delimiter = Literal[",", ";", "\t", "|"]

_STEM = re.compile(r"^[A-Za-z0-9_.{}\- ]+$")
_FOLDER = re.compile(r"^([A-Za-z0-9_\-]+(/[A-Za-z0-9_\-]+)*)?$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Lookup(_Model):
    """The split label read from another table: ``table.value`` where ``table.key`` equals the
    split column (``country`` -> ``countries.region``)."""

    table: str
    key: str
    value: str


class PeriodSplit(_Model):
    """One file per year, quarter or month of a date or timestamp column (``2024``,
    ``2024-Q3``, ``2024-07``); rows without a date go to a part named ``undated``."""

    by: Literal["period"]
    column: str
    every: Literal["year", "quarter", "month"] = "year"


class ValueSplit(_Model):
    """One file per value of a column (a region, a product family, an owner...), or per value
    of ``lookup`` reached through it; rows without one go to a part named ``unknown``."""

    by: Literal["value"]
    column: str
    lookup: Lookup | None = None


class NoSplit(_Model):
    """One file for the whole export."""

    by: Literal["none"]


Split = Annotated[PeriodSplit | ValueSplit | NoSplit, Field(discriminator="by")]


class CsvOptions(_Model):
    """The seeded choices of a CSV export: its delimiter, its encoding (an encoding that
    cannot write the file's text is passed over; UTF-8 is the last resort) and the note an
    export system writes above the header."""

    delimiters: list[Delimiter] = Field(default_factory=lambda: _delimiters(), min_length=1)
    encodings: list[Encoding] = Field(default_factory=lambda: _encodings(), min_length=1)
    notes: list[str] = Field(
        default_factory=list,
        description="Text above the header, a seeded choice per export ('' for none); "
        "{table}, {part} and {rows} are filled in.",
    )

    @field_validator("notes")
    @classmethod
    def _note_fields(cls, value: list[str]) -> list[str]:
        for note in value:
            fields = {f for _, f, _, _ in string.Formatter().parse(note) if f is not None}
            unknown = sorted(fields - {"table", "part", "rows"})
            if unknown:
                raise ValueError(f"note {note!r} names {', '.join(unknown)}")
        return value


def _delimiters() -> list[Delimiter]:
    return [",", ";", "\t", "|"]


def _encodings() -> list[Encoding]:
    return ["utf-8", "utf-8-sig", "utf-16", "latin-1"]


def _whole() -> list[Split]:
    return [NoSplit(by="none")]


def _csv_only() -> list[TableFormat]:
    return ["csv"]


def _markdown_only() -> list[ProseFormat]:
    return ["markdown"]


def _check_stem(stem: str, split_given: bool) -> str:
    if not _STEM.match(stem):
        raise ValueError(f"name {stem!r}: letters, digits, '_', '-', '.', ' ' and fields only")
    fields = {f for _, f, _, _ in string.Formatter().parse(stem) if f is not None}
    unknown = sorted(fields - {"table", "part"})
    if unknown:
        raise ValueError(f"name {stem!r} names {', '.join(unknown)}: only {{table}} and {{part}}")
    if split_given and "part" not in fields:
        raise ValueError(f"name {stem!r} has no {{part}}: split files would share one name")
    return stem


class Export(_Model):
    """A table (some of its columns, some of its rows) exported as files."""

    table: str
    name: str = Field(default="{table}_{part}", description="File name without extension.")
    folder: str = Field(default="", description="Folder inside the lake ('' = its root).")
    columns: list[str] | None = Field(default=None, min_length=1, description="None: all.")
    where: str | None = Field(default=None, description="A DuckDB predicate over the table.")
    splits: list[Split] = Field(
        default_factory=lambda: _whole(),
        min_length=1,
        description="Alternatives: the seed picks one per export.",
    )
    formats: list[TableFormat] = Field(default_factory=lambda: _csv_only(), min_length=1)
    csv: CsvOptions = Field(default_factory=CsvOptions)

    @field_validator("folder")
    @classmethod
    def _folder(cls, value: str) -> str:
        if not _FOLDER.match(value):
            raise ValueError(f"folder {value!r}: relative, '/'-separated names")
        return value

    @model_validator(mode="after")
    def _name(self) -> Export:
        _check_stem(self.name, any(s.by != "none" for s in self.splits))
        return self


class Report(_Model):
    """A prose report: one sentence per row of a table (at most ``max_rows``), so the facts it
    states are read from text, not columns."""

    table: str
    name: str = "{table}_report_{part}"
    folder: str = "reports"
    title: str
    intro: str = ""
    sentence: str = Field(description="A format string over the table's columns.")
    where: str | None = None
    splits: list[Split] = Field(default_factory=lambda: _whole(), min_length=1)
    formats: list[ProseFormat] = Field(default_factory=lambda: _markdown_only(), min_length=1)
    max_rows: int = Field(default=200, ge=1, le=5000)

    @field_validator("folder")
    @classmethod
    def _folder(cls, value: str) -> str:
        return Export._folder(value)

    @model_validator(mode="after")
    def _check(self) -> Report:
        _check_stem(self.name, any(s.by != "none" for s in self.splits))
        if not sentence_fields(self.sentence):
            raise ValueError(f"sentence {self.sentence!r} names no column")
        return self


class Workbook(_Model):
    """An Excel workbook of one table: every split part is a block on one sheet, a note line
    above its header and a blank row after its last row, below the workbook's preamble lines:
    several tables on one sheet, the way people export them."""

    table: str
    name: str = Field(default="{table}_workbook", description="File name without extension.")
    folder: str = ""
    sheet: str = Field(default="Export", min_length=1, max_length=31)
    columns: list[str] | None = Field(default=None, min_length=1)
    where: str | None = None
    splits: list[Split] = Field(default_factory=lambda: _whole(), min_length=1)
    preamble: list[str] = Field(
        default_factory=list, description="Lines above the first block ({table}, {rows})."
    )
    note: str = Field(
        default="{table}: {part} ({rows} rows)", description="The line above each block."
    )

    @field_validator("folder")
    @classmethod
    def _folder(cls, value: str) -> str:
        return Export._folder(value)

    @model_validator(mode="after")
    def _name(self) -> Workbook:
        _check_stem(self.name, False)
        return self


class Distractors(_Model):
    """Files no gold answer needs, seeded: ``near_duplicates`` (a revised re-export of a gold
    file: the same rows, numbers slightly changed, a version in its name), ``stale_copies`` (an
    older copy of a gold file: a share of its rows missing), ``overlapping_periods`` (an
    export of a period-split table covering two adjacent periods, ``2024-Q1_to_2024-Q2``: its
    rows are in two gold files already) and ``unrelated`` (tables no export names, from
    ``unrelated_tables`` or else every such table of the dataset)."""

    near_duplicates: int = Field(default=0, ge=0, le=100)
    stale_copies: int = Field(default=0, ge=0, le=100)
    overlapping_periods: int = Field(default=0, ge=0, le=100)
    unrelated: int = Field(default=0, ge=0, le=100)
    unrelated_tables: list[str] | None = None
    unrelated_max_rows: int = Field(default=2000, ge=1)


class NumberRule(_Model):
    """Numeric columns (names or ``fnmatch`` patterns) rewritten as ``round(x * factor +
    shift, decimals)``; factor and shift are seeded draws from their ranges, one per rule."""

    columns: list[str] = Field(min_length=1)
    factor: tuple[float, float] = (0.5, 2.0)
    shift: tuple[float, float] = (0.0, 0.0)
    decimals: int = Field(default=2, ge=0, le=6)

    @model_validator(mode="after")
    def _ranges(self) -> NumberRule:
        for name in ("factor", "shift"):
            low, high = getattr(self, name)
            if low > high:
                raise ValueError(f"{name}: [{low}, {high}] is empty")
        if self.factor[0] <= 0:
            raise ValueError("factor: must be positive (an order of values is kept)")
        return self


class ObscureSpec(_Model):
    """What the ``obscured`` setting replaces, by column name or ``fnmatch`` pattern over every
    table: ``identifiers`` (text keys: one dataset-wide map, so joins still hold), ``names``
    (text: synthetic words, one dataset-wide map) and ``numbers``."""

    identifiers: list[str] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)
    numbers: list[NumberRule] = Field(default_factory=list)


class LakeSpec(_Model):
    """How one dataset becomes a data lake."""

    exports: list[Export] = Field(min_length=1)
    reports: list[Report] = Field(default_factory=list)
    workbooks: list[Workbook] = Field(default_factory=list)
    distractors: Distractors = Field(default_factory=Distractors)
    obscure: ObscureSpec = Field(default_factory=ObscureSpec)
    max_files: int = Field(default=300, ge=1, description="A bound on a split's fan-out.")


def sentence_fields(sentence: str) -> list[str]:
    """The column names a report sentence formats, in order."""
    return [f for _, f, _, _ in string.Formatter().parse(sentence) if f]

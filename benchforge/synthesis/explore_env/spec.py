"""The environment spec (``environment.yaml``): which dataset tables an exploration environment
holds, in which folders, and which of DataClawBench's noise kinds apply to which tables and
columns, with their parameters. Every seeded decision is recorded in ``noise.json``."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FOLDER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_name(value: str) -> str:
    if not _NAME.match(value):
        raise ValueError(f"{value!r} is not a name (letters, digits and '_')")
    return value


class MixedUnits(_Model):
    """A numeric column written in several units: each row (``per: row``) or each entity
    (``per: entity``, by the value of ``entity``) gets one of ``units`` (a seeded choice), its
    value divided by the unit's factor. ``units``: label -> how many of the stored unit one
    written unit is (stored in 亿元, written in 万元: ``万元: 0.0001``). The label goes to a new
    column ``unit_column`` next to the value, or (none given) after the number as a suffix:
    ``12.5 万元``."""

    column: str
    units: dict[str, float] = Field(min_length=2)
    per: Literal["row", "entity"] = "row"
    entity: str | None = None
    unit_column: str | None = None
    decimals: int | None = Field(
        default=None, ge=0, le=12, description="Written values rounded to this; none: exact."
    )

    @field_validator("units")
    @classmethod
    def _positive_factors(cls, value: dict[str, float]) -> dict[str, float]:
        bad = [label for label, factor in value.items() if not factor > 0 or not label.strip()]
        if bad:
            raise ValueError(f"unit labels must be words with a factor > 0: {bad}")
        return value

    @model_validator(mode="after")
    def _entity_when_per_entity(self) -> MixedUnits:
        if (self.per == "entity") != (self.entity is not None):
            raise ValueError("entity: give it exactly when per is 'entity'")
        if self.unit_column is not None:
            _check_name(self.unit_column)
        return self


class TotalRows(_Model):
    """Grand-total rows mixed with the detail rows: one per group of ``group_by`` (all rows when
    empty), with ``label`` in ``label_column``, the ``measures`` summed over the group's rows and
    every other column empty, written after the group's last detail row."""

    label_column: str
    label: str = "Total"
    group_by: list[str] = Field(default_factory=list)
    measures: list[str] = Field(min_length=1)


class Alternate(_Model):
    """Another name of the same entity from a reference table: the value of ``key`` in
    ``table`` written as that row's ``to`` (a province as its Chinese name or abbreviation)."""

    table: str
    key: str
    to: str


class NameVariants(_Model):
    """A seeded ``rate`` of the rows name their entity differently: in another language or form
    (``alternates``) or without a suffix (``strip_suffixes``: ``有限公司``). Variants that would
    equal another entity's name, or two entities' variant, are never written."""

    column: str
    rate: float = Field(gt=0, le=1)
    alternates: list[Alternate] = Field(default_factory=list)
    strip_suffixes: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _some_variant(self) -> NameVariants:
        if not self.alternates and not self.strip_suffixes:
            raise ValueError("give alternates or strip_suffixes (at least one variant)")
        return self


class Rounding(_Model):
    """Rounding differences: each row's value rounded to one of ``decimals`` (a seeded choice)."""

    column: str
    decimals: list[int] = Field(min_length=2)

    @field_validator("decimals")
    @classmethod
    def _small(cls, value: list[int]) -> list[int]:
        if any(d < 0 or d > 12 for d in value) or len(set(value)) != len(value):
            raise ValueError("distinct numbers of decimals between 0 and 12")
        return value


class MissingValues(_Model):
    """A seeded ``rate`` of the filled cells of ``columns`` written as one of ``markers``."""

    columns: list[str] = Field(min_length=1)
    rate: float = Field(gt=0, le=1)
    markers: list[str] = Field(default_factory=lambda: ["", "NA", "N/A", "-", "--"], min_length=1)


class TableNoise(_Model):
    """The noise of one written table, applied in this order: totals, name variants, rounding,
    units, missing values (the clean reading undoes it in reverse)."""

    total_rows: TotalRows | None = None
    name_variants: list[NameVariants] = Field(default_factory=list)
    rounding: list[Rounding] = Field(default_factory=list)
    mixed_units: list[MixedUnits] = Field(default_factory=list)
    missing_values: MissingValues | None = None


class Subsets(_Model):
    """Regional subset tables with the table's schema: its (noisy) rows split by ``by``, one
    file per value (``values``, default every value), named ``<table>_<value>``, beside it."""

    table: str
    by: str
    values: list[str] | None = None


class WideAnnual(_Model):
    """A wide annual table next to the long one: ``value`` summed (or its year's last period,
    ``last``) per ``keys`` and calendar year of ``period``, one column per year."""

    table: str
    name: str
    folder: str | None = None
    keys: list[str] = Field(min_length=1)
    period: str
    value: str
    aggregate: Literal["sum", "last"] = "sum"
    years: tuple[int, int] | None = None
    decimals: int | None = Field(default=None, ge=0, le=12, description="None: exact.")


class YearOverYear(_Model):
    """A year-over-year table: per ``keys`` and year, the percentage change of the annual sum of
    ``value`` against the year before, rounded to ``decimals``."""

    table: str
    name: str
    folder: str | None = None
    keys: list[str] = Field(min_length=1)
    period: str
    value: str
    years: tuple[int, int] | None = None
    decimals: int = Field(default=2, ge=0, le=12)


class Aggregates(_Model):
    """National and regional aggregates in one table: the ``measures`` summed (and rows
    counted) per ``dimensions`` over each value of ``region`` (level ``regional``) and over all
    rows (level ``national``, region ``national_label``)."""

    table: str
    name: str
    folder: str | None = None
    region: str
    dimensions: list[str] = Field(default_factory=list)
    measures: list[str] = Field(min_length=1)
    national_label: str = "National"
    decimals: int | None = Field(default=None, ge=0, le=12, description="None: exact.")


class Distractor(_Model):
    """A table that looks relevant and is not: a seeded ``sample_rate`` of ``table``'s rows with
    the numeric ``columns`` multiplied by a seeded factor in ``scale`` per row."""

    table: str
    name: str
    folder: str | None = None
    columns: list[str] = Field(min_length=1)
    scale: tuple[float, float] = (0.8, 1.25)
    sample_rate: float = Field(default=1.0, gt=0, le=1)


class Documents(_Model):
    """Policy-style free texts: one Markdown document per row of ``table`` under ``folder``
    (``<id>.md``: ``# title``, ``- field: value`` lines, a blank line, the body)."""

    table: str
    folder: str
    id_column: str
    title_column: str
    body_column: str
    fields: list[str] = Field(default_factory=list)


class EnvironmentSpec(_Model):
    """How one dataset becomes an exploration environment."""

    folders: dict[str, list[str]] = Field(
        min_length=1,
        description="Folder (under database/) -> the dataset tables written there as CSV.",
    )
    noise: dict[str, TableNoise] = Field(default_factory=dict)
    subsets: list[Subsets] = Field(default_factory=list)
    wide_annual: list[WideAnnual] = Field(default_factory=list)
    year_over_year: list[YearOverYear] = Field(default_factory=list)
    aggregates: list[Aggregates] = Field(default_factory=list)
    distractors: list[Distractor] = Field(default_factory=list)
    documents: list[Documents] = Field(default_factory=list)
    drop_columns: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Table -> columns not written (e.g. a text kept only as documents).",
    )

    @field_validator("folders")
    @classmethod
    def _folders(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[str, str] = {}
        for folder, tables in value.items():
            if not _FOLDER.match(folder):
                raise ValueError(f"folder {folder!r} is not a relative folder name")
            for table in tables:
                _check_name(table)
                if table in seen:
                    raise ValueError(f"{folder}: table {table!r} is in {seen[table]!r} already")
                seen[table] = folder
        return value

    @model_validator(mode="after")
    def _derived_names(self) -> EnvironmentSpec:
        for kind in ("wide_annual", "year_over_year", "aggregates", "distractors"):
            for derived in getattr(self, kind):
                _check_name(derived.name)
        for documents in self.documents:
            if not _FOLDER.match(documents.folder):
                raise ValueError(f"documents: folder {documents.folder!r} is not a folder name")
        return self

    def folder_of(self) -> dict[str, str]:
        """Written table -> its folder."""
        return {table: folder for folder, tables in self.folders.items() for table in tables}

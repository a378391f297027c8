"""Stressors: controlled mess injected after clean generation, every touched row recorded."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Stressor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    rate: float = Field(gt=0, le=0.5, description="Share of eligible rows (or entities) touched.")


class _ColumnStressor(_Stressor):
    column: str


class MissingValues(_ColumnStressor):
    """Non-null values blanked to NULL."""

    kind: Literal["missing_values"]


class Outliers(_ColumnStressor):
    """Non-zero numeric values multiplied by ``factor``."""

    kind: Literal["outliers"]
    factor: float = Field(default=1000.0, gt=1)


class TypeCoercion(_ColumnStressor):
    """The column is published as text; touched rows are rendered with thousands separators
    (``1,234.50``) when |x| >= 1000 and with a unit suffix (``123.40 USD``) otherwise. Untouched
    rows keep the plain rendering, so a cleaning step must parse both forms."""

    kind: Literal["type_coercion"]
    unit: str = "USD"


class DuplicateCurrent(_Stressor):
    """On an SCD history table, the previous version of an entity keeps ``is_current = true``
    and an open ``valid_to``: two "current" rows. ``rate`` is the share of entities with at least
    two versions that get one."""

    kind: Literal["duplicate_current"]


class CurrencyConflict(_ColumnStressor):
    """A currency code replaced by another one from ``codes`` (never the original)."""

    kind: Literal["currency_conflict"]
    codes: list[str] = Field(min_length=2)


class TimezoneMismatch(_ColumnStressor):
    """A UTC timestamp written in local time: shifted by the row's UTC offset in hours, read from
    ``offset_lookup.value`` of the lookup row keyed by column ``offset_via``; rows whose offset is
    zero are not eligible."""

    kind: Literal["timezone_mismatch"]
    offset_lookup: str
    offset_via: str
    offset_value: str = "utc_offset_hours"


class KeyDrift(_ColumnStressor):
    """A string key gets a trailing space or is lower-cased, so naive joins lose rows."""

    kind: Literal["key_drift"]


Stressor = Annotated[
    MissingValues
    | Outliers
    | TypeCoercion
    | DuplicateCurrent
    | CurrencyConflict
    | TimezoneMismatch
    | KeyDrift,
    Field(discriminator="kind"),
]

AnomalyKind = Literal[
    "missing_values",
    "outliers",
    "type_coercion",
    "duplicate_current",
    "currency_conflict",
    "timezone_mismatch",
    "key_drift",
]

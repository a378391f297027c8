"""Column generators of the domain spec: a discriminated union on ``kind``.

Every generator is a pure function of (seed, table, column, row id); the engine compiles each one
into a vectorized DuckDB SQL expression (see ``benchforge.synthesis.engine.compile``).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SequenceGen(_Strict):
    """Dense sequence from the row id: ``start + step * rid``, optionally as ``PREFIX-000123``."""

    kind: Literal["sequence"]
    start: int = 1
    step: int = 1
    prefix: str | None = None
    width: int = Field(default=8, ge=1, le=20)


class FakerGen(_Strict):
    """A Faker provider sampled through a seeded pool (Faker never runs per row).

    ``locale_from`` names a column of the same table holding a Faker locale (``en_US``...): one
    pool is built per locale listed in ``locales`` and each row draws from its own locale's pool.
    ``pool_size`` bounds the number of distinct values.
    """

    kind: Literal["faker"]
    provider: str
    args: dict[str, Any] = Field(default_factory=dict)
    pool_size: int = Field(default=5000, ge=1, le=200_000)
    locale: str = "en_US"
    locale_from: str | None = None
    locales: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _locales_listed(self) -> FakerGen:
        if self.locale_from and not self.locales:
            raise ValueError("locale_from needs the list of 'locales' to build pools for")
        return self


class UniformGen(_Strict):
    kind: Literal["uniform"]
    low: float
    high: float
    integer: bool = False
    round: int | None = None

    @model_validator(mode="after")
    def _ordered(self) -> UniformGen:
        if self.high < self.low:
            raise ValueError("high must be >= low")
        return self


class NormalGen(_Strict):
    kind: Literal["normal"]
    mean: float
    std: float = Field(gt=0)
    min: float | None = None
    max: float | None = None
    round: int | None = None
    integer: bool = False


class LognormalGen(_Strict):
    """``exp(mu + sigma * Z)``: mu and sigma are of the underlying normal."""

    kind: Literal["lognormal"]
    mu: float
    sigma: float = Field(gt=0)
    min: float | None = None
    max: float | None = None
    round: int | None = None
    integer: bool = False


class ZipfGen(_Strict):
    """Integer rank in ``1..n`` with P(k) proportional to ``k ** -s`` (continuous inverse CDF)."""

    kind: Literal["zipf"]
    n: int = Field(ge=1)
    s: float = Field(gt=0)


class PoissonGen(_Strict):
    kind: Literal["poisson"]
    lam: float = Field(gt=0, le=1000)
    offset: int = 0


class CategoricalGen(_Strict):
    """One of ``values`` with the given relative ``weights`` (default: uniform)."""

    kind: Literal["categorical"]
    values: list[str | int | float | bool] = Field(min_length=1)
    weights: list[float] | None = None

    @model_validator(mode="after")
    def _weights_match(self) -> CategoricalGen:
        if self.weights is not None:
            if len(self.weights) != len(self.values):
                raise ValueError(
                    f"weights has {len(self.weights)} entries but values has {len(self.values)}"
                )
            if any(w < 0 for w in self.weights) or sum(self.weights) <= 0:
                raise ValueError("weights must be non-negative with a positive sum")
        return self


class BooleanGen(_Strict):
    kind: Literal["boolean"]
    p_true: float = Field(ge=0, le=1)


class LookupKeyGen(_Strict):
    """Picks a row of a lookup table by its weight column and yields its key.

    ``sequential``: row i takes lookup row i (mod the lookup's size), to enumerate a lookup as a
    reference table (give the table ``rows`` = the lookup's size and ``scales: false``).
    """

    kind: Literal["lookup_key"]
    lookup: str
    sequential: bool = False


class LookupGen(_Strict):
    """Conditional link: the ``value`` column of the lookup row whose key equals column ``via``."""

    kind: Literal["lookup"]
    lookup: str
    via: str
    value: str


class ForeignKeyGen(_Strict):
    """A reference to a parent row, chosen statelessly from the row id.

    fan_out ``poisson``: parents picked uniformly, so children per parent ~ Poisson(rows/parents);
    ``zipf``: parent ranks drawn Zipf(s) and scattered over the parent ids, a heavy-tailed fan-out.
    """

    kind: Literal["foreign_key"]
    table: str
    fan_out: Literal["poisson", "zipf"] = "poisson"
    s: float = Field(default=1.1, gt=0)


class ParentGen(_Strict):
    """Copies column ``column`` of the parent row referenced by this table's FK column ``fk``."""

    kind: Literal["parent"]
    fk: str
    column: str


class DateGen(_Strict):
    """A date or timestamp drawn from a calendar (trend x weekly x yearly x holidays).

    ``not_before`` = ``col`` or ``fk_col.parent_col``: the draw is conditioned on being on or after
    that date (facts dated after their dimensions exist), keeping the calendar's shape.
    ``max_lag_days`` bounds how far after ``not_before`` the date may fall.
    """

    kind: Literal["date"]
    calendar: str = "default"
    start: date | None = None
    end: date | None = None
    not_before: str | None = None
    max_lag_days: int | None = Field(default=None, ge=0)
    lag_days: int = Field(default=0, ge=0)


class ExpressionGen(_Strict):
    """A DuckDB SQL expression over other columns of the same row.

    ``u(k)`` in the SQL is replaced by a per-row uniform [0, 1) stream number k (0..9), so
    expressions can add their own seeded randomness.
    """

    kind: Literal["expression"]
    sql: str = Field(min_length=1)


class DerivedGen(_Strict):
    """The column comes from the table's ``derived_sql`` (aggregates of other tables)."""

    kind: Literal["derived"]


class ConditionalGen(_Strict):
    """A different generator per value of column ``on`` (industry -> revenue scale)."""

    kind: Literal["conditional"]
    on: str
    cases: dict[str, Generator] = Field(min_length=1)
    default: Generator

    @model_validator(mode="after")
    def _no_nesting(self) -> ConditionalGen:
        for gen in [*self.cases.values(), self.default]:
            if isinstance(
                gen, ConditionalGen | ForeignKeyGen | ParentGen | DateGen | DerivedGen | FakerGen
            ):
                raise ValueError(f"a conditional case cannot be a '{gen.kind}' generator")
        return self


Generator = Annotated[
    SequenceGen
    | FakerGen
    | UniformGen
    | NormalGen
    | LognormalGen
    | ZipfGen
    | PoissonGen
    | CategoricalGen
    | BooleanGen
    | LookupKeyGen
    | LookupGen
    | ForeignKeyGen
    | ParentGen
    | DateGen
    | ExpressionGen
    | DerivedGen
    | ConditionalGen,
    Field(discriminator="kind"),
]

ConditionalGen.model_rebuild()

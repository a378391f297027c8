"""Column generators of the domain spec: a discriminated union on ``kind``.

Every generator is a pure function of (seed, table, column, row id); the engine compiles each one
into a vectorized DuckDB SQL expression (one compile function per ``kind``, registered in
``benchforge.synthesis.engine.columns``).

Each generator also states its own facts, which spec validation, the engine and the validation
suite ask instead of switching on its type (see ``GeneratorModel``): the columns it reads
(``inputs``), the spec problems it has (``problems``), the numeric range of its values
(``bounds``), their mean and spread (``mean_and_spread``), median (``median``), share of true
(``true_share``), finite value set and shares (``value_set``, ``possible_values``), dates
(``date_range``, ``date_order``, ``date_ceiling``), the value it copies (``copies``) and whether
it can yield NULL (``may_be_null``). A new generator is one model here plus, if it makes SQL, one
compile function.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchforge.synthesis.spec.suggest import did_you_mean

if TYPE_CHECKING:
    from benchforge.synthesis.spec.models import Column, DomainSpec, Table

Nullable = Callable[["Table", str], bool]
"""Whether column ``c`` of table ``t`` may hold NULL (its null_rate or its generator)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- facts


class Bounds(NamedTuple):
    """The closed range of a generator's numeric values; None = unbounded on that side."""

    low: float | None
    high: float | None


class MeanSpread(NamedTuple):
    """Expected mean and standard deviation of one draw; ``slack`` widens the mean's tolerance
    (rounding)."""

    mean: float
    sd: float
    slack: float = 0.0


class DateRange(NamedTuple):
    """First and last datetime of a date generator's values; None = unbounded on that side."""

    low: datetime | None
    high: datetime | None


@dataclass(frozen=True)
class ValueSet:
    """The finite set of values a generator yields, in spec order (repeats merged).

    ``shares``: the probability of each value when drawn at random, None when not random
    (a lookup enumerated in order). ``described``: how an expectation names the set.
    """

    values: list[Any]
    shares: list[float] | None
    described: str


@dataclass(frozen=True)
class ParentCopy:
    """The value equals column ``column`` of the row of table ``parent`` that column ``fk``
    references (a foreign key, or an SCD table's entity key)."""

    fk: str
    parent: str
    column: str


@dataclass(frozen=True)
class LookupCopy:
    """The value equals column ``value`` of the lookup row whose key equals column ``via``."""

    lookup: str
    via: str
    value: str


@dataclass(frozen=True)
class DateOrder:
    """The date is on or after ``reference`` (``col`` or ``fk_col.parent_col``); with
    ``max_lag_days``, at most that many days after it (``late_after_days`` with the lag and a day
    of time of day added)."""

    reference: str
    max_lag_days: int | None
    late_after_days: int | None


def shares_of(values: list[Any], weights: list[float] | None) -> list[tuple[Any, float]]:
    """(value, probability) pairs of a weighted draw, repeated values merged, in first order."""
    ws = weights or [1.0] * len(values)
    total = sum(ws)
    merged: dict[str, tuple[Any, float]] = {}
    for v, w in zip(values, ws, strict=True):
        prev = merged.get(repr(v), (v, 0.0))
        merged[repr(v)] = (v, prev[1] + w / total)
    return list(merged.values())


def _weighted_set(described: str, pairs: list[tuple[Any, float]]) -> ValueSet:
    return ValueSet([v for v, _ in pairs], [p for _, p in pairs], described)


def _pdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def _cdf(z: float) -> float:
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def clipped_normal_mean(mean: float, sd: float, lo: float | None, hi: float | None) -> float:
    """E[min(max(X, lo), hi)] for X ~ N(mean, sd): the engine clips normal draws to [min, max]."""
    a = -math.inf if lo is None else (lo - mean) / sd
    b = math.inf if hi is None else (hi - mean) / sd
    cdf_a = 0.0 if a == -math.inf else _cdf(a)
    cdf_b = 1.0 if b == math.inf else _cdf(b)
    pdf_a = 0.0 if a == -math.inf else _pdf(a)
    pdf_b = 0.0 if b == math.inf else _pdf(b)
    inside = mean * (cdf_b - cdf_a) + sd * (pdf_a - pdf_b)
    below = 0.0 if lo is None else lo * cdf_a
    above = 0.0 if hi is None else hi * (1 - cdf_b)
    return below + inside + above


def _column_refs(sql: str, names: set[str]) -> set[str]:
    return {tok for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql) if tok in names}


class GeneratorModel(_Strict):
    """The facts every generator states about the values it yields, ignoring the column's
    ``null_rate`` and stressors. The defaults say "nothing known"; each model overrides what it
    knows."""

    kind: str

    def inputs(self, columns: set[str]) -> set[str]:
        """Same-table columns (of ``columns``) that must be computed before this one."""
        return set()

    def parent_columns(self, fk: str) -> set[str]:
        """Columns of the parent row referenced by FK column ``fk`` that this generator reads."""
        return set()

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        """What is wrong with this generator's references to the rest of the spec."""
        return []

    def bounds(self) -> Bounds | None:
        """The numeric range of the values, None when the generator has none."""
        return None

    def mean_and_spread(self) -> MeanSpread | None:
        return None

    def median(self) -> float | None:
        """A median worth checking on its own (the share below it is 1/2): set for skewed
        distributions, whose mean a heavy tail makes a weak check."""
        return None

    def true_share(self) -> float | None:
        """The probability of true, for boolean generators."""
        return None

    def value_set(self, spec: DomainSpec) -> ValueSet | None:
        """The values the generator draws from, with their shares."""
        return None

    def possible_values(self, spec: DomainSpec) -> set[str] | None:
        """Every value the generator can yield, as text; None when not a known finite set."""
        return None

    def date_range(self, spec: DomainSpec, timestamp: bool) -> DateRange | None:
        """The datetimes of a date generator's values (``timestamp``: any time of the last day)."""
        return None

    def date_order(self) -> DateOrder | None:
        return None

    def date_ceiling(self) -> str | None:
        """The reference (``col`` or ``fk_col.parent_col``) the date is on or before."""
        return None

    def copies(self, spec: DomainSpec, table: Table) -> ParentCopy | LookupCopy | None:
        """Where the value is copied from, when it is."""
        return None

    def may_be_null(self, spec: DomainSpec, table: Table, nullable: Nullable) -> bool:
        """Whether the generator can yield NULL; ``nullable`` answers for the columns it reads."""
        return False


class SequenceGen(GeneratorModel):
    """Dense sequence from the row id: ``start + step * rid``, optionally as ``PREFIX-000123``."""

    kind: Literal["sequence"]
    start: int = 1
    step: int = 1
    prefix: str | None = None
    width: int = Field(default=8, ge=1, le=20)


class FakerGen(GeneratorModel):
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

    def inputs(self, columns: set[str]) -> set[str]:
        return {self.locale_from} if self.locale_from else set()

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        from faker import Faker

        errs: list[str] = []
        if self.locale_from and self.locale_from not in table.column_map:
            hint = did_you_mean(self.locale_from, table.column_map)
            errs.append(f"locale_from column '{self.locale_from}' is not a column{hint}")
        fake = Faker(self.locale)
        if not callable(getattr(fake, self.provider, None)):
            providers = [n for n in dir(fake.factories[0]) if not n.startswith("_")]
            hint = did_you_mean(self.provider, providers)
            errs.append(f"unknown Faker provider '{self.provider}'{hint}")
        return errs

    def may_be_null(self, spec: DomainSpec, table: Table, nullable: Nullable) -> bool:
        """A row whose locale has no pool finds no value."""
        if not self.locale_from:
            return False
        values = table.column_map[self.locale_from].generator.possible_values(spec)
        known = values is not None and values <= set(self.locales)
        return nullable(table, self.locale_from) or not known


class UniformGen(GeneratorModel):
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

    def bounds(self) -> Bounds:
        if self.integer:
            return Bounds(float(int(self.low)), float(int(self.high)))
        return Bounds(self.low, self.high)

    def mean_and_spread(self) -> MeanSpread:
        if self.integer:
            span = int(self.high) - int(self.low) + 1
            return MeanSpread(int(self.low) + (span - 1) / 2, math.sqrt((span * span - 1) / 12))
        slack = 0.5 * 10.0**-self.round if self.round is not None else 0.0
        return MeanSpread((self.low + self.high) / 2, (self.high - self.low) / math.sqrt(12), slack)


class NormalGen(GeneratorModel):
    kind: Literal["normal"]
    mean: float
    std: float = Field(gt=0)
    min: float | None = None
    max: float | None = None
    round: int | None = None
    integer: bool = False

    def bounds(self) -> Bounds:
        return Bounds(self.min, self.max)

    def mean_and_spread(self) -> MeanSpread:
        return MeanSpread(clipped_normal_mean(self.mean, self.std, self.min, self.max), self.std)


class LognormalGen(GeneratorModel):
    """``exp(mu + sigma * Z)``: mu and sigma are of the underlying normal."""

    kind: Literal["lognormal"]
    mu: float
    sigma: float = Field(gt=0)
    min: float | None = None
    max: float | None = None
    round: int | None = None
    integer: bool = False

    def bounds(self) -> Bounds:
        return Bounds(self.min, self.max)

    def median(self) -> float | None:
        """exp(mu), unless clipping moved it."""
        median = math.exp(self.mu)
        inside = (self.min is None or self.min < median) and (self.max is None or median < self.max)
        return median if inside else None


class ZipfGen(GeneratorModel):
    """Integer rank in ``1..n`` with P(k) proportional to ``k ** -s`` (continuous inverse CDF)."""

    kind: Literal["zipf"]
    n: int = Field(ge=1)
    s: float = Field(gt=0)

    def bounds(self) -> Bounds:
        return Bounds(1.0, float(self.n))


class PoissonGen(GeneratorModel):
    kind: Literal["poisson"]
    lam: float = Field(gt=0, le=1000)
    offset: int = 0

    def bounds(self) -> Bounds:
        return Bounds(float(self.offset), None)

    def mean_and_spread(self) -> MeanSpread:
        return MeanSpread(self.lam + self.offset, math.sqrt(self.lam))


class CategoricalGen(GeneratorModel):
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

    def value_set(self, spec: DomainSpec) -> ValueSet:
        described = f"one of its {self.kind} generator's values"
        return _weighted_set(described, shares_of(list(self.values), self.weights))

    def possible_values(self, spec: DomainSpec) -> set[str]:
        return {str(v) for v in self.values}


class BooleanGen(GeneratorModel):
    kind: Literal["boolean"]
    p_true: float = Field(ge=0, le=1)

    def true_share(self) -> float:
        return self.p_true


class LookupKeyGen(GeneratorModel):
    """Picks a row of a lookup table by its weight column and yields its key.

    ``sequential``: row i takes lookup row i (mod the lookup's size), to enumerate a lookup as a
    reference table (give the table ``rows`` = the lookup's size and ``scales: false``).
    """

    kind: Literal["lookup_key"]
    lookup: str
    sequential: bool = False

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        if self.lookup in spec.lookups:
            return []
        return [f"unknown lookup '{self.lookup}'{did_you_mean(self.lookup, spec.lookups)}"]

    def value_set(self, spec: DomainSpec) -> ValueSet:
        lookup = spec.lookups[self.lookup]
        keys = lookup.values(lookup.columns[0])
        if self.sequential:
            return ValueSet(keys, None, f"a key of lookup {self.lookup}")
        weights = [float(w) for w in lookup.values(lookup.weight)] if lookup.weight else None
        return _weighted_set(f"one of its {self.kind} generator's values", shares_of(keys, weights))

    def possible_values(self, spec: DomainSpec) -> set[str]:
        lookup = spec.lookups[self.lookup]
        return {str(v) for v in lookup.values(lookup.columns[0])}


class LookupGen(GeneratorModel):
    """Conditional link: the ``value`` column of the lookup row whose key equals column ``via``."""

    kind: Literal["lookup"]
    lookup: str
    via: str
    value: str

    def inputs(self, columns: set[str]) -> set[str]:
        return {self.via}

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        lookup = spec.lookups.get(self.lookup)
        if lookup is None:
            return [f"unknown lookup '{self.lookup}'{did_you_mean(self.lookup, spec.lookups)}"]
        errs: list[str] = []
        if self.value not in lookup.columns:
            hint = did_you_mean(self.value, lookup.columns)
            errs.append(f"lookup '{self.lookup}' has no column '{self.value}'{hint}")
        if self.via not in table.column_map:
            hint = did_you_mean(self.via, table.column_map)
            errs.append(f"via column '{self.via}' is not a column of {table.name}{hint}")
        return errs

    def possible_values(self, spec: DomainSpec) -> set[str]:
        return {str(v) for v in spec.lookups[self.lookup].values(self.value)}

    def copies(self, spec: DomainSpec, table: Table) -> LookupCopy:
        return LookupCopy(self.lookup, self.via, self.value)

    def may_be_null(self, spec: DomainSpec, table: Table, nullable: Nullable) -> bool:
        """NULL when ``via`` is NULL or not a key of the lookup, or the lookup's value is."""
        lookup = spec.lookups[self.lookup]
        keys = {str(k) for k in lookup.values(lookup.columns[0])}
        via_values = table.column_map[self.via].generator.possible_values(spec)
        return (
            nullable(table, self.via)
            or via_values is None
            or not via_values <= keys
            or any(v is None for v in lookup.values(self.value))
        )


class ForeignKeyGen(GeneratorModel):
    """A reference to a parent row, chosen statelessly from the row id.

    fan_out ``poisson``: parents picked uniformly, so children per parent ~ Poisson(rows/parents);
    ``zipf``: parent ranks drawn Zipf(s) and scattered over the parent ids, a heavy-tailed fan-out.
    """

    kind: Literal["foreign_key"]
    table: str
    fan_out: Literal["poisson", "zipf"] = "poisson"
    s: float = Field(default=1.1, gt=0)

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        if self.table not in spec.table_map:
            hint = did_you_mean(self.table, spec.table_map)
            return [f"foreign key to unknown table '{self.table}'{hint}"]
        if self.table == table.name:
            return ["self-referencing foreign keys are not supported"]
        return []


class ParentGen(GeneratorModel):
    """Copies column ``column`` of the parent row referenced by this table's FK column ``fk``."""

    kind: Literal["parent"]
    fk: str
    column: str

    def copies_entity(self, table: Table) -> bool:
        """Whether ``fk`` is the entity key the engine adds to SCD table ``table``."""
        return table.scd is not None and self.fk == table.scd.entity_key

    def source(self, spec: DomainSpec, table: Table) -> Table:
        """The table copied from: the FK's parent, or an SCD table's entity."""
        if table.scd and self.copies_entity(table):
            return spec.table_map[table.scd.entity]
        return spec.table_map[table.foreign_keys()[self.fk].table]

    def inputs(self, columns: set[str]) -> set[str]:
        return {self.fk}

    def parent_columns(self, fk: str) -> set[str]:
        return {self.column} if fk == self.fk else set()

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        if table.scd and self.copies_entity(table):
            entity = spec.table_map.get(table.scd.entity)
            if entity is not None and self.column not in entity.column_map:
                hint = did_you_mean(self.column, entity.column_map)
                return [f"'{self.column}' is not a column of {entity.name}{hint}"]
            return []
        fk = table.foreign_keys().get(self.fk)
        if fk is None:
            hint = did_you_mean(self.fk, table.foreign_keys())
            return [f"'{self.fk}' is not a foreign key column of {table.name}{hint}"]
        source = spec.table_map.get(fk.table, table)
        if self.column not in source.column_map:
            hint = did_you_mean(self.column, source.column_map)
            return [f"'{self.column}' is not a column of {fk.table}{hint}"]
        return []

    def copies(self, spec: DomainSpec, table: Table) -> ParentCopy:
        return ParentCopy(self.fk, self.source(spec, table).name, self.column)

    def may_be_null(self, spec: DomainSpec, table: Table, nullable: Nullable) -> bool:
        key_nullable = self.fk in table.column_map and nullable(table, self.fk)
        return key_nullable or nullable(self.source(spec, table), self.column)


class DateGen(GeneratorModel):
    """A date or timestamp drawn from a calendar (trend x weekly x yearly x holidays).

    ``not_before`` = ``col`` or ``fk_col.parent_col``: the draw is conditioned on being on or after
    that date (facts dated after their dimensions exist), keeping the calendar's shape.
    ``max_lag_days`` bounds how far after ``not_before`` the date may fall.
    ``not_after`` (same forms) is the upper bound: the draw is conditioned on being on or before
    that date (an appointment booked before its slot starts); on the reference's own day a
    timestamp falls before the reference's time. The bound holds for every row, ``lag_days``
    included; when the two references contradict each other, ``not_after`` wins.
    """

    kind: Literal["date"]
    calendar: str = "default"
    start: date | None = None
    end: date | None = None
    not_before: str | None = None
    max_lag_days: int | None = Field(default=None, ge=0)
    lag_days: int = Field(default=0, ge=0)
    not_after: str | None = Field(
        default=None, description="Upper bound: 'column' or 'fk_column.parent_column'."
    )

    def _references(self) -> list[str]:
        return [r for r in (self.not_before, self.not_after) if r]

    def inputs(self, columns: set[str]) -> set[str]:
        return {ref.split(".")[0] for ref in self._references()}

    def parent_columns(self, fk: str) -> set[str]:
        return {ref.split(".", 1)[1] for ref in self._references() if ref.startswith(fk + ".")}

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        errs: list[str] = []
        if self.calendar not in spec.calendars:
            hint = did_you_mean(self.calendar, spec.calendars)
            errs.append(f"unknown calendar '{self.calendar}'{hint}")
        if column.type not in ("date", "timestamp"):
            errs.append(f"date generator on a column of type {column.type}")
        for field, ref in (("not_before", self.not_before), ("not_after", self.not_after)):
            if ref:
                errs += self._reference_problems(spec, table, column, field, ref)
        return errs

    @staticmethod
    def _reference_problems(
        spec: DomainSpec, table: Table, column: Column, field: str, ref: str
    ) -> list[str]:
        parts = ref.split(".")
        cols = table.column_map
        if len(parts) == 1:
            if ref == column.name:
                return [f"{field} cannot reference the column itself"]
            if ref not in cols:
                return [f"{field} column '{ref}' is not a column{did_you_mean(ref, cols)}"]
            target = cols[ref]
            where = ref
        else:
            fk = table.foreign_keys().get(parts[0])
            if len(parts) != 2 or fk is None:
                hint = did_you_mean(parts[0], table.foreign_keys()) if len(parts) == 2 else ""
                return [f"{field} '{ref}': expected 'column' or 'fk_column.parent_column'{hint}"]
            parent = spec.table_map.get(fk.table)
            if parent is None:
                return []  # the foreign key itself reports the unknown table
            if parts[1] not in parent.column_map:
                hint = did_you_mean(parts[1], parent.column_map)
                return [f"{field} '{ref}': '{parts[1]}' is not a column of {parent.name}{hint}"]
            target = parent.column_map[parts[1]]
            where = f"{parent.name}.{parts[1]}"
        if target.type not in ("date", "timestamp"):
            return [f"{field} '{ref}': {where} is {target.type}, not a date or timestamp"]
        return []

    def span(self, spec: DomainSpec) -> tuple[date, date]:
        """The days drawn from: the generator's own start/end or its calendar's."""
        cal = spec.calendars[self.calendar]
        return self.start or cal.start, self.end or cal.end

    def date_range(self, spec: DomainSpec, timestamp: bool) -> DateRange:
        start, end = self.span(spec)
        # A not_after reference before the calendar's start pulls the date below it.
        low = None if self.not_after else datetime.combine(start, time.min)
        if self.not_before:
            return DateRange(low, None)  # the reference may lie after the calendar's end
        high = datetime.combine(end + timedelta(days=self.lag_days), time.min)
        if timestamp:
            high += timedelta(days=1) - timedelta(microseconds=1)
        return DateRange(low, high)

    def date_order(self) -> DateOrder | None:
        if not self.not_before:
            return None
        late = None
        if self.max_lag_days is not None:
            late = self.max_lag_days + self.lag_days + 1
        return DateOrder(self.not_before, self.max_lag_days, late)

    def date_ceiling(self) -> str | None:
        return self.not_after

    def may_be_null(self, spec: DomainSpec, table: Table, nullable: Nullable) -> bool:
        """NULL when the ``not_before`` reference is (a NULL ``not_after`` leaves it unbounded)."""
        if not self.not_before:
            return False
        ref = self.not_before.split(".")
        if len(ref) == 1:
            return nullable(table, ref[0])
        parent = spec.table_map[table.foreign_keys()[ref[0]].table]
        return nullable(table, ref[0]) or nullable(parent, ref[1])


class ExpressionGen(GeneratorModel):
    """A DuckDB SQL expression over other columns of the same row.

    ``u(k)`` in the SQL is replaced by a per-row uniform [0, 1) stream number k (0..9), so
    expressions can add their own seeded randomness.
    """

    kind: Literal["expression"]
    sql: str = Field(min_length=1)

    def inputs(self, columns: set[str]) -> set[str]:
        return _column_refs(self.sql, columns)

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        return [
            f"u({k}): stream numbers are 0..9"
            for k in re.findall(r"\bu\((\d+)\)", self.sql)
            if int(k) > 9
        ]

    def may_be_null(self, spec: DomainSpec, table: Table, nullable: Nullable) -> bool:
        """Conservative: NULL-producing constructs (NULLIF, CASE, TRY_*, division...) or a
        nullable input column make the expression nullable."""
        code = re.sub(r"'(?:[^']|'')*'", "''", self.sql)  # string literals cannot produce NULL
        if _NULLISH_SQL.search(code):
            return True
        refs = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code)) & set(table.column_map)
        return any(nullable(table, r) for r in refs)


class DerivedGen(GeneratorModel):
    """The column comes from the table's ``derived_sql`` (aggregates of other tables)."""

    kind: Literal["derived"]

    def may_be_null(self, spec: DomainSpec, table: Table, nullable: Nullable) -> bool:
        return True  # unknown: aggregates of other tables


class ConditionalGen(GeneratorModel):
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

    def inputs(self, columns: set[str]) -> set[str]:
        return {self.on}

    def problems(self, spec: DomainSpec, table: Table, column: Column) -> list[str]:
        if self.on not in table.column_map:
            hint = did_you_mean(self.on, table.column_map)
            return [f"'on' column '{self.on}' is not a column of {table.name}{hint}"]
        return []

    def may_be_null(self, spec: DomainSpec, table: Table, nullable: Nullable) -> bool:
        return any(
            g.may_be_null(spec, table, nullable) for g in [*self.cases.values(), self.default]
        )


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

_NULLISH_SQL = re.compile(r"\bnull|\bcase\b|\btry_|\bregexp_extract|/|->|\]\s*$", re.IGNORECASE)

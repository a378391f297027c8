"""The domain spec: tables, columns, generators, keys, constraints, calendars, stressors.

A ``DomainSpec`` validates its own cross references (FK targets, lookup names, column references,
cycles, stressor targets), so a spec that loads is a spec the engine can generate.
"""

from __future__ import annotations

import re
from datetime import date
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchforge.core.errors import BenchforgeError
from benchforge.synthesis.spec.generators import (
    DerivedGen,
    ForeignKeyGen,
    Generator,
)
from benchforge.synthesis.spec.stressors import (
    CurrencyConflict,
    DuplicateCurrent,
    KeyDrift,
    Outliers,
    Stressor,
    TimezoneMismatch,
    TypeCoercion,
)
from benchforge.synthesis.spec.suggest import did_you_mean

IDENT = re.compile(r"^[a-z][a-z0-9_]*$")
ColumnType = Literal["varchar", "bigint", "integer", "double", "date", "timestamp", "boolean"]
NUMERIC_TYPES = {"bigint", "integer", "double"}


class SpecError(BenchforgeError):
    """A spec that fails validation: names the file and the field path."""

    def __init__(self, file: str, problems: list[tuple[str, str]]):
        self.file = file
        self.problems = problems
        lines = [f"{file}: {path}: {msg}" for path, msg in problems]
        super().__init__("invalid domain spec\n  " + "\n  ".join(lines))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Column(_Strict):
    name: str
    type: ColumnType = "varchar"
    description: str = ""
    generator: Generator
    null_rate: float = Field(default=0.0, ge=0, lt=1, description="Clean (by design) NULLs.")
    unique: bool = False
    not_null: bool = False
    min: float | None = None
    max: float | None = None
    accepted_values: list[str | int | float | bool] | None = None

    @field_validator("name")
    @classmethod
    def _ident(cls, v: str) -> str:
        if not IDENT.match(v):
            raise ValueError(f"'{v}' is not a lower_snake_case identifier")
        return v


class VersionCount(_Strict):
    """Versions per entity: 1 + Binomial-free geometric draw with mean ``mean``, capped at max."""

    mean: float = Field(default=2.0, ge=1)
    max: int = Field(default=6, ge=1, le=50)


class ScdSpec(_Strict):
    """Makes a table a slowly changing dimension history of ``entity``.

    The engine adds the entity key column ``entity_key`` (FK to the entity's primary key) and
    ``valid_from`` / ``valid_to`` / ``is_current``. A ``parent`` generator with
    ``fk: <entity_key>`` copies the entity's value into every version; on the current version
    every column whose name the entity also has takes the entity's value, so the current row
    agrees with the entity table.
    """

    entity: str
    entity_key: str
    start_from: str = Field(description="Entity date/timestamp column where history starts.")
    versions: VersionCount = VersionCount()
    mean_days_between: float = Field(default=180, gt=0)


class Table(_Strict):
    name: str
    description: str = ""
    rows: int = Field(default=0, ge=0, description="Rows at scale 1 (ignored for SCD tables).")
    scales: bool = Field(default=True, description="False for fixed-size reference tables.")
    primary_key: str
    scd: ScdSpec | None = None
    derived_sql: str | None = Field(
        default=None,
        description=(
            "A SELECT over other (clean) tables of the domain, e.g. aggregates that must agree "
            "with the facts; every column then uses the 'derived' generator."
        ),
    )
    columns: list[Column] = Field(min_length=1)

    @field_validator("name")
    @classmethod
    def _ident(cls, v: str) -> str:
        if not IDENT.match(v):
            raise ValueError(f"'{v}' is not a lower_snake_case identifier")
        return v

    @cached_property
    def column_map(self) -> dict[str, Column]:
        return {c.name: c for c in self.columns}

    def row_count(self, scale: float) -> int:
        return self.rows if not self.scales else max(1, round(self.rows * scale))

    def foreign_keys(self) -> dict[str, ForeignKeyGen]:
        return {c.name: c.generator for c in self.columns if isinstance(c.generator, ForeignKeyGen)}


class Lookup(_Strict):
    """A small reference table for conditional links; the first column is the key."""

    columns: list[str] = Field(min_length=2)
    rows: list[list[Any]] = Field(min_length=1)
    weight: str | None = Field(default=None, description="Column with sampling weights.")

    @model_validator(mode="after")
    def _shape(self) -> Lookup:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"rows[{i}] has {len(row)} values for {len(self.columns)} columns")
        keys = [r[0] for r in self.rows]
        if len(set(keys)) != len(keys):
            raise ValueError("the first column (key) has duplicate values")
        if self.weight is not None and self.weight not in self.columns:
            raise ValueError(f"weight column '{self.weight}' is not among the columns")
        return self

    def values(self, column: str) -> list[Any]:
        i = self.columns.index(column)
        return [r[i] for r in self.rows]


class Holiday(_Strict):
    month: int = Field(ge=1, le=12)
    day: int = Field(ge=1, le=31)


class Calendar(_Strict):
    """Day weights = trend x weekly[dow] x monthly[month] x (holiday_factor on holidays)."""

    start: date
    end: date
    yearly_growth: float = Field(default=0.0, gt=-1, description="0.2 = +20% volume per year.")
    weekly: list[float] = Field(default=[1.0] * 7, min_length=7, max_length=7)
    monthly: list[float] = Field(default=[1.0] * 12, min_length=12, max_length=12)
    holidays: list[Holiday] = Field(default_factory=list)
    holiday_factor: float = Field(default=0.3, ge=0)

    @model_validator(mode="after")
    def _range(self) -> Calendar:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        if any(w < 0 for w in [*self.weekly, *self.monthly]) or sum(self.weekly) <= 0:
            raise ValueError("weights must be non-negative")
        return self


class DomainSpec(_Strict):
    domain: str
    version: str = "1"
    description: str = ""
    reference_date: date | None = Field(
        default=None,
        description=(
            "The 'today' Faker date providers see (date_of_birth, date_between with relative "
            "arguments such as '-30y'...). Default: the last day of the spec's calendars, so "
            "generated data never depends on the day it is generated."
        ),
    )
    calendars: dict[str, Calendar] = Field(min_length=1)
    lookups: dict[str, Lookup] = Field(default_factory=dict)
    tables: list[Table] = Field(min_length=1)
    stressors: list[Stressor] = Field(default_factory=list)

    @cached_property
    def table_map(self) -> dict[str, Table]:
        return {t.name: t for t in self.tables}

    def faker_today(self) -> date:
        """The reference date Faker pools are built at (``reference_date`` or calendar end)."""
        return self.reference_date or max(c.end for c in self.calendars.values())

    def parents_of(self, table: Table) -> set[str]:
        parents = {fk.table for fk in table.foreign_keys().values()}
        if table.scd:
            parents.add(table.scd.entity)
        if table.derived_sql:
            parents |= _sql_table_refs(table.derived_sql, set(self.table_map)) - {table.name}
        return parents

    def generation_order(self) -> list[Table]:
        """Tables in FK order (parents first); ties keep spec order."""
        order: list[Table] = []
        done: set[str] = set()
        pending = list(self.tables)
        while pending:
            ready = [t for t in pending if self.parents_of(t) - {t.name} <= done]
            if not ready:  # cycles are rejected at validation; this is a guard.
                raise ValueError("FK cycle among " + ", ".join(t.name for t in pending))
            for t in ready:
                order.append(t)
                done.add(t.name)
            pending = [t for t in pending if t.name not in done]
        return order

    @model_validator(mode="after")
    def _cross_references(self) -> DomainSpec:
        problems = list(_check_references(self))
        if problems:
            # Pydantic reports the message; the loader maps it back to "path: message" lines.
            raise ValueError("\n".join(f"@{path}: {msg}" for path, msg in problems))
        return self


def _sql_table_refs(sql: str, names: set[str]) -> set[str]:
    return {tok for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql) if tok in names}


def generator_dependencies(table: Table, column: Column) -> set[str]:
    """Same-table columns that must be computed before ``column``."""
    return column.generator.inputs(set(table.column_map)) - {column.name}


def table_path(table: Table) -> str:
    """Where a table sits in the spec, by name: ``tables.appointments``."""
    return f"tables.{table.name}"


def column_path(table: Table, column: Column) -> str:
    """Where a column sits in the spec, by name: ``tables.appointments.columns.booked_at``."""
    return f"{table_path(table)}.columns.{column.name}"


def stressor_label(s: Stressor) -> str:
    """``key_drift on appointments.patient_id`` (``duplicate_current on doctor_history``)."""
    target = s.table if isinstance(s, DuplicateCurrent) else f"{s.table}.{s.column}"
    return f"{s.kind} on {target}"


def stressor_path(index: int, s: Stressor) -> str:
    return f"stressors[{index}] ({stressor_label(s)})"


def _check_references(spec: DomainSpec) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    tables = spec.table_map
    if len(tables) != len(spec.tables):
        problems.append(("tables", "duplicate table names"))
    for table in spec.tables:
        base = table_path(table)
        cols = table.column_map
        if len(cols) != len(table.columns):
            problems.append((f"{base}.columns", "duplicate column names"))
        if table.primary_key not in cols:
            hint = did_you_mean(table.primary_key, cols)
            problems.append((f"{base}.primary_key", f"'{table.primary_key}' is not a column{hint}"))
        if not table.scd and not table.derived_sql and table.rows < 1:
            problems.append((f"{base}.rows", "must be >= 1"))
        derived_cols = [c.name for c in table.columns if isinstance(c.generator, DerivedGen)]
        if table.derived_sql and len(derived_cols) != len(table.columns):
            problems.append((f"{base}.columns", "a derived table's columns all use 'derived'"))
        if not table.derived_sql and derived_cols:
            problems.append((f"{base}.derived_sql", f"{derived_cols[0]} is 'derived' but no SQL"))
        if table.derived_sql and table.scd:
            problems.append((f"{base}.scd", "a table is either derived or SCD"))
        if table.scd:
            problems += _check_scd(spec, table)
        for col in table.columns:
            path = column_path(table, col)
            problems += [(f"{path}.generator", m) for m in col.generator.problems(spec, table, col)]
            if col.min is not None and col.max is not None and col.min > col.max:
                problems.append((f"{path}.min", "min is greater than max"))
        cycle = _column_cycle(table)
        if cycle:
            problems.append((f"{base}.columns", "column dependency cycle: " + " -> ".join(cycle)))
    cycle = _table_cycle(spec)
    if cycle:
        problems.append(("tables", "foreign key cycle: " + " -> ".join(cycle)))
    for si, stressor in enumerate(spec.stressors):
        where = stressor_path(si, stressor)
        problems += [(f"{where}{p}", m) for p, m in _check_stressor(spec, stressor)]
    problems += _check_stressor_budget(spec)
    return problems


def _check_scd(spec: DomainSpec, table: Table) -> list[tuple[str, str]]:
    assert table.scd is not None
    scd, base = table.scd, table_path(table)
    problems: list[tuple[str, str]] = []
    entity = spec.table_map.get(scd.entity)
    if entity is None:
        hint = did_you_mean(scd.entity, spec.table_map)
        problems.append((f"{base}.scd.entity", f"unknown table '{scd.entity}'{hint}"))
    elif scd.start_from not in entity.column_map:
        hint = did_you_mean(scd.start_from, entity.column_map)
        problems.append(
            (f"{base}.scd.start_from", f"'{scd.start_from}' is not a column of {scd.entity}{hint}")
        )
    for reserved in (scd.entity_key, "valid_from", "valid_to", "is_current"):
        if reserved in table.column_map:
            problems.append((f"{base}.columns", f"'{reserved}' is added by the engine"))
    return problems


def _column_cycle(table: Table) -> list[str] | None:
    deps = {c.name: generator_dependencies(table, c) & set(table.column_map) for c in table.columns}
    return _find_cycle(deps)


def _table_cycle(spec: DomainSpec) -> list[str] | None:
    deps = {t.name: spec.parents_of(t) & set(spec.table_map) for t in spec.tables}
    return _find_cycle(deps)


def _find_cycle(deps: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(deps.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in deps:
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _check_stressor(spec: DomainSpec, s: Stressor) -> list[tuple[str, str]]:
    """What makes a stressor unable to apply: unknown targets, a column type it cannot change,
    or values it would never change (a silent no-op is an error, not a zero in the manifest)."""
    table = spec.table_map.get(s.table)
    if table is None:
        return [(".table", f"unknown table '{s.table}'{did_you_mean(s.table, spec.table_map)}")]
    if isinstance(s, DuplicateCurrent):
        if not table.scd:
            return [(".table", f"'{s.table}' is not an SCD history table")]
        if table.scd.versions.max < 2:
            return [
                (
                    ".table",
                    f"'{s.table}' has at most one version per entity (scd.versions.max = 1): "
                    "no previous version can stay current",
                )
            ]
        return []
    column = table.column_map.get(s.column)
    if column is None:
        hint = did_you_mean(s.column, table.column_map)
        return [(".column", f"'{s.column}' is not a column of {s.table}{hint}")]
    if s.column == table.primary_key:
        return [(".column", "stressors cannot touch the primary key")]
    if isinstance(s, Outliers | TypeCoercion) and column.type not in NUMERIC_TYPES:
        return [(".column", f"{s.kind} needs a numeric column, '{s.column}' is {column.type}")]
    if isinstance(s, Outliers) and _always_zero(spec, column):
        return [(".column", f"'{s.column}' is always 0: outliers only multiply non-zero values")]
    if isinstance(s, CurrencyConflict) and column.type != "varchar":
        return [(".column", f"currency codes need a varchar column, '{s.column}' is {column.type}")]
    if isinstance(s, TimezoneMismatch):
        return _check_timezone(spec, table, s)
    if isinstance(s, KeyDrift):
        gen = column.generator
        if not isinstance(gen, ForeignKeyGen):
            return [(".column", "key_drift applies to foreign key columns")]
        parent = spec.table_map.get(gen.table)
        parent_pk = parent.column_map.get(parent.primary_key) if parent else None
        if column.type != "varchar" or (parent_pk is not None and parent_pk.type != "varchar"):
            return [(".column", f"key_drift needs a text key; {gen.table}'s key is not varchar")]
    return []


def _always_zero(spec: DomainSpec, column: Column) -> bool:
    gen = column.generator
    bounds = gen.bounds()
    if bounds is not None and bounds.low == 0 and bounds.high == 0:
        return True
    values = gen.possible_values(spec)
    if not values:
        return False
    try:
        return all(float(v) == 0 for v in values)
    except ValueError:
        return False


def _check_timezone(spec: DomainSpec, table: Table, s: TimezoneMismatch) -> list[tuple[str, str]]:
    column = table.column_map[s.column]
    if column.type != "timestamp":
        return [(".column", f"'{s.column}' is {column.type}, not a timestamp column")]
    lookup = spec.lookups.get(s.offset_lookup)
    if lookup is None:
        hint = did_you_mean(s.offset_lookup, spec.lookups)
        return [(".offset_lookup", f"unknown lookup '{s.offset_lookup}'{hint}")]
    if s.offset_value not in lookup.columns:
        hint = did_you_mean(s.offset_value, lookup.columns)
        return [(".offset_value", f"lookup has no column '{s.offset_value}'{hint}")]
    via = table.column_map.get(s.offset_via)
    if via is None:
        hint = did_you_mean(s.offset_via, table.column_map)
        return [(".offset_via", f"'{s.offset_via}' is not a column of {s.table}{hint}")]
    offsets = dict(
        zip(lookup.values(lookup.columns[0]), lookup.values(s.offset_value), strict=True)
    )
    reachable = via.generator.possible_values(spec)
    if reachable is not None:
        offsets = {k: v for k, v in offsets.items() if str(k) in reachable}
    if not any(_non_zero(v) for v in offsets.values()):
        return [
            (
                ".offset_lookup",
                f"every offset in {s.offset_lookup}.{s.offset_value} that {s.offset_via} can "
                "take is zero (or missing): no row can be shifted",
            )
        ]
    return []


def _non_zero(value: Any) -> bool:
    try:
        return value is not None and float(value) != 0
    except (TypeError, ValueError):
        return False


def _check_stressor_budget(spec: DomainSpec) -> list[tuple[str, str]]:
    """Stressors on one column share one uniform draw in disjoint intervals: rates must fit."""
    totals: dict[tuple[str, str], float] = {}
    kinds: dict[tuple[str, str], list[str]] = {}
    for s in spec.stressors:
        if isinstance(s, DuplicateCurrent):
            continue
        key = (s.table, s.column)
        totals[key] = totals.get(key, 0.0) + s.rate
        kinds.setdefault(key, []).append(s.kind)
    problems = []
    for (table, column), total in totals.items():
        if total > 0.5:
            problems.append(
                ("stressors", f"rates on {table}.{column} add up to {total:.3f} (> 0.5)")
            )
        ks = kinds[(table, column)]
        if "type_coercion" in ks and len(ks) > 1:
            problems.append(
                ("stressors", f"type_coercion on {table}.{column} must be its only stressor")
            )
        if len(set(ks)) != len(ks):
            problems.append(("stressors", f"{table}.{column} has the same stressor twice"))
    return problems

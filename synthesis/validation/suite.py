"""Derives the expectation suite of each table from the domain spec.

A ``TablePlan`` has two kinds of checks:

* ``RowCheck``: a Great Expectations expectation evaluated on bounded chunks of the table read
  from DuckDB (the runner merges the per-chunk results). Cross-row facts are turned into per-row
  helper columns in DuckDB (``_bf_orphan__<fk>`` via a join to the parent keys, ``_bf_clean__<col>``
  from the anomaly manifest...), and chunks are ``hash(pk) % P`` partitions, so duplicate keys
  always share a chunk and uniqueness stays exact.
* ``AggregateCheck``: a count, share or mean computed in DuckDB over the whole table (``metrics``)
  and compared with bounds derived from the spec and from other metrics (manifest counts, the
  number of eligible rows); the runner validates the one-row frame of observed values with GE.

"Clean" rows of a column are rows the manifest does not list for that column; generator checks
(distributions, generator ranges) also skip SCD current versions of columns the engine copies
from the entity.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Any, Literal

import great_expectations.expectations as gxe
from great_expectations.expectations.expectation import Expectation
from great_expectations.expectations.row_conditions import Column as GxColumn
from great_expectations.expectations.row_conditions import Condition

from benchforge.synthesis.spec.generators import (
    BooleanGen,
    CategoricalGen,
    ConditionalGen,
    DateGen,
    ExpressionGen,
    FakerGen,
    ForeignKeyGen,
    LognormalGen,
    LookupGen,
    LookupKeyGen,
    NormalGen,
    ParentGen,
    PoissonGen,
    UniformGen,
    ZipfGen,
)
from benchforge.synthesis.spec.models import Column, DomainSpec, Table
from benchforge.synthesis.spec.stressors import (
    CurrencyConflict,
    DuplicateCurrent,
    KeyDrift,
    MissingValues,
    Outliers,
    Stressor,
    TimezoneMismatch,
    TypeCoercion,
)
from benchforge.synthesis.validation import stats
from benchforge.synthesis.validation.sqltext import (
    INTEGER_TYPES,
    MANIFEST_TABLE,
    NUMERIC_TYPES,
    SPEC_TYPES,
    and_,
    key_join,
    lit,
    q,
    raw,
    regex_literal,
    same_value,
)

PLAIN_NUMBER = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"
Metrics = Mapping[str, float | None]
Stat = Literal["count", "share", "mean"]
Source = Literal["rows", "manifest", "scalar"]
TableTypes = Mapping[str, Mapping[str, str]]  # table -> column -> DuckDB type


def formatted_number(unit: str) -> str:
    """What type_coercion renders: ``1,234.50`` (|x| >= 1000) or ``123.40 <unit>``."""
    thousands = r"-?[0-9]{1,3}(,[0-9]{3})+\.[0-9]{2}"
    with_unit = r"-?[0-9]+\.[0-9]{2} " + regex_literal(unit)
    return f"^({thousands}|{with_unit})$"


@dataclass(frozen=True)
class RowCheck:
    check: str
    table: str
    column: str | None
    expectation: Expectation
    expected: str
    label: str | None = None


@dataclass(frozen=True)
class AggregateCheck:
    check: str
    table: str
    column: str | None
    description: str
    stat: Stat
    evaluate: Callable[[Metrics], tuple[float, float, float] | None]  # observed, low, high
    label: str | None = None


@dataclass
class TablePlan:
    table: Table
    primary_key: str
    source: str  # FROM clause (raw table aliased t + helper joins) of the "rows" metrics
    rows_template: str  # SELECT of the raw columns + helper columns over {relation} (the table)
    setup: list[str]

    def rows_sql(self, partition: tuple[int, int] | None = None) -> str:
        """The table with its helper columns; ``partition`` = (P, i) keeps rows whose
        ``hash(pk) % P = i``, filtered before the joins."""
        relation = raw(self.table.name)
        if partition is not None:
            parts, part = partition
            key = q(self.primary_key)
            relation = f"(SELECT * FROM {relation} WHERE hash({key}) % {parts} = {part})"
        return self.rows_template.format(relation=relation)

    cleanup: list[str]
    fetch: list[str]  # columns of rows_sql() read per chunk
    row_checks: list[RowCheck]
    metrics: dict[str, tuple[Source, str]]
    aggregate_checks: list[AggregateCheck]


@dataclass(frozen=True)
class GenerationInfo:
    """What ``manifest.json`` (written by the engine) says was generated, if present."""

    scale: float
    table_rows: Mapping[str, int]
    anomaly_counts: Mapping[str, int]  # table -> anomalies


class MissingDependency(Exception):
    """A table the checks of another table need (parent, entity) is not in the warehouse."""


def expected_columns(spec: DomainSpec, table: Table) -> dict[str, str]:
    """Published columns and DuckDB types: declared ones (type_coercion makes VARCHAR) plus the
    engine-added SCD columns."""
    coerced = {
        s.column for s in spec.stressors if isinstance(s, TypeCoercion) and s.table == table.name
    }
    cols = {c.name: "VARCHAR" if c.name in coerced else SPEC_TYPES[c.type] for c in table.columns}
    if table.scd:
        entity = spec.table_map[table.scd.entity]
        cols[table.scd.entity_key] = SPEC_TYPES[entity.column_map[entity.primary_key].type]
        cols |= {"valid_from": "TIMESTAMP", "valid_to": "TIMESTAMP", "is_current": "BOOLEAN"}
    return cols


# ---------------------------------------------------------------- generator facts


def _possible_values(spec: DomainSpec, table: Table, column: str) -> set[str] | None:
    gen = table.column_map[column].generator
    if isinstance(gen, CategoricalGen):
        return {str(v) for v in gen.values}
    if isinstance(gen, LookupKeyGen):
        lookup = spec.lookups[gen.lookup]
        return {str(v) for v in lookup.values(lookup.columns[0])}
    if isinstance(gen, LookupGen):
        return {str(v) for v in spec.lookups[gen.lookup].values(gen.value)}
    return None


def generator_can_be_null(spec: DomainSpec, table: Table, column: str, depth: int = 0) -> bool:
    """Whether the column's generator (ignoring ``null_rate`` and stressors) can yield NULL;
    True when unknown (expressions, derived tables)."""
    if depth > 20:
        return True
    col = table.column_map[column]
    gen = col.generator

    def nullable(t: Table, c: str) -> bool:
        return t.column_map[c].null_rate > 0 or generator_can_be_null(spec, t, c, depth + 1)

    result: bool
    if isinstance(gen, ParentGen):
        key, parent = parent_source(spec, table, gen)
        key_nullable = key in table.column_map and nullable(table, key)
        result = key_nullable or nullable(parent, gen.column)
    elif isinstance(gen, LookupGen):
        lookup = spec.lookups[gen.lookup]
        keys = {str(k) for k in lookup.values(lookup.columns[0])}
        via_values = _possible_values(spec, table, gen.via)
        result = (
            nullable(table, gen.via)
            or via_values is None
            or not via_values <= keys
            or any(v is None for v in lookup.values(gen.value))
        )
    elif isinstance(gen, FakerGen):
        if gen.locale_from:
            values = _possible_values(spec, table, gen.locale_from)
            result = (
                nullable(table, gen.locale_from) or values is None or not values <= set(gen.locales)
            )
        else:
            result = False
    elif isinstance(gen, DateGen):
        result = False
        if gen.not_before:
            ref = gen.not_before.split(".")
            if len(ref) == 1:
                result = nullable(table, ref[0])
            else:
                fk = table.column_map[ref[0]].generator
                assert isinstance(fk, ForeignKeyGen)
                result = nullable(table, ref[0]) or nullable(spec.table_map[fk.table], ref[1])
    elif isinstance(gen, ConditionalGen):
        result = any(
            isinstance(g, ExpressionGen) and _expression_can_be_null(spec, table, g, depth)
            for g in [*gen.cases.values(), gen.default]
        )
    elif isinstance(gen, ExpressionGen):
        result = _expression_can_be_null(spec, table, gen, depth)
    elif gen.kind == "derived":
        result = True
    else:
        result = False
    if not result and table.scd:
        entity = spec.table_map[table.scd.entity]
        if column in entity.column_map and column != table.primary_key:
            result = nullable(entity, column)
    return result


_NULLISH_SQL = re.compile(r"\bnull|\bcase\b|\btry_|\bregexp_extract|/|->|\]\s*$", re.IGNORECASE)


def _expression_can_be_null(spec: DomainSpec, table: Table, gen: ExpressionGen, depth: int) -> bool:
    """Conservative: NULL-producing constructs (NULLIF, CASE, TRY_*, division...) or a nullable
    input column make the expression nullable."""
    code = re.sub(r"'(?:[^']|'')*'", "''", gen.sql)  # string literals cannot produce NULL
    if _NULLISH_SQL.search(code):
        return True
    refs = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code)) & set(table.column_map)
    return any(
        table.column_map[r].null_rate > 0 or generator_can_be_null(spec, table, r, depth + 1)
        for r in refs
    )


def parent_source(spec: DomainSpec, table: Table, gen: ParentGen) -> tuple[str, Table]:
    """The key column and the parent table a ``parent`` generator copies from (an SCD table's
    ``fk`` may be its engine-added entity key)."""
    if table.scd and gen.fk == table.scd.entity_key:
        return gen.fk, spec.table_map[table.scd.entity]
    fk = table.column_map[gen.fk].generator
    assert isinstance(fk, ForeignKeyGen)
    return gen.fk, spec.table_map[fk.table]


def _python_values(values: list[Any], duck_type: str) -> list[Any]:
    """Spec values as pandas will show them for a column of ``duck_type``."""
    out: list[Any] = []
    for v in values:
        try:
            if duck_type in INTEGER_TYPES:
                out.append(int(v))
            elif duck_type in NUMERIC_TYPES:
                out.append(float(v))
            elif duck_type == "BOOLEAN":
                out.append(v if isinstance(v, bool) else str(v).lower() == "true")
            else:
                out.append(str(v).lower() if isinstance(v, bool) else str(v))
        except (TypeError, ValueError):
            out.append(v)
    return out


def _weights(values: list[Any], weights: list[float] | None) -> list[tuple[Any, float]]:
    ws = weights or [1.0] * len(values)
    total = sum(ws)
    merged: dict[str, tuple[Any, float]] = {}
    for v, w in zip(values, ws, strict=True):
        prev = merged.get(repr(v), (v, 0.0))
        merged[repr(v)] = (v, prev[1] + w / total)
    return list(merged.values())


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _range_text(low: Any, high: Any) -> str:
    def fmt(x: Any) -> str:
        return _fmt(x) if isinstance(x, int | float) else str(x)

    if high is None:
        return f">= {fmt(low)}" if low is not None else "any value"
    if low is None:
        return f"<= {fmt(high)}"
    return f"between {fmt(low)} and {fmt(high)}"


# ---------------------------------------------------------------- the plan builder


@dataclass
class _Parent:
    table: Table
    columns: set[str] = field(default_factory=set)


class _Builder:
    def __init__(
        self, spec: DomainSpec, table: Table, types: TableTypes, generation: GenerationInfo | None
    ):
        self.spec, self.table, self.types, self.generation = spec, table, types, generation
        self.name = table.name
        self.mine = types[table.name]
        self.pk = table.primary_key
        self.stressors: dict[str, list[Stressor]] = {}
        self.dup: DuplicateCurrent | None = None
        for s in spec.stressors:
            if s.table != table.name:
                continue
            if isinstance(s, DuplicateCurrent):
                self.dup = s
            else:
                self.stressors.setdefault(s.column, []).append(s)
        self.coerced = {
            c for c, ss in self.stressors.items() if any(isinstance(s, TypeCoercion) for s in ss)
        }
        self.shared: set[str] = set()
        if table.scd:
            entity = spec.table_map[table.scd.entity]
            self.shared = set(entity.column_map) & set(table.column_map) - {self.pk}
        self.select: dict[str, str] = {}
        self.parents: dict[str, _Parent] = {}
        self.parent_joins: dict[str, tuple[str, str]] = {}  # alias -> (key column, parent table)
        self.lookups: set[str] = set()
        self.lookup_joins: dict[str, tuple[str, str]] = {}  # alias -> (lookup, via column)
        self.fetch: list[str] = [self.pk]
        self.row_checks: list[RowCheck] = []
        self.metrics: dict[str, tuple[Source, str]] = {}
        self.aggregates: list[AggregateCheck] = []

    # ---- SQL pieces

    def col(self, c: str) -> str:
        return f"t.{q(c)}"

    def value(self, c: str) -> str:
        """The column's value as a number when type_coercion published it as text."""
        return f"TRY_CAST(t.{q(c)} AS DOUBLE)" if c in self.coerced else f"t.{q(c)}"

    def value_type(self, c: str) -> str:
        return "DOUBLE" if c in self.coerced else self.mine.get(c, "VARCHAR")

    def value_column(self, c: str) -> str:
        """Name of the fetched column holding ``value(c)``."""
        if c not in self.coerced:
            return self.use(c)
        return self.helper(f"num__{c}", self.value(c))

    def touched(self, c: str) -> str | None:
        return f"coalesce(m.{q(c)}, false)" if c in self.stressors else None

    def touched_by(self, c: str, kind: str) -> str | None:
        if not any(s.kind == kind for s in self.stressors.get(c, [])):
            return None
        return f"coalesce(m.{q(c + '__' + kind)}, false)"

    def clean(self, c: str) -> str | None:
        t = self.touched(c)
        return f"NOT {t}" if t else None

    def dup_flag(self) -> str:
        return 'coalesce(m."__dup", false)' if self.dup else "false"

    def latest(self) -> str:
        """SCD: the true current version (is_current, and not a duplicate_current leftover)."""
        return f'(coalesce(t."is_current", false) AND NOT {self.dup_flag()})'

    def governed(self, c: str) -> str | None:
        """Rows whose value of ``c`` comes from its generator (SCD current versions of shared
        columns copy the entity instead)."""
        return f"NOT {self.latest()}" if c in self.shared else None

    def generated(self, c: str) -> str | None:
        return and_(self.clean(c), self.governed(c))

    def use(self, c: str) -> str:
        if c not in self.fetch:
            self.fetch.append(c)
        return c

    def helper(self, name: str, sql: str) -> str:
        full = f"_bf_{name}"
        self.select[full] = sql
        return self.use(full)

    def flag(self, name: str, sql: str | None) -> Condition | None:
        """A boolean helper column and the GE row_condition selecting its true rows; None when
        ``sql`` is None (all rows)."""
        if sql is None:
            return None
        column = self.helper(name, f"coalesce({sql}, false)")
        return GxColumn(column) == True  # noqa: E712 - builds a GE condition

    def metric(self, source: Source, sql: str) -> str:
        for name, existing in self.metrics.items():
            if existing == (source, sql):
                return name
        name = f"m{len(self.metrics)}"
        self.metrics[name] = (source, sql)
        return name

    def count_rows(self, cond: str | None = None) -> str:
        return self.metric("rows", f"count(*) FILTER (WHERE {cond})" if cond else "count(*)")

    def count_manifest(self, column: str | None, kind: str) -> str:
        col = "column_name IS NULL" if column is None else f"column_name = {lit(column)}"
        return self.metric("manifest", f"count(*) FILTER (WHERE {col} AND kind = {lit(kind)})")

    def parent_alias(self, key: str, parent_name: str) -> str:
        if parent_name not in self.types:
            raise MissingDependency(parent_name)
        alias = f"p__{key}"
        if alias not in self.parent_joins:
            parent = self.spec.table_map[parent_name]
            self.parents.setdefault(parent_name, _Parent(parent))
            self.parent_joins[alias] = (key, parent_name)
        return alias

    def lookup_alias(self, lookup: str, via: str) -> str:
        alias = f"l__{lookup}__{via}"
        self.lookups.add(lookup)
        self.lookup_joins[alias] = (lookup, via)
        return alias

    # ---- checks

    def row(
        self,
        check: str,
        target: str | None,
        expectation_cls: type[Expectation],
        description: str,
        expected: str,
        row_condition: Condition | None = None,
        label: str | None = None,
        **kwargs: Any,
    ) -> None:
        """A row check on report column ``target``; ``kwargs`` go to the GE expectation."""
        if row_condition is not None:
            kwargs["row_condition"] = row_condition
        for key in ("column", "column_A", "column_B"):
            if key in kwargs:
                self.use(kwargs[key])
        meta = {
            "check": check,
            "table": self.name,
            "column": target,
            "label": label,
            "key": str(len(self.row_checks)),
        }
        expectation = expectation_cls(description=description, meta=meta, **kwargs)
        self.row_checks.append(RowCheck(check, self.name, target, expectation, expected, label))

    def aggregate(
        self,
        check: str,
        column: str | None,
        description: str,
        stat: Stat,
        evaluate: Callable[[Metrics], tuple[float, float, float] | None],
        label: str | None = None,
    ) -> None:
        self.aggregates.append(
            AggregateCheck(check, self.name, column, description, stat, evaluate, label)
        )

    def equal_counts(
        self,
        check: str,
        column: str | None,
        description: str,
        observed: str,
        expected: str,
        label: str | None = None,
    ) -> None:
        def evaluate(m: Metrics) -> tuple[float, float, float] | None:
            o, e = m[observed], m[expected]
            return None if o is None or e is None else (o, e, e)

        self.aggregate(check, column, description, "count", evaluate, label)

    def zero_count(self, check: str, column: str | None, description: str, observed: str) -> None:
        def evaluate(m: Metrics) -> tuple[float, float, float] | None:
            o = m[observed]
            return None if o is None else (o, 0.0, 0.0)

        self.aggregate(check, column, description, "count", evaluate)

    # ---- derivation

    def build(self) -> TablePlan:
        self.primary_key_checks()
        for column in self.table.columns:
            self.column_checks(column)
        self.foreign_key_checks()
        if self.table.scd:
            self.scd_checks()
        for c, ss in self.stressors.items():
            for s in ss:
                self.stressor_checks(c, s)
        if self.dup:
            self.duplicate_current_checks(self.dup)
        self.manifest_checks()
        self.row_count_checks()
        return self.finish()

    def primary_key_checks(self) -> None:
        t, pk = self.name, self.pk
        self.row(
            "primary_key_not_null",
            pk,
            gxe.ExpectColumnValuesToNotBeNull,
            f"{t}.{pk} (primary key) is never NULL",
            "no NULLs",
            column=pk,
        )
        self.row(
            "primary_key_unique",
            pk,
            gxe.ExpectColumnValuesToBeUnique,
            f"{t}.{pk} (primary key) is unique",
            "unique values",
            column=pk,
        )

    def foreign_key_checks(self) -> None:
        fks: list[tuple[str, str]] = [(c, g.table) for c, g in self.table.foreign_keys().items()]
        if self.table.scd:
            fks.append((self.table.scd.entity_key, self.table.scd.entity))
        for c, parent_name in fks:
            alias = self.parent_alias(c, parent_name)
            parent_pk = self.spec.table_map[parent_name].primary_key
            orphan = self.helper(
                f"orphan__{c}",
                f"CASE WHEN {self.col(c)} IS NOT NULL AND {alias}.k IS NULL "
                f"THEN CAST({self.col(c)} AS VARCHAR) END",
            )
            drift = self.touched_by(c, "key_drift")
            self.row(
                "fk_no_orphans_outside_manifest",
                c,
                gxe.ExpectColumnValuesToBeNull,
                f"{self.name}.{c} references an existing {parent_name}.{parent_pk} on every row "
                "the manifest does not list as key_drift",
                "0 orphan keys",
                self.flag(f"nodrift__{c}", f"NOT {drift}" if drift else None),
                column=orphan,
            )
            orphans = self.count_rows(f"{self.col(c)} IS NOT NULL AND {alias}.k IS NULL")
            self.equal_counts(
                "fk_orphans_match_manifest",
                c,
                f"orphan keys in {self.name}.{c} == manifest key_drift rows",
                orphans,
                self.count_manifest(c, "key_drift"),
            )

    def column_checks(self, column: Column) -> None:
        c, t = column.name, self.name
        if c == self.pk:
            return
        vtype = self.value_type(c)

        def clean_cond() -> Condition | None:
            return self.flag(f"clean__{c}", self.clean(c))

        mv = self.touched_by(c, "missing_values")
        nullable = generator_can_be_null(self.spec, self.table, c)
        if column.not_null:
            self.row(
                "not_null_outside_manifest",
                c,
                gxe.ExpectColumnValuesToNotBeNull,
                f"{t}.{c} (not_null) is NULL only on the manifest's missing_values rows",
                "no NULLs",
                self.flag(f"nomv__{c}", f"NOT {mv}" if mv else None),
                column=c,
            )
        if column.not_null or (column.null_rate == 0 and not nullable):
            self.equal_counts(
                "nulls_match_manifest",
                c,
                f"NULLs in {t}.{c} == manifest missing_values rows (no clean NULLs)",
                self.count_rows(f"{self.col(c)} IS NULL"),
                self.count_manifest(c, "missing_values"),
            )
        numeric = vtype in NUMERIC_TYPES
        if numeric and (column.min is not None or column.max is not None):
            self.row(
                "min_max_outside_manifest",
                c,
                gxe.ExpectColumnValuesToBeBetween,
                f"{t}.{c} is {_range_text(column.min, column.max)} on rows the manifest does not "
                "list",
                _range_text(column.min, column.max),
                clean_cond(),
                column=self.value_column(c),
                min_value=column.min,
                max_value=column.max,
            )
        if column.accepted_values is not None:
            values = _python_values(list(column.accepted_values), vtype)
            self.row(
                "accepted_values_outside_manifest",
                c,
                gxe.ExpectColumnValuesToBeInSet,
                f"{t}.{c} is one of {values} on rows the manifest does not list",
                f"in {values}",
                clean_cond(),
                column=self.value_column(c),
                value_set=values,
            )
        if c in self.coerced:
            self.row(
                "type_coercion_clean_rows_plain",
                c,
                gxe.ExpectColumnValuesToMatchRegex,
                f"{t}.{c} (published as text) renders untouched rows as plain numbers",
                "plain numbers",
                clean_cond(),
                column=c,
                regex=PLAIN_NUMBER,
            )
        self.generator_checks(column)
        if column.unique:
            dups = self.metric(
                "scalar",
                f"(SELECT count(*) FROM (SELECT {self.col(c)} FROM {raw(t)} t "
                f"{self.manifest_join_sql()} WHERE {self.col(c)} IS NOT NULL "
                f"AND {self.clean(c) or 'TRUE'} GROUP BY 1 HAVING count(*) > 1))",
            )
            self.zero_count(
                "unique_values", c, f"{t}.{c} (unique) has no duplicate values on clean rows", dups
            )
        if column.null_rate > 0 and not nullable:
            self.null_rate_check(column)
        self.copy_checks(column)

    def generator_checks(self, column: Column) -> None:
        c, t = column.name, self.name
        gen = column.generator

        def gen_cond() -> Condition | None:
            return self.flag(f"gen__{c}", self.generated(c))

        vtype = self.value_type(c)
        value = self.value(c)
        gen_sql = self.generated(c)
        present = and_(gen_sql, f"{value} IS NOT NULL")
        low: float | None = None
        high: float | None = None
        if isinstance(gen, UniformGen):
            low, high = gen.low, gen.high
            if gen.integer:
                low, high = float(int(gen.low)), float(int(gen.high))
        elif isinstance(gen, NormalGen | LognormalGen):
            low, high = gen.min, gen.max
        elif isinstance(gen, ZipfGen):
            low, high = 1.0, float(gen.n)
        elif isinstance(gen, PoissonGen):
            low = float(gen.offset)
        if (low is not None or high is not None) and vtype in NUMERIC_TYPES:
            self.row(
                "generator_range",
                c,
                gxe.ExpectColumnValuesToBeBetween,
                f"{t}.{c} is {_range_text(low, high)} (its {gen.kind} generator's range) "
                "on untouched rows",
                _range_text(low, high),
                gen_cond(),
                column=self.value_column(c),
                min_value=low,
                max_value=high,
            )
        weighted: list[tuple[Any, float]] | None = None
        if isinstance(gen, CategoricalGen):
            weighted = _weights(list(gen.values), gen.weights)
        elif isinstance(gen, LookupKeyGen):
            lookup = self.spec.lookups[gen.lookup]
            keys = lookup.values(lookup.columns[0])
            ws = [float(w) for w in lookup.values(lookup.weight)] if lookup.weight else None
            weighted = None if gen.sequential else _weights(keys, ws)
            if gen.sequential:
                values = _python_values(keys, vtype)
                self.row(
                    "generator_values_in_set",
                    c,
                    gxe.ExpectColumnValuesToBeInSet,
                    f"{t}.{c} is a key of lookup {gen.lookup} on untouched rows",
                    f"in {values}",
                    gen_cond(),
                    column=self.value_column(c),
                    value_set=values,
                )
        if weighted is not None:
            values = _python_values([v for v, _ in weighted], vtype)
            self.row(
                "generator_values_in_set",
                c,
                gxe.ExpectColumnValuesToBeInSet,
                f"{t}.{c} is one of its {gen.kind} generator's values on untouched rows",
                f"in {values}",
                gen_cond(),
                column=self.value_column(c),
                value_set=values,
            )
            n = self.count_rows(present)
            for v, p in weighted:
                k = self.count_rows(and_(present, f"{value} = CAST({lit(v)} AS {vtype})"))
                self.share_check(
                    "categorical_share", c, k, n, p, label=str(v), what=f"share of {v!r} in {t}.{c}"
                )
        elif isinstance(gen, BooleanGen):
            n = self.count_rows(present)
            k = self.count_rows(and_(present, f"{value}"))
            self.share_check(
                "boolean_p_true", c, k, n, gen.p_true, what=f"share of true in {t}.{c}"
            )
        elif isinstance(gen, LognormalGen):
            median = math.exp(gen.mu)
            inside = (gen.min is None or gen.min < median) and (gen.max is None or median < gen.max)
            if inside and vtype in NUMERIC_TYPES:
                n = self.count_rows(present)
                k = self.count_rows(and_(present, f"{value} < {median!r}"))
                self.share_check(
                    "distribution_median_share",
                    c,
                    k,
                    n,
                    0.5,
                    what=f"share of {t}.{c} below exp(mu) = {_fmt(median)}",
                )
        mean_sd: tuple[float, float, float] | None = None  # mean, sd, extra slack
        if isinstance(gen, NormalGen):
            mean = stats.clipped_normal_mean(gen.mean, gen.std, gen.min, gen.max)
            mean_sd = (mean, gen.std, 0.0)
        elif isinstance(gen, PoissonGen):
            mean_sd = (gen.lam + gen.offset, math.sqrt(gen.lam), 0.0)
        elif isinstance(gen, UniformGen):
            if gen.integer:
                span = int(gen.high) - int(gen.low) + 1
                mean_sd = (int(gen.low) + (span - 1) / 2, math.sqrt((span * span - 1) / 12), 0.0)
            else:
                extra = 0.5 * 10.0**-gen.round if gen.round is not None else 0.0
                mean_sd = ((gen.low + gen.high) / 2, (gen.high - gen.low) / math.sqrt(12), extra)
        if mean_sd is not None and vtype in NUMERIC_TYPES and mean_sd[1] > 0:
            self.mean_check(column, present, *mean_sd)
        if isinstance(gen, DateGen) and vtype in ("DATE", "TIMESTAMP"):
            self.date_checks(column, gen, gen_cond)

    def date_checks(
        self, column: Column, gen: DateGen, gen_cond: Callable[[], Condition | None]
    ) -> None:
        """Calendar range, and ``not_before`` / ``max_lag_days`` against the reference date."""
        c, t = column.name, self.name
        cal = self.spec.calendars[gen.calendar]
        start, end = gen.start or cal.start, gen.end or cal.end
        low = datetime.combine(start, time.min)
        high: datetime | None = datetime.combine(end + timedelta(days=gen.lag_days), time.min)
        if column.type == "timestamp" and high is not None:
            high += timedelta(days=1) - timedelta(microseconds=1)
        if gen.not_before:
            high = None  # the reference may lie after the calendar's end
        # pandas reads DATE columns as datetime64 too: compare with datetimes.
        self.row(
            "generator_date_range",
            c,
            gxe.ExpectColumnValuesToBeBetween,
            f"{t}.{c} is {_range_text(low, high)} (its calendar) on untouched rows",
            _range_text(low, high),
            gen_cond(),
            column=c,
            min_value=low,
            max_value=high,
        )
        if not gen.not_before:
            return
        ref_sql, ref_clean, ref_text = self.reference(gen.not_before)
        cast = "DATE" if column.type == "date" else "TIMESTAMP"
        ref = f"CAST({ref_sql} AS {cast})"
        late = ""
        if gen.max_lag_days is not None:
            days = gen.max_lag_days + gen.lag_days + 1
            late = f" OR {self.col(c)} > {ref} + INTERVAL {days} DAY"
        checked = and_(self.generated(c), ref_clean, f"{ref} IS NOT NULL")
        wrong = self.helper(
            f"order__{c}",
            f"CASE WHEN {checked} AND ({self.col(c)} < {ref}{late}) THEN "
            f"CAST({self.col(c)} AS VARCHAR) || ' vs ' || CAST({ref} AS VARCHAR) END",
        )
        bound = "" if gen.max_lag_days is None else f" and within {gen.max_lag_days} days of it"
        self.row(
            "date_not_before",
            c,
            gxe.ExpectColumnValuesToBeNull,
            f"{t}.{c} is on or after {ref_text}{bound} on untouched rows",
            f">= {ref_text}",
            self.flag(f"orderok__{c}", checked),
            column=wrong,
        )

    def reference(self, ref: str) -> tuple[str, str | None, str]:
        """SQL, cleanliness condition and text of a ``not_before`` reference."""
        parts = ref.split(".")
        if len(parts) == 1:
            return self.col(ref), self.clean(ref), ref
        fk_name, parent_col = parts
        fk = self.table.column_map[fk_name].generator
        assert isinstance(fk, ForeignKeyGen)
        alias = self.parent_alias(fk_name, fk.table)
        self.parents[fk.table].columns.add(parent_col)
        clean = and_(f"{alias}.k IS NOT NULL", f"NOT {alias}.{q('d__' + parent_col)}")
        return f"{alias}.{q('v__' + parent_col)}", clean, f"{fk.table}.{parent_col}"

    def share_check(
        self, check: str, c: str, k: str, n: str, p: float, what: str, label: str | None = None
    ) -> None:
        def evaluate(m: Metrics) -> tuple[float, float, float] | None:
            kk, nn = m[k], m[n]
            if not nn or kk is None:
                return None
            return (kk / nn, *stats.share_bounds(nn, p))

        text = f"{what} ~ {_fmt(p)} (binomial, 5 sigma)"
        self.aggregate(check, c, text, "share", evaluate, label)

    def mean_check(
        self, column: Column, present: str | None, mean: float, sd: float, extra: float
    ) -> None:
        c = column.name
        total = self.metric("rows", f"avg({self.value(c)}) FILTER (WHERE {present or 'TRUE'})")
        n = self.count_rows(present)

        def evaluate(m: Metrics) -> tuple[float, float, float] | None:
            avg, nn = m[total], m[n]
            if not nn or avg is None:
                return None
            return (avg, *stats.mean_bounds(nn, mean, sd, extra))

        self.aggregate(
            "distribution_mean",
            c,
            f"mean of {self.name}.{c} ~ {_fmt(mean)} ({column.generator.kind}, 5 sigma)",
            "mean",
            evaluate,
        )

    def null_rate_check(self, column: Column) -> None:
        c = column.name
        governed = self.governed(c)
        n = self.count_rows(governed)
        nulls = self.count_rows(and_(governed, self.clean(c), f"{self.col(c)} IS NULL"))
        self.share_check(
            "null_rate", c, nulls, n, column.null_rate, what=f"clean NULL share of {self.name}.{c}"
        )

    def copy_checks(self, column: Column) -> None:
        c = column.name
        gen = column.generator
        if isinstance(gen, ParentGen):
            key, parent = parent_source(self.spec, self.table, gen)
            alias = self.parent_alias(key, parent.name)
            self.parents[parent.name].columns.add(gen.column)
            source_type = self.types[parent.name].get(gen.column)
            ok = and_(
                f"{alias}.k IS NOT NULL",
                f"NOT {alias}.{q('d__' + gen.column)}",
                self.clean(gen.fk),
                self.governed(c),
            )
            self.copy_check(
                "parent_copy_matches",
                c,
                f"{alias}.{q('v__' + gen.column)}",
                source_type,
                ok,
                f"{self.name}.{c} equals {parent.name}.{gen.column} of the row {key} references",
            )
        elif isinstance(gen, LookupGen):
            alias = self.lookup_alias(gen.lookup, gen.via)
            ok = and_(f"{alias}.k IS NOT NULL", self.clean(gen.via), self.governed(c))
            self.copy_check(
                "lookup_copy_matches",
                c,
                f"{alias}.{q(gen.value)}",
                None,
                ok,
                f"{self.name}.{c} equals lookup {gen.lookup}.{gen.value} for its {gen.via}",
            )

    def copy_check(
        self,
        check: str,
        c: str,
        source: str,
        source_type: str | None,
        comparable: str | None,
        description: str,
        name: str = "copy",
    ) -> None:
        equal = same_value(self.col(c), self.mine.get(c), source, source_type)
        differs = f"NOT {equal}"
        checked = and_(comparable, self.clean(c))
        diff = self.helper(
            f"{name}__{c}",
            f"CASE WHEN {checked or 'TRUE'} AND {differs} THEN coalesce(CAST({self.col(c)} AS "
            f"VARCHAR), 'NULL') || ' <> ' || coalesce(CAST({source} AS VARCHAR), 'NULL') END",
        )
        self.row(
            check,
            c,
            gxe.ExpectColumnValuesToBeNull,
            f"{description} (rows not in the manifest)",
            "no differences",
            self.flag(f"{name}ok__{c}", checked),
            column=diff,
        )
        conflict = self.touched_by(c, "currency_conflict")
        if conflict:
            other_kind = f"({self.touched(c)} AND NOT {conflict})"
            observed = self.count_rows(and_(comparable, differs, f"NOT {other_kind}"))
            expected = self.count_rows(and_(comparable, conflict))
            self.equal_counts(
                "stressor_detected_matches_manifest",
                c,
                f"rows of {self.name}.{c} differing from their source == manifest "
                "currency_conflict rows (where the source is comparable)",
                observed,
                expected,
                label="currency_conflict",
            )

    def scd_checks(self) -> None:
        scd = self.table.scd
        assert scd is not None
        t, ek = self.name, scd.entity_key
        self.row(
            "scd_validity_ordered",
            "valid_to",
            gxe.ExpectColumnPairValuesAToBeGreaterThanB,
            f"{t}: valid_to >= valid_from on closed versions",
            "valid_to >= valid_from",
            column_A="valid_to",
            column_B="valid_from",
            or_equal=True,
            ignore_row_if="either_value_is_missing",
        )
        mismatch = self.helper(
            "current_vs_open",
            'coalesce(t."is_current", false) <> (t."valid_to" IS NULL)',
        )
        self.row(
            "scd_current_iff_open",
            "is_current",
            gxe.ExpectColumnValuesToBeInSet,
            f"{t}: is_current is true exactly on versions with valid_to NULL",
            "no mismatches",
            column=mismatch,
            value_set=[False],
        )
        no_current = self.metric(
            "scalar",
            f"(SELECT count(*) FROM (SELECT {q(ek)} FROM {raw(t)} GROUP BY 1 "
            "HAVING NOT bool_or(coalesce(is_current, false))))",
        )
        self.zero_count(
            "scd_one_current_per_entity", ek, f"every {ek} of {t} has a current version", no_current
        )
        too_many = self.metric(
            "scalar",
            f"(SELECT count(*) FROM (SELECT {q(ek)} FROM {raw(t)} GROUP BY 1 "
            f"HAVING count(*) > {scd.versions.max}))",
        )
        self.zero_count(
            "scd_versions_within_max",
            ek,
            f"no {ek} of {t} has more than {scd.versions.max} versions",
            too_many,
        )
        entity = self.spec.table_map[scd.entity]
        if scd.entity not in self.types:
            raise MissingDependency(scd.entity)
        on = key_join(
            f"h.{q(ek)}",
            self.mine.get(ek),
            f"e.{q(entity.primary_key)}",
            self.types[scd.entity].get(entity.primary_key),
        )
        uncovered = self.metric(
            "scalar",
            f"(SELECT count(*) FROM {raw(scd.entity)} e WHERE NOT EXISTS "
            f"(SELECT 1 FROM {raw(t)} h WHERE {on}))",
        )
        self.zero_count(
            "scd_covers_entities", ek, f"every {scd.entity} row has a history in {t}", uncovered
        )
        alias = self.parent_alias(ek, scd.entity)
        for c in sorted(self.shared):
            self.parents[scd.entity].columns.add(c)
            ok = and_(f"{alias}.k IS NOT NULL", f"NOT {alias}.{q('d__' + c)}", self.latest())
            self.copy_check(
                "scd_current_matches_entity",
                c,
                f"{alias}.{q('v__' + c)}",
                self.types[scd.entity].get(c),
                ok,
                f"the current version's {c} equals {scd.entity}.{c}",
                name="scd",
            )

    def stressor_checks(self, c: str, s: Stressor) -> None:
        t = self.name
        this = self.touched_by(c, s.kind)
        assert this is not None
        col = self.col(c)
        if isinstance(s, MissingValues):
            self.row(
                "stressor_rows_changed",
                c,
                gxe.ExpectColumnValuesToBeNull,
                f"{t}.{c}: manifest missing_values rows are NULL",
                "NULL on manifest rows",
                self.flag(f"mv__{c}", this),
                label=s.kind,
                column=c,
            )
            eligible = f"{col} IS NOT NULL"
        elif isinstance(s, TypeCoercion):
            self.row(
                "stressor_rows_changed",
                c,
                gxe.ExpectColumnValuesToMatchRegex,
                f"{t}.{c}: manifest type_coercion rows look like '1,234.50' or '12.30 {s.unit}'",
                "formatted numbers",
                self.flag(f"tc__{c}", this),
                label=s.kind,
                column=c,
                regex=formatted_number(s.unit),
            )
            not_plain = self.count_rows(
                f"{col} IS NOT NULL AND NOT regexp_full_match({col}, {lit(PLAIN_NUMBER)})"
            )
            self.equal_counts(
                "stressor_detected_matches_manifest",
                c,
                f"values of {t}.{c} that are not plain numbers == manifest type_coercion rows",
                not_plain,
                self.count_manifest(c, s.kind),
                label=s.kind,
            )
            eligible = f"{col} IS NOT NULL"
        elif isinstance(s, KeyDrift):
            orphan = f"_bf_orphan__{c}"
            self.row(
                "stressor_rows_changed",
                c,
                gxe.ExpectColumnValuesToNotBeNull,
                f"{t}.{c}: manifest key_drift rows no longer match a parent key",
                "orphan keys on manifest rows",
                self.flag(f"kd__{c}", this),
                label=s.kind,
                column=orphan,
            )
            eligible = f"{col} IS NOT NULL AND {col} <> lower({col})"
        elif isinstance(s, Outliers):
            eligible = f"{col} IS NOT NULL AND {col} <> 0"
        elif isinstance(s, CurrencyConflict):
            eligible = f"{col} IS NOT NULL"
        else:
            assert isinstance(s, TimezoneMismatch)
            alias = self.lookup_alias(s.offset_lookup, s.offset_via)
            offset = f"coalesce(TRY_CAST({alias}.{q(s.offset_value)} AS DOUBLE), 0)"
            eligible = f"{col} IS NOT NULL AND {offset} <> 0"
        n_lo = self.count_rows(f"({eligible}) OR {this}")
        mv = self.touched_by(c, "missing_values")
        n_extra = None
        if mv and s.kind != "missing_values":  # blanked rows may have been eligible too
            n_extra = self.count_rows(f"{mv} AND NOT {this}")
        self.rate_check(c, s, self.count_manifest(c, s.kind), n_lo, n_extra)

    def rate_check(
        self, c: str | None, s: Stressor, count: str, n_lo: str, n_extra: str | None
    ) -> None:
        def evaluate(m: Metrics) -> tuple[float, float, float] | None:
            k, lo = m[count], m[n_lo]
            if k is None or lo is None:
                return None
            hi = lo + ((m[n_extra] or 0.0) if n_extra else 0.0)
            return (k, *stats.binomial_count_bounds(lo, hi, s.rate))

        where = self.name if c is None else f"{self.name}.{c}"
        self.aggregate(
            "stressor_rate_matches_spec",
            c,
            f"manifest {s.kind} rows on {where} ~ rate {s.rate} x eligible rows (5 sigma)",
            "count",
            evaluate,
            label=s.kind,
        )

    def duplicate_current_checks(self, s: DuplicateCurrent) -> None:
        scd = self.table.scd
        assert scd is not None
        t, ek = self.name, scd.entity_key
        dup = self.flag("dup", self.dup_flag())
        self.row(
            "stressor_rows_changed",
            None,
            gxe.ExpectColumnValuesToBeInSet,
            f"{t}: manifest duplicate_current rows are still flagged current",
            "is_current on manifest rows",
            dup,
            label=s.kind,
            column="is_current",
            value_set=[True],
        )
        detected = self.metric(
            "scalar",
            f"(SELECT count(*) FROM (SELECT {q(ek)} FROM {raw(t)} WHERE is_current GROUP BY 1 "
            "HAVING count(*) > 1))",
        )
        self.equal_counts(
            "stressor_detected_matches_manifest",
            None,
            f"entities of {t} with more than one current version == manifest duplicate_current",
            detected,
            self.count_manifest(None, s.kind),
            label=s.kind,
        )
        eligible = self.metric(
            "scalar",
            f"(SELECT count(*) FROM (SELECT {q(ek)} FROM {raw(t)} GROUP BY 1 "
            "HAVING count(*) >= 2))",
        )
        self.rate_check(None, s, self.count_manifest(None, s.kind), eligible, None)

    def manifest_checks(self) -> None:
        t = self.name
        key = f"CAST(t.{q(self.pk)} AS VARCHAR)"
        missing = self.metric(
            "scalar",
            f"(SELECT count(*) FROM {MANIFEST_TABLE} a WHERE a.table_name = {lit(t)} "
            f"AND NOT EXISTS (SELECT 1 FROM {raw(t)} t WHERE {key} = a.row_key))",
        )
        self.zero_count(
            "manifest_rows_exist", None, f"every manifest row_key of {t} is a {self.pk}", missing
        )
        repeated = self.metric(
            "scalar",
            f"(SELECT count(*) FROM (SELECT column_name, row_key FROM {MANIFEST_TABLE} "
            f"WHERE table_name = {lit(t)} GROUP BY ALL HAVING count(*) > 1))",
        )
        self.zero_count(
            "manifest_no_duplicates",
            None,
            f"no {t} row is listed twice for the same column",
            repeated,
        )
        declared = [f"{c}|{s.kind}" for c, ss in self.stressors.items() for s in ss]
        if self.dup:
            declared.append("|duplicate_current")
        allowed = ", ".join(lit(d) for d in declared) or "NULL"
        undeclared = self.count_manifest_where(
            f"NOT coalesce(coalesce(column_name, '') || '|' || kind IN ({allowed}), false)"
        )
        self.zero_count(
            "manifest_declared",
            None,
            f"every manifest row of {t} belongs to a stressor the spec declares",
            undeclared,
        )

    def count_manifest_where(self, cond: str) -> str:
        return self.metric("manifest", f"count(*) FILTER (WHERE {cond})")

    def row_count_checks(self) -> None:
        info = self.generation
        if info is None:
            return
        n = self.count_rows()
        t = self.name
        if t in info.table_rows:
            rows = float(info.table_rows[t])
            self.aggregate(
                "row_count_matches_generation_manifest",
                None,
                f"{t} has the row count manifest.json reports",
                "count",
                lambda m: None if m[n] is None else (float(m[n] or 0), rows, rows),
            )
        if not self.table.scd and not self.table.derived_sql:
            want = float(self.table.row_count(info.scale))
            self.aggregate(
                "row_count_matches_spec",
                None,
                f"{t} has rows x scale = {int(want)} rows",
                "count",
                lambda m: None if m[n] is None else (float(m[n] or 0), want, want),
            )
        expected = float(info.anomaly_counts.get(t, 0))
        anomalies = self.count_manifest_where("TRUE")
        self.aggregate(
            "manifest_matches_generation_manifest",
            None,
            f"anomalies.parquet has as many {t} rows as manifest.json counts",
            "count",
            lambda m: None if m[anomalies] is None else (m[anomalies] or 0.0, expected, expected),
        )

    # ---- SQL assembly

    def manifest_pivot_columns(self) -> list[str]:
        cols: list[str] = []
        for c, ss in self.stressors.items():
            cols.append(f"bool_or(column_name = {lit(c)}) AS {q(c)}")
            for s in ss:
                cols.append(
                    f"bool_or(column_name = {lit(c)} AND kind = {lit(s.kind)}) "
                    f"AS {q(c + '__' + s.kind)}"
                )
        if self.dup:
            cols.append("bool_or(kind = 'duplicate_current') AS \"__dup\"")
        return cols

    def manifest_join_sql(self) -> str:
        if not self.manifest_pivot_columns():
            return ""
        return f"LEFT JOIN _bf_m m ON m.row_key = CAST(t.{q(self.pk)} AS VARCHAR)"

    def finish(self) -> TablePlan:
        setup: list[str] = []
        cleanup: list[str] = []
        pivot = self.manifest_pivot_columns()
        if pivot:
            setup.append(
                f"CREATE OR REPLACE TABLE _bf_m AS SELECT row_key, {', '.join(pivot)} "
                f"FROM {MANIFEST_TABLE} WHERE table_name = {lit(self.name)} GROUP BY row_key"
            )
            cleanup.append("DROP TABLE IF EXISTS _bf_m")
        for name, parent in self.parents.items():
            setup.append(_parent_table_sql(self.spec, parent))
            cleanup.append(f"DROP TABLE IF EXISTS {q('_bf_par__' + name)}")
        for name in sorted(self.lookups):
            setup.append(_lookup_table_sql(self.spec, name))
            cleanup.append(f"DROP TABLE IF EXISTS {q('_bf_lk__' + name)}")
        joins = [self.manifest_join_sql()] if pivot else []
        for alias, (key, parent_name) in self.parent_joins.items():
            parent_pk = self.spec.table_map[parent_name].primary_key
            on = key_join(
                f"{alias}.k",
                self.types[parent_name].get(parent_pk),
                self.col(key),
                self.mine.get(key),
            )
            joins.append(f"LEFT JOIN {q('_bf_par__' + parent_name)} {alias} ON {on}")
        for alias, (lookup, via) in self.lookup_joins.items():
            joins.append(
                f"LEFT JOIN {q('_bf_lk__' + lookup)} {alias} "
                f"ON {alias}.k = CAST({self.col(via)} AS VARCHAR)"
            )
        derived = "".join(f", {sql} AS {q(name)}" for name, sql in self.select.items())
        join_sql = " ".join(joins)
        # The helper tables live until cleanup: scalar metrics may use them too.
        return TablePlan(
            table=self.table,
            primary_key=self.pk,
            source=f"{raw(self.name)} t {join_sql}".strip(),
            rows_template=f"SELECT t.*{derived} FROM {{relation}} t {join_sql}".strip(),
            setup=setup,
            cleanup=cleanup,
            fetch=list(self.fetch),
            row_checks=self.row_checks,
            metrics=self.metrics,
            aggregate_checks=self.aggregates,
        )


def _parent_table_sql(spec: DomainSpec, parent: _Parent) -> str:
    """Distinct parent keys plus the copied columns and whether the manifest touched them."""
    table = parent.table
    pk = q(table.primary_key)
    name = q("_bf_par__" + table.name)
    cols = sorted(parent.columns)
    if not cols:
        return f"CREATE OR REPLACE TABLE {name} AS SELECT DISTINCT {pk} AS k FROM {raw(table.name)}"
    stressed = {
        s.column
        for s in spec.stressors
        if s.table == table.name and not isinstance(s, DuplicateCurrent)
    }
    flags = [c for c in cols if c in stressed]
    select = [f"t.{pk} AS k"]
    for c in cols:
        select.append(f"any_value(t.{q(c)}) AS {q('v__' + c)}")
        touched = f"bool_or(coalesce(pm.{q(c)}, false))" if c in flags else "false"
        select.append(f"{touched} AS {q('d__' + c)}")
    join = ""
    if flags:
        pivot = ", ".join(f"bool_or(column_name = {lit(c)}) AS {q(c)}" for c in flags)
        join = (
            f"LEFT JOIN (SELECT row_key, {pivot} FROM {MANIFEST_TABLE} "
            f"WHERE table_name = {lit(table.name)} GROUP BY row_key) pm "
            f"ON pm.row_key = CAST(t.{pk} AS VARCHAR)"
        )
    return (
        f"CREATE OR REPLACE TABLE {name} AS SELECT {', '.join(select)} "
        f"FROM {raw(table.name)} t {join} GROUP BY t.{pk}"
    )


def _lookup_table_sql(spec: DomainSpec, name: str) -> str:
    lookup = spec.lookups[name]
    names = ", ".join(["k", *(q(c) for c in lookup.columns)])
    rows = ", ".join(
        "(" + ", ".join([lit(str(r[0])), *(lit(v) for v in r)]) + ")" for r in lookup.rows
    )
    target = q("_bf_lk__" + name)
    return f"CREATE OR REPLACE TABLE {target} AS SELECT * FROM (VALUES {rows}) v({names})"


def build_plan(
    spec: DomainSpec, table: Table, types: TableTypes, generation: GenerationInfo | None = None
) -> TablePlan:
    """The checks of one table; ``types`` are the warehouse's actual column types."""
    return _Builder(spec, table, types, generation).build()

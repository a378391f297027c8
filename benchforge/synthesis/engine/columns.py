"""Compiles column generators into layered DuckDB SELECT steps.

A table is built as a chain ``SELECT p.*, <new columns> FROM (<previous step>) p [LEFT JOIN x]``,
one step per column in dependency order. Scalar generators are plain expressions; Faker pools,
calendars and parent rows are small joins. Helper columns start with ``_`` (user columns cannot).

One compile function per generator ``kind``, registered with ``@scalar("kind")`` (an SQL
expression over the previous step's columns ``p``) or ``@steps("kind")`` (its own steps and joins).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

from benchforge.synthesis.engine.calendars import BINS
from benchforge.synthesis.engine.random import Streams
from benchforge.synthesis.engine.sql import literal, quote, value_map_case, weighted_case
from benchforge.synthesis.spec.generators import (
    BooleanGen,
    CategoricalGen,
    ConditionalGen,
    DateGen,
    ExpressionGen,
    FakerGen,
    ForeignKeyGen,
    GeneratorModel,
    LognormalGen,
    LookupGen,
    LookupKeyGen,
    NormalGen,
    ParentGen,
    PoissonGen,
    SequenceGen,
    UniformGen,
    ZipfGen,
)
from benchforge.synthesis.spec.models import Column, DomainSpec, Table, generator_dependencies

_COPRIME_CANDIDATES = (1_000_003, 1_000_033, 1_000_037, 1_000_039, 1_000_081)


@dataclass
class Step:
    """New columns (name -> SQL over ``p``) plus an optional join clause."""

    columns: dict[str, str]
    join: str = ""


@dataclass
class BuildContext:
    spec: DomainSpec
    seed: int
    scale: float
    register_pool: Callable[[FakerGen, str, str], str]
    register_calendar: Callable[[str, date, date], tuple[str, str]]
    parent_rows: dict[str, int] = field(default_factory=dict)


def parent_ref_column(fk: str, column: str) -> str:
    return f"_p_{fk}__{column}"


def topological_columns(table: Table) -> list[Column]:
    done: set[str] = set()
    order: list[Column] = []
    pending = list(table.columns)
    names = set(table.column_map)
    while pending:
        for col in pending:
            if generator_dependencies(table, col) & names <= done:
                order.append(col)
                done.add(col.name)
                pending.remove(col)
                break
        else:  # validation rejects cycles; this guards direct engine use
            raise ValueError(f"column dependency cycle in {table.name}")
    return order


def _clip_round(
    x: str, lo: float | None, hi: float | None, digits: int | None, integer: bool
) -> str:
    if lo is not None:
        x = f"greatest({x}, {lo!r})"
    if hi is not None:
        x = f"least({x}, {hi!r})"
    if integer:
        return f"CAST(round({x}) AS BIGINT)"
    if digits is not None:
        return f"round({x}, {digits})"
    return x


def _normal(streams: Streams) -> str:
    u1, u2 = streams.u("z1"), streams.u("z2")
    return f"(sqrt(-2.0 * ln(1.0 - {u1})) * cos(2.0 * pi() * {u2}))"


def _poisson(gen: PoissonGen, streams: Streams) -> str:
    u = streams.u("value")
    if gen.lam > 60:  # normal approximation keeps the CASE short
        z = _normal(streams)
        return f"CAST(greatest(0, round({gen.lam!r} + {math.sqrt(gen.lam)!r} * {z})) AS BIGINT)"
    values, weights = [], []
    k, p, cdf = 0, math.exp(-gen.lam), 0.0
    while cdf < 1 - 1e-12 and k < 1000:
        values.append(k)
        weights.append(p)
        cdf += p
        k += 1
        p *= gen.lam / k
    return weighted_case(u, values, weights)


def _zipf_rank(n: int, s: float, u: str) -> str:
    """Continuous inverse CDF of P(k) ~ k^-s on [1, n+1), floored to 1..n."""
    if abs(s - 1.0) < 1e-9:
        x = f"pow({n + 1}.0, {u})"
    else:
        a = 1.0 - s
        x = f"pow(1.0 + {u} * ({(n + 1) ** a - 1.0!r}), {1.0 / a!r})"
    return f"least(CAST(floor({x}) AS BIGINT), {n})"


def _expression(sql: str, streams: Streams) -> str:
    return re.sub(r"\bu\((\d+)\)", lambda m: streams.u(f"expr{m.group(1)}"), sql)


G = TypeVar("G", bound=GeneratorModel)
ScalarCompiler = Callable[[Any, Streams, BuildContext], str]
StepsCompiler = Callable[[Table, Column, Any, Streams, BuildContext], list[Step]]
SCALAR_COMPILERS: dict[str, ScalarCompiler] = {}
STEPS_COMPILERS: dict[str, StepsCompiler] = {}


def scalar(kind: str) -> Callable[[Callable[[G, Streams, BuildContext], str]], ScalarCompiler]:
    """Registers the compile function of a generator that is one SQL expression."""

    def register(fn: Callable[[G, Streams, BuildContext], str]) -> ScalarCompiler:
        SCALAR_COMPILERS[kind] = fn
        return fn

    return register


def steps(
    kind: str,
) -> Callable[[Callable[[Table, Column, G, Streams, BuildContext], list[Step]]], StepsCompiler]:
    """Registers the compile function of a generator that needs its own steps (joins)."""

    def register(
        fn: Callable[[Table, Column, G, Streams, BuildContext], list[Step]],
    ) -> StepsCompiler:
        STEPS_COMPILERS[kind] = fn
        return fn

    return register


def scalar_sql(gen: GeneratorModel, streams: Streams, ctx: BuildContext) -> str:
    """SQL for generators that need no join."""
    compile_ = SCALAR_COMPILERS.get(gen.kind)
    if compile_ is None:
        raise TypeError(f"{type(gen).__name__} is not a scalar generator")
    return compile_(gen, streams, ctx)


@scalar("sequence")
def _sequence(gen: SequenceGen, streams: Streams, ctx: BuildContext) -> str:
    num = f"({gen.start} + {gen.step} * _rid)"
    if gen.prefix is None:
        return num
    return f"({literal(gen.prefix)} || lpad(CAST({num} AS VARCHAR), {gen.width}, '0'))"


@scalar("uniform")
def _uniform(gen: UniformGen, streams: Streams, ctx: BuildContext) -> str:
    u = streams.u("value")
    if gen.integer:
        span = int(gen.high) - int(gen.low) + 1
        return f"CAST({int(gen.low)} + floor({u} * {span}) AS BIGINT)"
    x = f"({gen.low!r} + {u} * {gen.high - gen.low!r})"
    return _clip_round(x, None, None, gen.round, False)


@scalar("normal")
def _normal_value(gen: NormalGen, streams: Streams, ctx: BuildContext) -> str:
    x = f"({gen.mean!r} + {gen.std!r} * {_normal(streams)})"
    return _clip_round(x, gen.min, gen.max, gen.round, gen.integer)


@scalar("lognormal")
def _lognormal(gen: LognormalGen, streams: Streams, ctx: BuildContext) -> str:
    x = f"exp({gen.mu!r} + {gen.sigma!r} * {_normal(streams)})"
    return _clip_round(x, gen.min, gen.max, gen.round, gen.integer)


@scalar("zipf")
def _zipf(gen: ZipfGen, streams: Streams, ctx: BuildContext) -> str:
    return _zipf_rank(gen.n, gen.s, streams.u("value"))


@scalar("poisson")
def _poisson_value(gen: PoissonGen, streams: Streams, ctx: BuildContext) -> str:
    return f"({_poisson(gen, streams)} + {gen.offset})"


@scalar("categorical")
def _categorical(gen: CategoricalGen, streams: Streams, ctx: BuildContext) -> str:
    return weighted_case(streams.u("value"), list(gen.values), gen.weights)


@scalar("boolean")
def _boolean(gen: BooleanGen, streams: Streams, ctx: BuildContext) -> str:
    return f"({streams.u('value')} < {gen.p_true!r})"


@scalar("lookup_key")
def _lookup_key(gen: LookupKeyGen, streams: Streams, ctx: BuildContext) -> str:
    lookup = ctx.spec.lookups[gen.lookup]
    keys = lookup.values(lookup.columns[0])
    if gen.sequential:
        items = ", ".join(literal(k) for k in keys)
        return f"([{items}][1 + (_rid % {len(keys)})])"
    weights = [float(w) for w in lookup.values(lookup.weight)] if lookup.weight else None
    return weighted_case(streams.u("value"), keys, weights)


@scalar("lookup")
def _lookup(gen: LookupGen, streams: Streams, ctx: BuildContext) -> str:
    lookup = ctx.spec.lookups[gen.lookup]
    mapping = dict(zip(lookup.values(lookup.columns[0]), lookup.values(gen.value), strict=True))
    return value_map_case(f"p.{quote(gen.via)}", mapping)


@scalar("expression")
def _expression_value(gen: ExpressionGen, streams: Streams, ctx: BuildContext) -> str:
    return f"({_expression(gen.sql, streams)})"


@scalar("conditional")
def _conditional(gen: ConditionalGen, streams: Streams, ctx: BuildContext) -> str:
    branches = " ".join(
        f"WHEN {literal(key)} THEN {scalar_sql(case, streams, ctx)}"
        for key, case in gen.cases.items()
    )
    default = scalar_sql(gen.default, streams, ctx)
    return f"(CASE CAST(p.{quote(gen.on)} AS VARCHAR) {branches} ELSE {default} END)"


@steps("foreign_key")
def _foreign_key_steps(
    table: Table, col: Column, gen: ForeignKeyGen, streams: Streams, ctx: BuildContext
) -> list[Step]:
    parent = ctx.spec.table_map[gen.table]
    n = ctx.parent_rows[gen.table]
    u = streams.u("parent")
    if gen.fan_out == "poisson":
        rid = f"CAST(floor({u} * {n}) AS BIGINT)"
    else:
        rank = _zipf_rank(n, gen.s, u)
        a = next(c for c in _COPRIME_CANDIDATES if n % c != 0)
        offset = streams.salt("scatter") % n
        rid = f"(((({rank} - 1) * {a}) + {offset}) % {n})"
    rid_col = f"_rid_{col.name}"
    needed = {parent.primary_key} | _parent_columns_used(table, col.name)
    select = ", ".join(
        f"{quote(c)} AS {quote(parent_ref_column(col.name, c))}" for c in sorted(needed)
    )
    alias = f"par_{col.name}"
    join = (
        f"LEFT JOIN (SELECT _rid AS _prid, {select} FROM _gen.{quote(parent.name)}) {alias} "
        f"ON {alias}._prid = p.{quote(rid_col)}"
    )
    parent_cols = {
        parent_ref_column(col.name, c): f"{alias}.{quote(parent_ref_column(col.name, c))}"
        for c in sorted(needed)
    }
    key = parent_ref_column(col.name, parent.primary_key)
    return [
        Step({rid_col: rid}),
        Step(parent_cols, join),
        Step({col.name: f"p.{quote(key)}"}),
    ]


def _parent_columns_used(table: Table, fk: str) -> set[str]:
    return {name for c in table.columns for name in c.generator.parent_columns(fk)}


@steps("parent")
def _parent_steps(
    table: Table, col: Column, gen: ParentGen, streams: Streams, ctx: BuildContext
) -> list[Step]:
    if gen.copies_entity(table):  # the SCD base table carries the entity's columns
        return [Step({col.name: f"p.{quote('_e_' + gen.column)}"})]
    ref = f"p.{quote(parent_ref_column(gen.fk, gen.column))}"
    return [Step({col.name: f"(CASE WHEN p.{quote(gen.fk)} IS NULL THEN NULL ELSE {ref} END)"})]


def _date_ref_sql(ref: str) -> str:
    if "." in ref:
        fk, column = ref.split(".", 1)
        return f"p.{quote(parent_ref_column(fk, column))}"
    return f"p.{quote(ref)}"


@steps("date")
def _date_steps(
    table: Table, col: Column, gen: DateGen, streams: Streams, ctx: BuildContext
) -> list[Step]:
    cal = ctx.spec.calendars[gen.calendar]
    start, end = gen.start or cal.start, gen.end or cal.end
    bins, cdf = ctx.register_calendar(gen.calendar, start, end)
    u = streams.u("day")
    name = col.name
    steps: list[Step] = []
    ref = _date_ref_sql(gen.not_before) if gen.not_before else None
    cap = _date_ref_sql(gen.not_after) if gen.not_after else None
    low_q, high_q = "0.0", "1.0"
    if ref is not None:
        lo_alias, hi_alias = f"cdflo_{name}", f"cdfhi_{name}"
        ref_day = f"CAST({ref} AS DATE)"
        lo = _cdf_at(lo_alias, ref_day, start, end)
        lo_join = f"LEFT JOIN {cdf} {lo_alias} ON {lo_alias}.day = {ref_day}"
        steps.append(Step({f"_lo_{name}": lo}, lo_join))
        low_q = f"p._lo_{name}"
        if gen.max_lag_days is not None:
            hi_day = f"(CAST({ref} AS DATE) + {gen.max_lag_days})"
            hi = _cdf_at(hi_alias, hi_day, start, end)
            hi_join = f"LEFT JOIN {cdf} {hi_alias} ON {hi_alias}.day = {hi_day}"
            steps.append(Step({f"_hi_{name}": hi}, hi_join))
            high_q = f"p._hi_{name}"
    if cap is not None:
        # The last day the draw may land on: lag_days are added after the draw.
        cap_alias = f"cdfcap_{name}"
        cap_day = f"(CAST({cap} AS DATE) - {gen.lag_days})"
        cap_q = _cdf_through(cap_alias, cap_day, start, end)
        cap_join = f"LEFT JOIN {cdf} {cap_alias} ON {cap_alias}.day = {cap_day}"
        steps.append(Step({f"_cap_{name}": cap_q}, cap_join))
        high_q = f"p._cap_{name}" if high_q == "1.0" else f"least({high_q}, p._cap_{name})"
        q = f"({low_q} + {u} * greatest({high_q} - {low_q}, 0.0))"
    elif ref is None:
        q = u
    else:  # the original not_before forms: values unchanged for existing specs
        q = f"({low_q} + {u} * ({high_q} - {low_q}))"
    bin_alias = f"bin_{name}"
    bin_expr = f"least(CAST(floor({q} * {BINS}) AS BIGINT), {BINS - 1})"
    steps.append(
        Step(
            {f"_day_{name}": f"{bin_alias}.day"},
            f"LEFT JOIN {bins} {bin_alias} ON {bin_alias}.bin = {bin_expr}",
        )
    )
    value = f"p._day_{name}"
    if col.type == "timestamp":
        t1, t2 = streams.u("tod_kind"), streams.u("tod")
        secs = (
            f"(CASE WHEN {t1} < 0.85 THEN 28800 + floor({t2} * 36000) ELSE floor({t2} * 86400) END)"
        )
        value = f"(CAST({value} AS TIMESTAMP) + to_seconds(CAST({secs} AS BIGINT)))"
        if ref is not None:
            value = f"greatest({value}, CAST({ref} AS TIMESTAMP))"
    elif ref is not None:
        value = f"greatest({value}, CAST({ref} AS DATE))"
    if gen.lag_days:
        value = f"({value} + INTERVAL {gen.lag_days} DAY)"
    if ref is not None and gen.max_lag_days is not None:
        bound = f"(CAST({ref} AS TIMESTAMP) + INTERVAL {gen.max_lag_days + gen.lag_days + 1} DAY)"
        value = f"least({value}, {bound})" if col.type == "timestamp" else value
    if cap is not None:
        value = _capped(value, cap, ref, gen.lag_days, col.type, streams)
    steps.append(Step({name: value}))
    return steps


def _capped(
    value: str, cap: str, ref: str | None, lag_days: int, col_type: str, streams: Streams
) -> str:
    """``value`` held on or before the ``not_after`` reference for every row. The draw already
    ends on the reference's day; a timestamp drawn later in that day than the reference is
    spread over the part of the day before it (after ``not_before``), not piled on it."""
    if col_type != "timestamp":
        return f"least({value}, CAST({cap} AS DATE))"
    cap_ts = f"CAST({cap} AS TIMESTAMP)"
    floor_ts = f"date_trunc('day', {cap_ts})"
    if ref is not None:
        lagged = f"CAST({ref} AS TIMESTAMP) + INTERVAL {lag_days} DAY"
        floor_ts = f"greatest({floor_ts}, {lagged})"
    span = f"greatest(epoch_us({cap_ts}) - epoch_us({floor_ts}), 0)"
    spread = f"({floor_ts} + to_microseconds(CAST(floor({streams.u('cap')} * {span}) AS BIGINT)))"
    return f"least(CASE WHEN {value} > {cap_ts} THEN {spread} ELSE {value} END, {cap_ts})"


def _cdf_at(alias: str, day_sql: str, start: date, end: date) -> str:
    return (
        f"(CASE WHEN {day_sql} IS NULL THEN 0.0 "
        f"WHEN {day_sql} < DATE '{start.isoformat()}' THEN 0.0 "
        f"WHEN {day_sql} > DATE '{end.isoformat()}' THEN 1.0 ELSE {alias}.cdf_lo END)"
    )


def _cdf_through(alias: str, day_sql: str, start: date, end: date) -> str:
    """The calendar's cumulative weight up to and including ``day_sql`` (1.0 when NULL)."""
    return (
        f"(CASE WHEN {day_sql} IS NULL THEN 1.0 "
        f"WHEN {day_sql} < DATE '{start.isoformat()}' THEN 0.0 "
        f"WHEN {day_sql} > DATE '{end.isoformat()}' THEN 1.0 ELSE {alias}.cdf_hi END)"
    )


@steps("faker")
def _faker_steps(
    table: Table, col: Column, gen: FakerGen, streams: Streams, ctx: BuildContext
) -> list[Step]:
    pool = ctx.register_pool(gen, table.name, col.name)
    alias = f"pool_{col.name}"
    locale = f"p.{quote(gen.locale_from)}" if gen.locale_from else literal(gen.locale)
    join = (
        f"LEFT JOIN {pool} {alias} ON {alias}.locale = {locale} "
        f"AND {alias}.idx = {streams.index(gen.pool_size, 'pick')}"
    )
    return [Step({col.name: f"{alias}.value"}, join)]


def column_steps(
    table: Table, col: Column, ctx: BuildContext, row_expr: str = "_rid"
) -> list[Step]:
    streams = Streams(ctx.seed, table.name, col.name, row_expr)
    gen = col.generator
    if gen.kind == "derived":
        raise TypeError("derived columns come from the table's SQL")
    compile_steps = STEPS_COMPILERS.get(gen.kind)
    if compile_steps is not None:
        col_steps = compile_steps(table, col, gen, streams, ctx)
    else:
        col_steps = [Step({col.name: scalar_sql(gen, streams, ctx)})]
    if col.null_rate > 0:
        last = col_steps[-1]
        expr = last.columns[col.name]
        null_u = streams.u("null")
        last.columns[col.name] = (
            f"(CASE WHEN {null_u} < {col.null_rate!r} THEN NULL ELSE {expr} END)"
        )
    return col_steps


def chain(base_sql: str, steps: list[Step]) -> str:
    """Nests the steps over ``base_sql``; every step sees the previous columns as ``p``."""
    sql = base_sql
    for step in steps:
        cols = ", ".join(f"{expr} AS {quote(name)}" for name, expr in step.columns.items())
        sql = f"SELECT p.*, {cols} FROM ({sql}) p {step.join}"
    return sql

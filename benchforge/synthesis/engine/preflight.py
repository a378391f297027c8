"""Checks that a loaded spec generates, without generating it: a spec that validates generates.

Loading a spec checks its shape and cross references; this goes further, with what generation
will really do:

- every table is compiled by the engine itself over empty tables of the spec's column types
  (expressions, derived SQL, foreign-key joins, SCD histories, final casts, the stress pass), in
  DuckDB, with zero rows; a failure is traced to its column (or ``derived_sql``, or stressor);
- every Faker generator is called with its arguments resolved as the pool builder resolves them
  (YAML dates as dates), under the spec's reference date, in every locale it names, and a few of
  its values are cast to the column's type.

``check_generates`` raises ``SpecError`` naming the file and the table and column paths.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb

from benchforge.synthesis.engine.columns import BuildContext, topological_columns
from benchforge.synthesis.engine.faker_calls import FakerCallError, sample_values
from benchforge.synthesis.engine.sql import DUCKDB_TYPES, literal, quote
from benchforge.synthesis.engine.stress import MANIFEST_COLUMNS, stress_plan
from benchforge.synthesis.engine.tables import (
    SCD_HIDDEN,
    build_derived_table,
    drop_scd_base,
    materialize,
    plain_table_query,
    scd_table_query,
)
from benchforge.synthesis.spec.generators import FakerGen
from benchforge.synthesis.spec.loader import load_spec
from benchforge.synthesis.spec.models import (
    DomainSpec,
    SpecError,
    Table,
    column_path,
    stressor_path,
    table_path,
)
from benchforge.synthesis.spec.suggest import did_you_mean

Problem = tuple[str, str]
FAKER_SAMPLES = 5


def check_generates(spec: DomainSpec, source: str) -> None:
    """Raises ``SpecError`` (naming ``source``) when the spec would fail to generate."""
    problems = preflight_problems(spec)
    if problems:
        raise SpecError(source, problems)


def validate_spec_file(path: Path | str) -> DomainSpec:
    """``benchforge spec validate``: loads the spec and checks that it generates."""
    spec = load_spec(path)
    check_generates(spec, str(path))
    return spec


def preflight_problems(spec: DomainSpec) -> list[Problem]:
    return faker_problems(spec) + sql_problems(spec)


# ---------------------------------------------------------------- Faker


def faker_problems(spec: DomainSpec) -> list[Problem]:
    """Calls every Faker generator as its pool will, and casts a few values to the column type."""
    problems: list[Problem] = []
    today = spec.faker_today()
    con = duckdb.connect()
    try:
        for table in spec.tables:
            for column in table.columns:
                gen = column.generator
                if not isinstance(gen, FakerGen):
                    continue
                path = f"{column_path(table, column)}.generator"
                problems += [
                    (path, msg) for msg in _faker_column_problems(con, gen, column.type, today)
                ]
    finally:
        con.close()
    return problems


def _faker_column_problems(
    con: duckdb.DuckDBPyConnection, gen: FakerGen, column_type: str, today: date
) -> list[str]:
    locales = gen.locales if gen.locale_from else [gen.locale]
    for locale in locales:
        try:
            values = sample_values(gen.provider, gen.args, locale, today, FAKER_SAMPLES)
        except FakerCallError as err:
            return [f"{err} (locale {locale})" if len(locales) > 1 else str(err)]
        if column_type == "varchar":
            continue
        duck_type = DUCKDB_TYPES[column_type]
        for value in values:
            row = con.execute(f"SELECT TRY_CAST({literal(value)} AS {duck_type})").fetchone()
            if row is None or row[0] is None:
                return [
                    f"values of Faker provider '{gen.provider}' cannot be read as {column_type} "
                    f"(e.g. {value!r})"
                ]
    return []


# ---------------------------------------------------------------- SQL


def sql_problems(spec: DomainSpec) -> list[Problem]:
    """Compiles every table, in generation order, over empty parents, with zero rows."""
    con = duckdb.connect()
    try:
        con.execute("CREATE SCHEMA _gen; CREATE SCHEMA _meta; CREATE SCHEMA _cal")
        con.execute("CREATE SCHEMA _pool; ATTACH ':memory:' AS wh; CREATE SCHEMA wh.raw")
        con.execute(f"CREATE TABLE _meta.anomalies ({MANIFEST_COLUMNS})")
        con.execute("CREATE TABLE _pool.empty (locale VARCHAR, idx BIGINT, value VARCHAR)")
        ctx = BuildContext(spec, 0, 1.0, lambda *_: "_pool.empty", _empty_calendar(con))
        problems: list[Problem] = []
        for table in spec.generation_order():
            found = _table_problems(con, spec, table, ctx)
            if found:
                problems += found
                _placeholder(con, spec, table)
            ctx.parent_rows[table.name] = 1  # sizes only enter the SQL as constants
        return problems
    finally:
        con.close()


def _empty_calendar(
    con: duckdb.DuckDBPyConnection,
) -> Callable[[str, date, date], tuple[str, str]]:
    """A calendar registrar making empty tables of the real calendars' shape."""

    def register(name: str, start: date, end: date) -> tuple[str, str]:
        label = f"{name}_{start:%Y%m%d}_{end:%Y%m%d}"
        bins, cdf = f"_cal.{quote(label + '_bins')}", f"_cal.{quote(label + '_cdf')}"
        con.execute(f"CREATE TABLE IF NOT EXISTS {bins} (bin BIGINT, day DATE)")
        con.execute(f"CREATE TABLE IF NOT EXISTS {cdf} (day DATE, cdf_lo DOUBLE, cdf_hi DOUBLE)")
        return bins, cdf

    return register


def _first_lines(err: duckdb.Error) -> str:
    """DuckDB's message without the echo of the (generated, long) SQL."""
    lines = []
    for line in str(err).strip().splitlines():
        if not line.strip() or line.startswith("LINE "):
            break
        lines.append(line.strip())
    return " ".join(lines)


def _column_hint(message: str, names: set[str]) -> str:
    missing = re.search(r'column "([^"]+)" not found', message, re.IGNORECASE)
    if missing is None:
        return ""
    return did_you_mean(missing.group(1), {n for n in names if not n.startswith("_")})


def _table_problems(
    con: duckdb.DuckDBPyConnection, spec: DomainSpec, table: Table, ctx: BuildContext
) -> list[Problem]:
    clean = f"_gen.{quote(table.name)}"
    try:
        if table.derived_sql:
            build_derived_table(con, table)
        else:
            query = (
                scd_table_query(con, table, ctx)[0] if table.scd else plain_table_query(table, ctx)
            )
            materialize(con, clean, query, 0, 1, lambda _n: None)
    except duckdb.Error as err:
        if table.derived_sql:
            return [(f"{table_path(table)}.derived_sql", f"does not compile: {_first_lines(err)}")]
        return _locate_column(con, spec, table, ctx, err)
    problems = _stressor_problems(con, spec, table, clean)
    if table.scd:
        drop_scd_base(con, table)
    return problems


def _locate_column(
    con: duckdb.DuckDBPyConnection,
    spec: DomainSpec,
    table: Table,
    ctx: BuildContext,
    err: duckdb.Error,
) -> list[Problem]:
    """The first column (in generation order) whose SQL fails, by compiling growing prefixes of
    the table's columns."""
    names = set(table.column_map)
    prefix: list[dict[str, object]] = []
    for column in topological_columns(table):
        prefix.append(column.model_dump())
        partial = Table.model_validate({**table.model_dump(), "columns": prefix})
        try:
            query = (
                scd_table_query(con, partial, ctx)[0]
                if table.scd
                else plain_table_query(partial, ctx)
            )
            con.execute(f"SELECT * FROM ({query.format(lo=0, hi=0)}) q LIMIT 0")
        except duckdb.Error as column_err:
            text = _first_lines(column_err)
            hint = _column_hint(text, names)
            if hint:  # DuckDB's candidates include the engine's helper columns
                text = text.split(" Candidate bindings")[0]
            what = f"{column.generator.kind} generator does not compile"
            return [(f"{column_path(table, column)}.generator", f"{what}: {text}{hint}")]
    return [(table_path(table), f"does not compile: {_first_lines(err)}")]


def _stressor_problems(
    con: duckdb.DuckDBPyConnection, spec: DomainSpec, table: Table, clean: str
) -> list[Problem]:
    mine = [(i, s) for i, s in enumerate(spec.stressors) if s.table == table.name]
    raw = f"wh.raw.{quote(table.name)}"
    try:
        _stress(con, spec, table, clean, raw)
        return []
    except duckdb.Error as err:
        problems: list[Problem] = []
        for index, stressor in mine:  # which one: each alone
            alone = spec.model_copy(update={"stressors": [stressor]})
            try:
                _stress(con, alone, table, clean, raw)
            except duckdb.Error as one_err:
                problems.append((stressor_path(index, stressor), _first_lines(one_err)))
        return problems or [(table_path(table), f"stress pass: {_first_lines(err)}")]


def _stress(
    con: duckdb.DuckDBPyConnection, spec: DomainSpec, table: Table, clean: str, raw: str
) -> None:
    plan = stress_plan(spec, table, 0)
    con.execute(f"CREATE OR REPLACE TABLE {raw} AS {plan.raw_sql(clean)}")
    manifest = plan.manifest_sql(f"SELECT * FROM {clean}")
    if manifest:
        con.execute(manifest)


def _placeholder(con: duckdb.DuckDBPyConnection, spec: DomainSpec, table: Table) -> None:
    """An empty table of the declared types in place of one that failed, so its children are
    still checked."""
    cols = ["CAST(NULL AS BIGINT) AS _rid"]
    if table.scd:
        entity = spec.table_map.get(table.scd.entity)
        key_type = "VARCHAR"
        if entity is not None and entity.primary_key in entity.column_map:
            key_type = DUCKDB_TYPES[entity.column_map[entity.primary_key].type]
        cols += [f"CAST(NULL AS BIGINT) AS {c}" for c in SCD_HIDDEN]
        cols.append(f"CAST(NULL AS {key_type}) AS {quote(table.scd.entity_key)}")
        cols += ["CAST(NULL AS TIMESTAMP) AS valid_from", "CAST(NULL AS TIMESTAMP) AS valid_to"]
        cols.append("CAST(NULL AS BOOLEAN) AS is_current")
    cols += [
        f"CAST(NULL AS {DUCKDB_TYPES[c.type]}) AS {quote(c.name)}"
        for c in table.columns
        if not (table.scd and c.name == table.scd.entity_key)
    ]
    con.execute(
        f"CREATE OR REPLACE TABLE _gen.{quote(table.name)} AS SELECT {', '.join(cols)} LIMIT 0"
    )

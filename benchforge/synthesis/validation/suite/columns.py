"""Declared column constraints: not_null, NULLs only where the manifest blanked them, min/max,
accepted values, plain numbers under type_coercion, uniqueness and the clean NULL rate; then the
checks its generator implies (``distributions``, ``copies``)."""

from __future__ import annotations

import great_expectations.expectations as gxe
from great_expectations.expectations.row_conditions import Condition

from benchforge.synthesis.spec.models import Column, DomainSpec, Table
from benchforge.synthesis.validation.sqltext import NUMERIC_TYPES, and_, raw
from benchforge.synthesis.validation.suite.builder import (
    PLAIN_NUMBER,
    PlanBuilder,
    python_values,
    range_text,
)
from benchforge.synthesis.validation.suite.copies import copy_checks
from benchforge.synthesis.validation.suite.distributions import generator_checks


def column_checks(b: PlanBuilder, column: Column) -> None:
    c, t = column.name, b.name
    if c == b.pk:
        return
    vtype = b.value_type(c)

    def clean_cond() -> Condition | None:
        return b.flag(f"clean__{c}", b.clean(c))

    mv = b.touched_by(c, "missing_values")
    nullable = generator_can_be_null(b.spec, b.table, c)
    if column.not_null:
        b.row(
            "not_null_outside_manifest",
            c,
            gxe.ExpectColumnValuesToNotBeNull,
            f"{t}.{c} (not_null) is NULL only on the manifest's missing_values rows",
            "no NULLs",
            b.flag(f"nomv__{c}", f"NOT {mv}" if mv else None),
            column=c,
        )
    if column.not_null or (column.null_rate == 0 and not nullable):
        b.equal_counts(
            "nulls_match_manifest",
            c,
            f"NULLs in {t}.{c} == manifest missing_values rows (no clean NULLs)",
            b.count_rows(f"{b.col(c)} IS NULL"),
            b.count_manifest(c, "missing_values"),
        )
    numeric = vtype in NUMERIC_TYPES
    if numeric and (column.min is not None or column.max is not None):
        b.row(
            "min_max_outside_manifest",
            c,
            gxe.ExpectColumnValuesToBeBetween,
            f"{t}.{c} is {range_text(column.min, column.max)} on rows the manifest does not list",
            range_text(column.min, column.max),
            clean_cond(),
            column=b.value_column(c),
            min_value=column.min,
            max_value=column.max,
        )
    if column.accepted_values is not None:
        values = python_values(list(column.accepted_values), vtype)
        b.row(
            "accepted_values_outside_manifest",
            c,
            gxe.ExpectColumnValuesToBeInSet,
            f"{t}.{c} is one of {values} on rows the manifest does not list",
            f"in {values}",
            clean_cond(),
            column=b.value_column(c),
            value_set=values,
        )
    if c in b.coerced:
        b.row(
            "type_coercion_clean_rows_plain",
            c,
            gxe.ExpectColumnValuesToMatchRegex,
            f"{t}.{c} (published as text) renders untouched rows as plain numbers",
            "plain numbers",
            clean_cond(),
            column=c,
            regex=PLAIN_NUMBER,
        )
    generator_checks(b, column)
    if column.unique:
        dups = b.metric(
            "scalar",
            f"(SELECT count(*) FROM (SELECT {b.col(c)} FROM {raw(t)} t "
            f"{b.manifest_join_sql()} WHERE {b.col(c)} IS NOT NULL "
            f"AND {b.clean(c) or 'TRUE'} GROUP BY 1 HAVING count(*) > 1))",
        )
        b.zero_count(
            "unique_values", c, f"{t}.{c} (unique) has no duplicate values on clean rows", dups
        )
    if column.null_rate > 0 and not nullable:
        null_rate_check(b, column)
    copy_checks(b, column)


def null_rate_check(b: PlanBuilder, column: Column) -> None:
    c = column.name
    governed = b.governed(c)
    n = b.count_rows(governed)
    nulls = b.count_rows(and_(governed, b.clean(c), f"{b.col(c)} IS NULL"))
    b.share_check(
        "null_rate", c, nulls, n, column.null_rate, what=f"clean NULL share of {b.name}.{c}"
    )


def generator_can_be_null(spec: DomainSpec, table: Table, column: str, depth: int = 0) -> bool:
    """Whether the column's generator (ignoring ``null_rate`` and stressors) can yield NULL,
    as the generator says (``may_be_null``, asking back about the columns it reads); an SCD
    table's column copied from the entity is nullable when the entity's column is."""
    if depth > 20:
        return True

    def nullable(t: Table, c: str) -> bool:
        return t.column_map[c].null_rate > 0 or generator_can_be_null(spec, t, c, depth + 1)

    result = table.column_map[column].generator.may_be_null(spec, table, nullable)
    if not result and table.scd:
        entity = spec.table_map[table.scd.entity]
        if column in entity.column_map and column != table.primary_key:
            result = nullable(entity, column)
    return result

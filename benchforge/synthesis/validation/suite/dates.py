"""Date checks: a date generator's values lie in its calendar's range, on or after their
``not_before`` reference (within ``max_lag_days`` of it) and on or before their ``not_after``
reference."""

from __future__ import annotations

from collections.abc import Callable

import great_expectations.expectations as gxe
from great_expectations.expectations.row_conditions import Condition

from benchforge.synthesis.spec.generators import DateOrder, DateRange
from benchforge.synthesis.spec.models import Column
from benchforge.synthesis.validation.sqltext import and_, q
from benchforge.synthesis.validation.suite.builder import PlanBuilder, range_text


def date_checks(
    b: PlanBuilder,
    column: Column,
    dates: DateRange,
    order: DateOrder | None,
    gen_cond: Callable[[], Condition | None],
    ceiling: str | None = None,
) -> None:
    """Calendar range, ``not_before`` / ``max_lag_days`` and ``not_after`` against the
    reference dates."""
    c, t = column.name, b.name
    low, high = dates
    if low is not None or high is not None:
        # pandas reads DATE columns as datetime64 too: compare with datetimes.
        b.row(
            "generator_date_range",
            c,
            gxe.ExpectColumnValuesToBeBetween,
            f"{t}.{c} is {range_text(low, high)} (its calendar) on untouched rows",
            range_text(low, high),
            gen_cond(),
            column=c,
            min_value=low,
            max_value=high,
        )
    if order is not None:
        _not_before_check(b, column, order)
    if ceiling is not None:
        _not_after_check(b, column, ceiling)


def _not_before_check(b: PlanBuilder, column: Column, order: DateOrder) -> None:
    c, t = column.name, b.name
    ref_sql, ref_clean, ref_text = reference(b, order.reference)
    cast = "DATE" if column.type == "date" else "TIMESTAMP"
    ref = f"CAST({ref_sql} AS {cast})"
    late = ""
    if order.late_after_days is not None:
        late = f" OR {b.col(c)} > {ref} + INTERVAL {order.late_after_days} DAY"
    checked = and_(b.generated(c), ref_clean, f"{ref} IS NOT NULL")
    wrong = b.helper(
        f"order__{c}",
        f"CASE WHEN {checked} AND ({b.col(c)} < {ref}{late}) THEN "
        f"CAST({b.col(c)} AS VARCHAR) || ' vs ' || CAST({ref} AS VARCHAR) END",
    )
    bound = "" if order.max_lag_days is None else f" and within {order.max_lag_days} days of it"
    b.row(
        "date_not_before",
        c,
        gxe.ExpectColumnValuesToBeNull,
        f"{t}.{c} is on or after {ref_text}{bound} on untouched rows",
        f">= {ref_text}",
        b.flag(f"orderok__{c}", checked),
        column=wrong,
    )


def _not_after_check(b: PlanBuilder, column: Column, ceiling: str) -> None:
    c, t = column.name, b.name
    ref_sql, ref_clean, ref_text = reference(b, ceiling)
    cast = "DATE" if column.type == "date" else "TIMESTAMP"
    ref = f"CAST({ref_sql} AS {cast})"
    checked = and_(b.generated(c), ref_clean, f"{ref} IS NOT NULL")
    wrong = b.helper(
        f"ceiling__{c}",
        f"CASE WHEN {checked} AND {b.col(c)} > {ref} THEN "
        f"CAST({b.col(c)} AS VARCHAR) || ' vs ' || CAST({ref} AS VARCHAR) END",
    )
    b.row(
        "date_not_after",
        c,
        gxe.ExpectColumnValuesToBeNull,
        f"{t}.{c} is on or before {ref_text} on untouched rows",
        f"<= {ref_text}",
        b.flag(f"ceilingok__{c}", checked),
        column=wrong,
    )


def reference(b: PlanBuilder, ref: str) -> tuple[str, str | None, str]:
    """SQL, cleanliness condition and text of a ``not_before`` / ``not_after`` reference."""
    parts = ref.split(".")
    if len(parts) == 1:
        return b.col(ref), b.clean(ref), ref
    fk_name, parent_col = parts
    parent = b.table.foreign_keys()[fk_name].table
    alias = b.parent_alias(fk_name, parent)
    b.parents[parent].columns.add(parent_col)
    clean = and_(f"{alias}.k IS NOT NULL", f"NOT {alias}.{q('d__' + parent_col)}")
    return f"{alias}.{q('v__' + parent_col)}", clean, f"{parent}.{parent_col}"

"""Generator checks: what each column's generator says about its values (``bounds``,
``value_set``, ``true_share``, ``median``, ``mean_and_spread``, ``date_range``) checked on the rows
its generator governs and the manifest does not list."""

from __future__ import annotations

import great_expectations.expectations as gxe
from great_expectations.expectations.row_conditions import Condition

from benchforge.synthesis.spec.models import Column
from benchforge.synthesis.validation import stats
from benchforge.synthesis.validation.sqltext import NUMERIC_TYPES, and_, lit
from benchforge.synthesis.validation.suite.builder import (
    PlanBuilder,
    fmt_number,
    python_values,
    range_text,
)
from benchforge.synthesis.validation.suite.dates import date_checks
from benchforge.synthesis.validation.suite.plan import Metrics


def generator_checks(b: PlanBuilder, column: Column) -> None:
    c, t = column.name, b.name
    gen = column.generator

    def gen_cond() -> Condition | None:
        return b.flag(f"gen__{c}", b.generated(c))

    vtype = b.value_type(c)
    numeric = vtype in NUMERIC_TYPES
    value = b.value(c)
    present = and_(b.generated(c), f"{value} IS NOT NULL")
    bounds = gen.bounds()
    if bounds is not None and bounds != (None, None) and numeric:
        low, high = bounds
        b.row(
            "generator_range",
            c,
            gxe.ExpectColumnValuesToBeBetween,
            f"{t}.{c} is {range_text(low, high)} (its {gen.kind} generator's range) "
            "on untouched rows",
            range_text(low, high),
            gen_cond(),
            column=b.value_column(c),
            min_value=low,
            max_value=high,
        )
    value_set = gen.value_set(b.spec)
    if value_set is not None:
        values = python_values(value_set.values, vtype)
        b.row(
            "generator_values_in_set",
            c,
            gxe.ExpectColumnValuesToBeInSet,
            f"{t}.{c} is {value_set.described} on untouched rows",
            f"in {values}",
            gen_cond(),
            column=b.value_column(c),
            value_set=values,
        )
        if value_set.shares is not None:
            n = b.count_rows(present)
            for v, p in zip(value_set.values, value_set.shares, strict=True):
                k = b.count_rows(and_(present, f"{value} = CAST({lit(v)} AS {vtype})"))
                what = f"share of {v!r} in {t}.{c}"
                b.share_check("categorical_share", c, k, n, p, label=str(v), what=what)
    p_true = gen.true_share()
    if p_true is not None:
        n = b.count_rows(present)
        k = b.count_rows(and_(present, f"{value}"))
        b.share_check("boolean_p_true", c, k, n, p_true, what=f"share of true in {t}.{c}")
    median = gen.median()
    if median is not None and numeric:
        n = b.count_rows(present)
        k = b.count_rows(and_(present, f"{value} < {median!r}"))
        what = f"share of {t}.{c} below exp(mu) = {fmt_number(median)}"
        b.share_check("distribution_median_share", c, k, n, 0.5, what=what)
    moments = gen.mean_and_spread()
    if moments is not None and numeric and moments.sd > 0:
        mean_check(b, column, present, *moments)
    dates = gen.date_range(b.spec, column.type == "timestamp")
    if dates is not None and vtype in ("DATE", "TIMESTAMP"):
        date_checks(b, column, dates, gen.date_order(), gen_cond, gen.date_ceiling())


def mean_check(
    b: PlanBuilder, column: Column, present: str | None, mean: float, sd: float, extra: float
) -> None:
    c = column.name
    total = b.metric("rows", f"avg({b.value(c)}) FILTER (WHERE {present or 'TRUE'})")
    n = b.count_rows(present)

    def evaluate(m: Metrics) -> tuple[float, float, float] | None:
        avg, nn = m[total], m[n]
        if not nn or avg is None:
            return None
        return (avg, *stats.mean_bounds(nn, mean, sd, extra))

    b.aggregate(
        "distribution_mean",
        c,
        f"mean of {b.name}.{c} ~ {fmt_number(mean)} ({column.generator.kind}, 5 sigma)",
        "mean",
        evaluate,
    )

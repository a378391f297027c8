"""Stressor checks: the manifest's rows really were changed, what the data shows matches the
manifest, and each stressor's count matches its rate times the eligible rows."""

from __future__ import annotations

import great_expectations.expectations as gxe

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
from benchforge.synthesis.validation.sqltext import lit, q, raw
from benchforge.synthesis.validation.suite.builder import (
    PLAIN_NUMBER,
    PlanBuilder,
    formatted_number,
)
from benchforge.synthesis.validation.suite.plan import Metrics


def stressor_checks(b: PlanBuilder, c: str, s: Stressor) -> None:
    t = b.name
    this = b.touched_by(c, s.kind)
    assert this is not None
    col = b.col(c)
    if isinstance(s, MissingValues):
        b.row(
            "stressor_rows_changed",
            c,
            gxe.ExpectColumnValuesToBeNull,
            f"{t}.{c}: manifest missing_values rows are NULL",
            "NULL on manifest rows",
            b.flag(f"mv__{c}", this),
            label=s.kind,
            column=c,
        )
        eligible = f"{col} IS NOT NULL"
    elif isinstance(s, TypeCoercion):
        b.row(
            "stressor_rows_changed",
            c,
            gxe.ExpectColumnValuesToMatchRegex,
            f"{t}.{c}: manifest type_coercion rows look like '1,234.50' or '12.30 {s.unit}'",
            "formatted numbers",
            b.flag(f"tc__{c}", this),
            label=s.kind,
            column=c,
            regex=formatted_number(s.unit),
        )
        not_plain = b.count_rows(
            f"{col} IS NOT NULL AND NOT regexp_full_match({col}, {lit(PLAIN_NUMBER)})"
        )
        b.equal_counts(
            "stressor_detected_matches_manifest",
            c,
            f"values of {t}.{c} that are not plain numbers == manifest type_coercion rows",
            not_plain,
            b.count_manifest(c, s.kind),
            label=s.kind,
        )
        eligible = f"{col} IS NOT NULL"
    elif isinstance(s, KeyDrift):
        orphan = f"_bf_orphan__{c}"
        b.row(
            "stressor_rows_changed",
            c,
            gxe.ExpectColumnValuesToNotBeNull,
            f"{t}.{c}: manifest key_drift rows no longer match a parent key",
            "orphan keys on manifest rows",
            b.flag(f"kd__{c}", this),
            label=s.kind,
            column=orphan,
        )
        eligible = f"{col} IS NOT NULL"
    elif isinstance(s, Outliers):
        eligible = f"{col} IS NOT NULL AND {col} <> 0"
    elif isinstance(s, CurrencyConflict):
        eligible = f"{col} IS NOT NULL"
    else:
        assert isinstance(s, TimezoneMismatch)
        alias = b.lookup_alias(s.offset_lookup, s.offset_via)
        offset = f"coalesce(TRY_CAST({alias}.{q(s.offset_value)} AS DOUBLE), 0)"
        eligible = f"{col} IS NOT NULL AND {offset} <> 0"
    n_lo = b.count_rows(f"({eligible}) OR {this}")
    mv = b.touched_by(c, "missing_values")
    n_extra = None
    if mv and s.kind != "missing_values":  # blanked rows may have been eligible too
        n_extra = b.count_rows(f"{mv} AND NOT {this}")
    rate_check(b, c, s, b.count_manifest(c, s.kind), n_lo, n_extra)


def rate_check(
    b: PlanBuilder, c: str | None, s: Stressor, count: str, n_lo: str, n_extra: str | None
) -> None:
    def evaluate(m: Metrics) -> tuple[float, float, float] | None:
        k, lo = m[count], m[n_lo]
        if k is None or lo is None:
            return None
        hi = lo + ((m[n_extra] or 0.0) if n_extra else 0.0)
        return (k, *stats.binomial_count_bounds(lo, hi, s.rate))

    where = b.name if c is None else f"{b.name}.{c}"
    b.aggregate(
        "stressor_rate_matches_spec",
        c,
        f"manifest {s.kind} rows on {where} ~ rate {s.rate} x eligible rows (5 sigma)",
        "count",
        evaluate,
        label=s.kind,
    )


def duplicate_current_checks(b: PlanBuilder, s: DuplicateCurrent) -> None:
    scd = b.table.scd
    assert scd is not None
    t, ek = b.name, scd.entity_key
    dup = b.flag("dup", b.dup_flag())
    b.row(
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
    detected = b.metric(
        "scalar",
        f"(SELECT count(*) FROM (SELECT {q(ek)} FROM {raw(t)} WHERE is_current GROUP BY 1 "
        "HAVING count(*) > 1))",
    )
    b.equal_counts(
        "stressor_detected_matches_manifest",
        None,
        f"entities of {t} with more than one current version == manifest duplicate_current",
        detected,
        b.count_manifest(None, s.kind),
        label=s.kind,
    )
    eligible = b.metric(
        "scalar",
        f"(SELECT count(*) FROM (SELECT {q(ek)} FROM {raw(t)} GROUP BY 1 HAVING count(*) >= 2))",
    )
    rate_check(b, None, s, b.count_manifest(None, s.kind), eligible, None)

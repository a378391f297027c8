"""Copy checks: a column the generator copies (from the parent row or a lookup) equals its
source on clean rows; currency_conflict rows are the only differences."""

from __future__ import annotations

import great_expectations.expectations as gxe

from benchforge.synthesis.spec.generators import LookupCopy, ParentCopy
from benchforge.synthesis.spec.models import Column
from benchforge.synthesis.validation.sqltext import and_, q, same_value
from benchforge.synthesis.validation.suite.builder import PlanBuilder


def copy_checks(b: PlanBuilder, column: Column) -> None:
    c = column.name
    source = column.generator.copies(b.spec, b.table)
    if isinstance(source, ParentCopy):
        parent, copied = source.parent, source.column
        alias = b.parent_alias(source.fk, parent)
        b.parents[parent].columns.add(copied)
        ok = and_(
            f"{alias}.k IS NOT NULL",
            f"NOT {alias}.{q('d__' + copied)}",
            b.clean(source.fk),
            b.governed(c),
        )
        copy_check(
            b,
            "parent_copy_matches",
            c,
            f"{alias}.{q('v__' + copied)}",
            b.types[parent].get(copied),
            ok,
            f"{b.name}.{c} equals {parent}.{copied} of the row {source.fk} references",
        )
    elif isinstance(source, LookupCopy):
        alias = b.lookup_alias(source.lookup, source.via)
        ok = and_(f"{alias}.k IS NOT NULL", b.clean(source.via), b.governed(c))
        copy_check(
            b,
            "lookup_copy_matches",
            c,
            f"{alias}.{q(source.value)}",
            None,
            ok,
            f"{b.name}.{c} equals lookup {source.lookup}.{source.value} for its {source.via}",
        )


def copy_check(
    b: PlanBuilder,
    check: str,
    c: str,
    source: str,
    source_type: str | None,
    comparable: str | None,
    description: str,
    name: str = "copy",
) -> None:
    equal = same_value(b.col(c), b.mine.get(c), source, source_type)
    differs = f"NOT {equal}"
    checked = and_(comparable, b.clean(c))
    diff = b.helper(
        f"{name}__{c}",
        f"CASE WHEN {checked or 'TRUE'} AND {differs} THEN coalesce(CAST({b.col(c)} AS "
        f"VARCHAR), 'NULL') || ' <> ' || coalesce(CAST({source} AS VARCHAR), 'NULL') END",
    )
    b.row(
        check,
        c,
        gxe.ExpectColumnValuesToBeNull,
        f"{description} (rows not in the manifest)",
        "no differences",
        b.flag(f"{name}ok__{c}", checked),
        column=diff,
    )
    conflict = b.touched_by(c, "currency_conflict")
    if conflict:
        other_kind = f"({b.touched(c)} AND NOT {conflict})"
        observed = b.count_rows(and_(comparable, differs, f"NOT {other_kind}"))
        expected = b.count_rows(and_(comparable, conflict))
        b.equal_counts(
            "stressor_detected_matches_manifest",
            c,
            f"rows of {b.name}.{c} differing from their source == manifest "
            "currency_conflict rows (where the source is comparable)",
            observed,
            expected,
            label="currency_conflict",
        )

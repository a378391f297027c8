"""SCD history checks: ordered validity ranges, one open current version per entity, at most
``versions.max`` versions, every entity covered, current versions equal to the entity."""

from __future__ import annotations

import great_expectations.expectations as gxe

from benchforge.synthesis.validation.sqltext import and_, key_join, q, raw
from benchforge.synthesis.validation.suite.builder import PlanBuilder
from benchforge.synthesis.validation.suite.copies import copy_check
from benchforge.synthesis.validation.suite.plan import MissingDependency


def scd_checks(b: PlanBuilder) -> None:
    scd = b.table.scd
    assert scd is not None
    t, ek = b.name, scd.entity_key
    b.row(
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
    mismatch = b.helper(
        "current_vs_open",
        'coalesce(t."is_current", false) <> (t."valid_to" IS NULL)',
    )
    b.row(
        "scd_current_iff_open",
        "is_current",
        gxe.ExpectColumnValuesToBeInSet,
        f"{t}: is_current is true exactly on versions with valid_to NULL",
        "no mismatches",
        column=mismatch,
        value_set=[False],
    )
    no_current = b.metric(
        "scalar",
        f"(SELECT count(*) FROM (SELECT {q(ek)} FROM {raw(t)} GROUP BY 1 "
        "HAVING NOT bool_or(coalesce(is_current, false))))",
    )
    b.zero_count(
        "scd_one_current_per_entity", ek, f"every {ek} of {t} has a current version", no_current
    )
    too_many = b.metric(
        "scalar",
        f"(SELECT count(*) FROM (SELECT {q(ek)} FROM {raw(t)} GROUP BY 1 "
        f"HAVING count(*) > {scd.versions.max}))",
    )
    b.zero_count(
        "scd_versions_within_max",
        ek,
        f"no {ek} of {t} has more than {scd.versions.max} versions",
        too_many,
    )
    entity = b.spec.table_map[scd.entity]
    if scd.entity not in b.types:
        raise MissingDependency(scd.entity)
    on = key_join(
        f"h.{q(ek)}",
        b.mine.get(ek),
        f"e.{q(entity.primary_key)}",
        b.types[scd.entity].get(entity.primary_key),
    )
    uncovered = b.metric(
        "scalar",
        f"(SELECT count(*) FROM {raw(scd.entity)} e WHERE NOT EXISTS "
        f"(SELECT 1 FROM {raw(t)} h WHERE {on}))",
    )
    b.zero_count(
        "scd_covers_entities", ek, f"every {scd.entity} row has a history in {t}", uncovered
    )
    alias = b.parent_alias(ek, scd.entity)
    for c in sorted(b.shared):
        b.parents[scd.entity].columns.add(c)
        ok = and_(f"{alias}.k IS NOT NULL", f"NOT {alias}.{q('d__' + c)}", b.latest())
        copy_check(
            b,
            "scd_current_matches_entity",
            c,
            f"{alias}.{q('v__' + c)}",
            b.types[scd.entity].get(c),
            ok,
            f"the current version's {c} equals {scd.entity}.{c}",
            name="scd",
        )

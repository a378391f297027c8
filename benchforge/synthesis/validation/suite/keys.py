"""Key checks: the primary key is non-NULL and unique; every foreign key (and an SCD table's
entity key) finds its parent except on the manifest's key_drift rows."""

from __future__ import annotations

import great_expectations.expectations as gxe

from benchforge.synthesis.validation.suite.builder import PlanBuilder


def primary_key_checks(b: PlanBuilder) -> None:
    t, pk = b.name, b.pk
    b.row(
        "primary_key_not_null",
        pk,
        gxe.ExpectColumnValuesToNotBeNull,
        f"{t}.{pk} (primary key) is never NULL",
        "no NULLs",
        column=pk,
    )
    b.row(
        "primary_key_unique",
        pk,
        gxe.ExpectColumnValuesToBeUnique,
        f"{t}.{pk} (primary key) is unique",
        "unique values",
        column=pk,
    )


def foreign_key_checks(b: PlanBuilder) -> None:
    fks: list[tuple[str, str]] = [(c, g.table) for c, g in b.table.foreign_keys().items()]
    if b.table.scd:
        fks.append((b.table.scd.entity_key, b.table.scd.entity))
    for c, parent_name in fks:
        alias = b.parent_alias(c, parent_name)
        parent_pk = b.spec.table_map[parent_name].primary_key
        orphan = b.helper(
            f"orphan__{c}",
            f"CASE WHEN {b.col(c)} IS NOT NULL AND {alias}.k IS NULL "
            f"THEN CAST({b.col(c)} AS VARCHAR) END",
        )
        drift = b.touched_by(c, "key_drift")
        b.row(
            "fk_no_orphans_outside_manifest",
            c,
            gxe.ExpectColumnValuesToBeNull,
            f"{b.name}.{c} references an existing {parent_name}.{parent_pk} on every row "
            "the manifest does not list as key_drift",
            "0 orphan keys",
            b.flag(f"nodrift__{c}", f"NOT {drift}" if drift else None),
            column=orphan,
        )
        orphans = b.count_rows(f"{b.col(c)} IS NOT NULL AND {alias}.k IS NULL")
        b.equal_counts(
            "fk_orphans_match_manifest",
            c,
            f"orphan keys in {b.name}.{c} == manifest key_drift rows",
            orphans,
            b.count_manifest(c, "key_drift"),
        )

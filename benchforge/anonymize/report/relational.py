"""Relational integrity of the release: every declared foreign key still finds its parent, joins
return as many rows as on the source, and children per parent keep their shape.

Keys are compared normalized, ``upper(trim(CAST(key AS VARCHAR)))``, because that is how the
gold dbt staging joins them: synthesized data has lower-cased and space-padded keys on purpose
(key drift), and pseudonymization re-applies that surface form, so a raw equality join would
report orphans the benchmark never sees. Everything runs as a handful of aggregate queries per
foreign key on both catalogs.
"""

from __future__ import annotations

import duckdb

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.fidelity import (
    REL,
    SRC,
    catalog_tables,
    column_types,
    ks_complement,
    ks_statistic,
    table_ref,
)
from benchforge.anonymize.report.models import ForeignKeyCheck, RelationalSection
from benchforge.anonymize.transform.models import TransformManifest
from benchforge.core.sql import quote


def normalized(expr: str) -> str:
    """The join form of a key (see the module docstring)."""
    return f"upper(trim(CAST({expr} AS VARCHAR)))"


def _side(
    con: duckdb.DuckDBPyConnection, catalog: str, child: str, fk: str, parent: str, pk: str
) -> tuple[int, int, int]:
    """(non-NULL child keys, those with a parent, rows of child JOIN parent) on one side."""
    c_ref, p_ref = table_ref(catalog, child), table_ref(catalog, parent)
    ck, pk_n = normalized("c." + quote(fk)), normalized("p." + quote(pk))
    sql = f"""
        WITH parents AS (SELECT {pk_n} AS k, count(*) AS copies FROM {p_ref} AS p GROUP BY 1),
        kids AS (SELECT {ck} AS k FROM {c_ref} AS c WHERE c.{quote(fk)} IS NOT NULL)
        SELECT count(*), count(parents.k), coalesce(sum(parents.copies), 0)
        FROM kids LEFT JOIN parents ON kids.k = parents.k
    """
    row = con.execute(sql).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def _children_per_parent(catalog: str, child: str, fk: str, parent: str, pk: str) -> str:
    c_ref, p_ref = table_ref(catalog, child), table_ref(catalog, parent)
    return f"""
        SELECT count(c.k) AS v
        FROM (SELECT DISTINCT {normalized(quote(pk))} AS k FROM {p_ref}) AS p
        LEFT JOIN (SELECT {normalized(quote(fk))} AS k FROM {c_ref}) AS c ON c.k = p.k
        GROUP BY p.k
    """


def check_foreign_key(
    con: duckdb.DuckDBPyConnection, child: str, fk: str, parent: str, pk: str
) -> ForeignKeyCheck:
    """Integrity (source and release), join-count ratio and CardinalityShapeSimilarity."""
    out = ForeignKeyCheck(child=f"{child}.{fk}", parent=f"{parent}.{pk}")
    for catalog in (SRC, REL):
        types_child = column_types(con, catalog, child)
        types_parent = column_types(con, catalog, parent)
        if fk not in types_child or pk not in types_parent:
            side = "source" if catalog == SRC else "release"
            return out.model_copy(update={"error": f"key column missing from the {side}"})
    n_src, ok_src, join_src = _side(con, SRC, child, fk, parent, pk)
    n_rel, ok_rel, join_rel = _side(con, REL, child, fk, parent, pk)
    out.child_rows_src, out.child_rows_rel = n_src, n_rel
    out.integrity_src = ok_src / n_src if n_src else 1.0
    out.integrity_rel = ok_rel / n_rel if n_rel else 1.0
    out.join_rows_src, out.join_rows_rel = join_src, join_rel
    if join_src:
        out.join_count_ratio = join_rel / join_src
    else:
        out.join_count_ratio = 1.0 if join_rel == 0 else None
    ks = ks_statistic(
        con,
        _children_per_parent(SRC, child, fk, parent, pk),
        _children_per_parent(REL, child, fk, parent, pk),
    )
    out.cardinality_shape = ks_complement(ks.d)
    return out


def relational_section(
    con: duckdb.DuckDBPyConnection, policy: Policy, manifest: TransformManifest
) -> RelationalSection:
    """Every foreign key the policy declares, plus the manifest's pseudonym collisions."""
    present = set(catalog_tables(con, SRC))
    checks: list[ForeignKeyCheck] = []
    for child, spec in policy.tables.items():
        for fk, target in spec.foreign_keys.items():
            parent, _, pk = target.partition(".")
            if child not in present or parent not in present:
                checks.append(
                    ForeignKeyCheck(
                        child=f"{child}.{fk}", parent=target, error="table missing from the source"
                    )
                )
                continue
            checks.append(check_foreign_key(con, child, fk, parent, pk))
    integrities = [c.integrity_rel for c in checks if c.integrity_rel is not None]
    ratios = [c.join_count_ratio for c in checks if c.join_count_ratio is not None]
    shapes = [c.cardinality_shape for c in checks if c.cardinality_shape is not None]
    return RelationalSection(
        foreign_keys=checks,
        pseudonym_collisions=manifest.pseudonym_collisions,
        min_integrity_rel=min(integrities) if integrities else None,
        worst_join_count_ratio=max(ratios, key=lambda r: abs(r - 1.0)) if ratios else None,
        cardinality_shape_mean=sum(shapes) / len(shapes) if shapes else None,
    )

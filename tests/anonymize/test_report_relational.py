"""Relational integrity on tiny warehouses: an identical release keeps everything, a release
that drops a parent loses integrity and join rows (exact counts), drifted keys still match once
normalized, source orphans are reported, and collisions come from the manifest."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.relational import relational_section
from benchforge.anonymize.transform.models import TransformManifest

PARENTS = ["ACC-1", "ACC-2", "ACC-3", "ACC-4", "ACC-5"]
# children per parent: 3, 1, 4, 0, 2 -> ten child rows, plus two NULL keys
CHILD_KEYS: list[str | None] = [
    "ACC-1",
    "ACC-1",
    "ACC-1",
    "ACC-2",
    "ACC-3",
    "ACC-3",
    "ACC-3",
    "ACC-3",
    "ACC-5",
    "ACC-5",
    None,
    None,
]


def catalogs(tmp_path: Path, src: Sequence[str], rel: Sequence[str]) -> duckdb.DuckDBPyConnection:
    for name, statements in (("src", src), ("rel", rel)):
        c = duckdb.connect(str(tmp_path / f"{name}.duckdb"))
        c.execute("CREATE SCHEMA raw")
        for s in statements:
            c.execute(s)
        c.close()
    con = duckdb.connect()
    con.execute(f"ATTACH '{tmp_path / 'src.duckdb'}' AS src (READ_ONLY)")
    con.execute(f"ATTACH '{tmp_path / 'rel.duckdb'}' AS rel (READ_ONLY)")
    return con


def _lit(v: Any) -> str:
    return "NULL" if v is None else "'" + str(v).replace("'", "''") + "'"


def warehouse(parents: Sequence[str], child_keys: Sequence[str | None]) -> list[str]:
    return [
        "CREATE TABLE raw.accounts (account_id VARCHAR, tier VARCHAR)",
        "INSERT INTO raw.accounts VALUES " + ", ".join(f"({_lit(p)}, 'gold')" for p in parents),
        "CREATE TABLE raw.contacts (contact_id VARCHAR, account_id VARCHAR)",
        "INSERT INTO raw.contacts VALUES "
        + ", ".join(f"('C-{i}', {_lit(k)})" for i, k in enumerate(child_keys)),
    ]


POLICY = Policy.model_validate(
    {
        "domain": "test",
        "tables": {
            "accounts": {
                "primary_key": "account_id",
                "columns": {"account_id": "pseudonymize", "tier": "keep"},
            },
            "contacts": {
                "primary_key": "contact_id",
                "foreign_keys": {"account_id": "accounts.account_id"},
                "columns": {"contact_id": "pseudonymize", "account_id": "pseudonymize"},
            },
        },
    }
)


def manifest(collisions: int = 0) -> TransformManifest:
    return TransformManifest(policy_sha256="0" * 64, tables={}, pseudonym_collisions=collisions)


def brute_shape(src_counts: Sequence[int], rel_counts: Sequence[int]) -> float:
    """KSComplement of two lists of children-per-parent counts, in plain Python."""
    d = 0.0
    for v in sorted(set(src_counts) | set(rel_counts)):
        fa = sum(x <= v for x in src_counts) / len(src_counts)
        fb = sum(x <= v for x in rel_counts) / len(rel_counts)
        d = max(d, abs(fa - fb))
    return 1 - d


def test_identical_release_keeps_integrity(tmp_path: Path) -> None:
    stmts = warehouse(PARENTS, CHILD_KEYS)
    con = catalogs(tmp_path, stmts, stmts)
    section = relational_section(con, POLICY, manifest())
    (fk,) = section.foreign_keys
    assert (fk.child, fk.parent) == ("contacts.account_id", "accounts.account_id")
    assert fk.child_rows_src == fk.child_rows_rel == 10  # NULL keys are not counted
    assert fk.integrity_src == fk.integrity_rel == 1.0
    assert fk.join_rows_src == fk.join_rows_rel == 10
    assert fk.join_count_ratio == 1.0 and fk.cardinality_shape == 1.0
    assert section.pseudonym_collisions == 0


def test_dropped_parent_breaks_integrity_and_joins(tmp_path: Path) -> None:
    # the release lost ACC-3 (four children become orphans)
    con = catalogs(
        tmp_path,
        warehouse(PARENTS, CHILD_KEYS),
        warehouse([p for p in PARENTS if p != "ACC-3"], CHILD_KEYS),
    )
    (fk,) = relational_section(con, POLICY, manifest()).foreign_keys
    assert fk.integrity_src == 1.0
    assert fk.integrity_rel == pytest.approx(6 / 10)
    assert (fk.join_rows_src, fk.join_rows_rel) == (10, 6)
    assert fk.join_count_ratio == pytest.approx(0.6)
    counts = Counter(k for k in CHILD_KEYS if k)
    src_counts = [counts[p] for p in PARENTS]
    rel_counts = [counts[p] for p in PARENTS if p != "ACC-3"]
    assert fk.cardinality_shape == pytest.approx(brute_shape(src_counts, rel_counts))
    assert fk.cardinality_shape is not None and fk.cardinality_shape < 1.0


def test_drifted_keys_match_after_normalization(tmp_path: Path) -> None:
    drifted = [
        None if k is None else (f"  {k.lower()} " if i % 2 else k) for i, k in enumerate(CHILD_KEYS)
    ]
    con = catalogs(tmp_path, warehouse(PARENTS, drifted), warehouse(PARENTS, drifted))
    (fk,) = relational_section(con, POLICY, manifest()).foreign_keys
    assert fk.integrity_rel == 1.0 and fk.join_rows_rel == 10


def test_duplicate_parent_rows_count_in_joins(tmp_path: Path) -> None:
    # an exact duplicate parent row in the release doubles its children's join rows
    con = catalogs(
        tmp_path, warehouse(PARENTS, CHILD_KEYS), warehouse([*PARENTS, "ACC-1"], CHILD_KEYS)
    )
    (fk,) = relational_section(con, POLICY, manifest()).foreign_keys
    assert fk.integrity_rel == 1.0
    assert fk.join_rows_rel == 13 and fk.join_count_ratio == pytest.approx(1.3)


def test_source_orphans_are_reported_on_both_sides(tmp_path: Path) -> None:
    keys = [*CHILD_KEYS, "ACC-9"]  # an orphan on the source already
    con = catalogs(tmp_path, warehouse(PARENTS, keys), warehouse(PARENTS, keys))
    section = relational_section(con, POLICY, manifest(collisions=3))
    (fk,) = section.foreign_keys
    assert fk.integrity_src == pytest.approx(10 / 11) and fk.integrity_rel == fk.integrity_src
    assert section.pseudonym_collisions == 3


def test_missing_key_column_in_release_is_an_error(tmp_path: Path) -> None:
    rel = warehouse(PARENTS, CHILD_KEYS)
    rel.append("ALTER TABLE raw.contacts DROP COLUMN account_id")
    con = catalogs(tmp_path, warehouse(PARENTS, CHILD_KEYS), rel)
    (fk,) = relational_section(con, POLICY, manifest()).foreign_keys
    assert fk.error is not None and "release" in fk.error
    assert fk.integrity_rel is None

"""Manifest and row-count checks: anomaly rows exist, are listed once and declared by the spec;
row counts agree with ``manifest.json`` and with rows x scale."""

from __future__ import annotations

from benchforge.synthesis.validation.sqltext import MANIFEST_TABLE, lit, q, raw
from benchforge.synthesis.validation.suite.builder import PlanBuilder


def manifest_checks(b: PlanBuilder) -> None:
    t = b.name
    key = f"CAST(t.{q(b.pk)} AS VARCHAR)"
    missing = b.metric(
        "scalar",
        f"(SELECT count(*) FROM {MANIFEST_TABLE} a WHERE a.table_name = {lit(t)} "
        f"AND NOT EXISTS (SELECT 1 FROM {raw(t)} t WHERE {key} = a.row_key))",
    )
    b.zero_count("manifest_rows_exist", None, f"every manifest row_key of {t} is a {b.pk}", missing)
    repeated = b.metric(
        "scalar",
        f"(SELECT count(*) FROM (SELECT column_name, row_key FROM {MANIFEST_TABLE} "
        f"WHERE table_name = {lit(t)} GROUP BY ALL HAVING count(*) > 1))",
    )
    b.zero_count(
        "manifest_no_duplicates",
        None,
        f"no {t} row is listed twice for the same column",
        repeated,
    )
    declared = [f"{c}|{s.kind}" for c, ss in b.stressors.items() for s in ss]
    if b.dup:
        declared.append("|duplicate_current")
    allowed = ", ".join(lit(d) for d in declared) or "NULL"
    undeclared = b.count_manifest_where(
        f"NOT coalesce(coalesce(column_name, '') || '|' || kind IN ({allowed}), false)"
    )
    b.zero_count(
        "manifest_declared",
        None,
        f"every manifest row of {t} belongs to a stressor the spec declares",
        undeclared,
    )


def row_count_checks(b: PlanBuilder) -> None:
    info = b.generation
    if info is None:
        return
    n = b.count_rows()
    t = b.name
    if t in info.table_rows:
        rows = float(info.table_rows[t])
        b.aggregate(
            "row_count_matches_generation_manifest",
            None,
            f"{t} has the row count manifest.json reports",
            "count",
            lambda m: None if m[n] is None else (float(m[n] or 0), rows, rows),
        )
    if not b.table.scd and not b.table.derived_sql:
        want = float(b.table.row_count(info.scale))
        b.aggregate(
            "row_count_matches_spec",
            None,
            f"{t} has rows x scale = {int(want)} rows",
            "count",
            lambda m: None if m[n] is None else (float(m[n] or 0), want, want),
        )
    expected = float(info.anomaly_counts.get(t, 0))
    anomalies = b.count_manifest_where("TRUE")
    b.aggregate(
        "manifest_matches_generation_manifest",
        None,
        f"anomalies.parquet has as many {t} rows as manifest.json counts",
        "count",
        lambda m: None if m[anomalies] is None else (m[anomalies] or 0.0, expected, expected),
    )

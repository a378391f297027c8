"""Characterization test: the expectation suite derived from each domain spec stays the same.

The snapshot (``tests/fixtures/suite_snapshot.json``) was taken from the suite builder before
generator facts moved onto the generator models. For the mini fixture domain and every shipped
domain, each table's plan is serialized in full: every row check (expectation type, kwargs, meta,
description), every aggregate check (with its bounds evaluated on fixed metric values), the
metrics' SQL, the helper columns and the setup SQL. The fixture keeps a SHA-256 digest per
domain, table and part (the full text is ~2 MB); a failure names the part that changed.

After an intended change: ``BENCHFORGE_UPDATE_SNAPSHOT=1 pytest <this file>`` rewrites the
digests. To see what changed, set ``BENCHFORGE_SNAPSHOT_DUMP=<file>`` before and after the change
(it writes the full serialized suites there) and diff the two files.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchforge.synthesis.spec.loader import load_domain, load_spec, shipped_domains
from benchforge.synthesis.spec.models import DomainSpec
from benchforge.synthesis.validation.suite import (
    GenerationInfo,
    TablePlan,
    build_plan,
    expected_columns,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
SNAPSHOT = FIXTURES / "suite_snapshot.json"
DOMAINS = ["mini", *shipped_domains()]


def _spec(domain: str) -> DomainSpec:
    return load_spec(FIXTURES / "mini_domain.yaml") if domain == "mini" else load_domain(domain)


def _metric_values(plan: TablePlan) -> dict[str, float | None]:
    """Distinct, deterministic observed values: m0 -> 1000, m1 -> 1003, ..."""
    return {name: 1000.0 + 3 * i for i, name in enumerate(plan.metrics)}


def _plan_record(plan: TablePlan) -> dict[str, Any]:
    values = _metric_values(plan)
    return {
        "primary_key": plan.primary_key,
        "source": plan.source,
        "rows_template": plan.rows_template,
        "setup": plan.setup,
        "cleanup": plan.cleanup,
        "fetch": plan.fetch,
        "metrics": {k: list(v) for k, v in plan.metrics.items()},
        "row_checks": [
            {
                "check": r.check,
                "table": r.table,
                "column": r.column,
                "expected": r.expected,
                "label": r.label,
                "class": type(r.expectation).__name__,
                "configuration": r.expectation.configuration.to_json_dict(),
            }
            for r in plan.row_checks
        ],
        "aggregate_checks": [
            {
                "check": a.check,
                "table": a.table,
                "column": a.column,
                "description": a.description,
                "stat": a.stat,
                "label": a.label,
                "evaluated": None if (e := a.evaluate(values)) is None else [repr(x) for x in e],
            }
            for a in plan.aggregate_checks
        ],
    }


def suite_snapshot(domain: str) -> dict[str, Any]:
    spec = _spec(domain)
    types = {t.name: expected_columns(spec, t) for t in spec.tables}
    generation = GenerationInfo(
        scale=1.0,
        table_rows={t.name: 100 + i for i, t in enumerate(spec.tables)},
        anomaly_counts={t.name: 7 + i for i, t in enumerate(spec.tables)},
    )
    out: dict[str, Any] = {}
    for table in spec.tables:
        plan = build_plan(spec, table, types, generation)
        record = _plan_record(plan)
        # JSON round trip: tuples become lists, datetimes strings, as in the stored snapshot.
        out[table.name] = json.loads(json.dumps(record, default=str))
    return out


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def digests(snapshot: dict[str, Any]) -> dict[str, dict[str, str]]:
    """table -> part -> digest, plus the number of checks per table (readable in the fixture)."""
    out: dict[str, dict[str, str]] = {}
    for table, record in snapshot.items():
        out[table] = {part: _digest(value) for part, value in record.items()}
        out[table]["n_checks"] = (
            f"{len(record['row_checks'])} row, {len(record['aggregate_checks'])} aggregate"
        )
    return out


@pytest.fixture(scope="module")
def current() -> dict[str, dict[str, Any]]:
    snapshots = {d: suite_snapshot(d) for d in DOMAINS}
    dump = os.environ.get("BENCHFORGE_SNAPSHOT_DUMP")
    if dump:
        Path(dump).write_text(json.dumps(snapshots, indent=1, sort_keys=True) + "\n")
    if os.environ.get("BENCHFORGE_UPDATE_SNAPSHOT"):
        data = {d: digests(s) for d, s in snapshots.items()}
        SNAPSHOT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return snapshots


@pytest.mark.parametrize("domain", DOMAINS)
def test_suite_matches_snapshot(domain: str, current: dict[str, dict[str, Any]]) -> None:
    expected = json.loads(SNAPSHOT.read_text())[domain]
    got = digests(current[domain])
    assert sorted(got) == sorted(expected)
    for table, parts in expected.items():
        for part, digest in parts.items():
            assert got[table][part] == digest, f"{domain}.{table}: {part} changed"


def test_snapshot_covers_every_expectation_kind(current: dict[str, dict[str, Any]]) -> None:
    """The snapshot exercises the generator-derived checks, not only keys and stressors."""
    checks = {
        c["check"]
        for tables in current.values()
        for plan in tables.values()
        for c in [*plan["row_checks"], *plan["aggregate_checks"]]
    }
    for check in (
        "generator_range",
        "generator_values_in_set",
        "categorical_share",
        "boolean_p_true",
        "distribution_median_share",
        "distribution_mean",
        "generator_date_range",
        "date_not_before",
        "parent_copy_matches",
        "lookup_copy_matches",
        "null_rate",
        "nulls_match_manifest",
    ):
        assert check in checks, check

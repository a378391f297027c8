"""Assemble the release report: every section in turn (timed), then the verdict.

The caller owns the connection: the source warehouse attached READ_ONLY as ``src`` and the
release as ``rel`` (row i of each released table is the transform of row i of its source). The
benchmark section is not run here: the flow builds the gold dbt project and re-scores tasks on
the written release, then calls ``report.with_benchmark(section, thresholds)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

import duckdb

from benchforge.anonymize.policy.loader import LoadedPolicy
from benchforge.anonymize.report.fidelity import REL, catalog_tables, table_ref
from benchforge.anonymize.report.fidelity import fidelity_section as _fidelity
from benchforge.anonymize.report.models import ReleaseReport
from benchforge.anonymize.report.privacy import privacy_section
from benchforge.anonymize.report.relational import relational_section
from benchforge.anonymize.report.thresholds import evaluate_thresholds
from benchforge.anonymize.report.utility import utility_section
from benchforge.anonymize.transform.models import TransformManifest
from benchforge.core.errors import BenchforgeError
from benchforge.core.progress import ProgressEvent, StageDone


class ReportError(BenchforgeError):
    """The report cannot be built (the catalogs it compares are not attached)."""


def _require_catalogs(con: duckdb.DuckDBPyConnection) -> None:
    names = {
        str(r[0]) for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()
    }
    missing = [c for c in ("src", "rel") if c not in names]
    if missing:
        raise ReportError(
            f"the report compares catalogs 'src' (source warehouse) and 'rel' (release); "
            f"not attached: {', '.join(missing)}"
        )


def build_report(
    con: duckdb.DuckDBPyConnection,
    policy: LoadedPolicy,
    manifest: TransformManifest,
    *,
    dataset: str,
    domain: str,
    sample_rows: int = 5000,
    seed: int = 0,
    on_progress: Callable[[ProgressEvent], None] | None = None,
) -> ReleaseReport:
    """Fidelity, relational integrity, utility and privacy of the release, with the policy's
    thresholds evaluated (the benchmark threshold fails as "not run" until the flow adds it)."""
    _require_catalogs(con)
    p = policy.policy
    seconds: dict[str, float] = {}
    started = time.perf_counter()

    def done(stage: str, since: float) -> None:
        seconds[stage] = round(time.perf_counter() - since, 3)
        if on_progress is not None:
            on_progress(StageDone(stage=f"report.{stage}"))

    t = time.perf_counter()
    fidelity = _fidelity(con, p)
    done("fidelity", t)
    t = time.perf_counter()
    relational = relational_section(con, p, manifest)
    done("relational", t)
    t = time.perf_counter()
    utility = utility_section(con, p, seed=seed)
    done("utility", t)
    t = time.perf_counter()
    privacy = privacy_section(con, p, manifest, sample_rows=sample_rows, seed=seed)
    done("privacy", t)

    tables = catalog_tables(con, REL)
    rows = 0
    for table in tables:
        row = con.execute(f"SELECT count(*) FROM {table_ref(REL, table)}").fetchone()
        rows += int(row[0]) if row else 0
    report = ReleaseReport(
        dataset=dataset,
        domain=domain,
        policy=policy.source,
        policy_sha256=policy.sha256,
        created_at=datetime.now(UTC),
        rows=rows,
        tables=len(tables),
        fidelity=fidelity,
        relational=relational,
        utility=utility,
        privacy=privacy,
        benchmark=None,
        thresholds=[],
        passed=False,
    )
    t = time.perf_counter()
    results = evaluate_thresholds(report, p.thresholds)
    seconds["thresholds"] = round(time.perf_counter() - t, 3)
    seconds["total"] = round(time.perf_counter() - started, 3)
    return report.model_copy(
        update={
            "thresholds": results,
            "passed": all(r.passed for r in results),
            "seconds": seconds,
        }
    )

"""A release: a dataset anonymized under a policy, with its report, staged before it is published.

The steps run in a staging folder the caller owns (:mod:`benchforge.core.publish`): the policy is
checked against the source warehouse and the secret read *before* anything is written; then the
transform pass writes ``warehouse.duckdb``, the tables are exported to Parquet, the report is
computed over both warehouses, and ``manifest.json`` describes the release. The source's
``anomalies.parquet`` is never copied: it names original row keys. ``dataset.json`` is written by
:func:`write_release_record` only once the caller has decided the release may be published
(thresholds, the benchmark check), so a refused release never looks like a dataset.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb
from pydantic import BaseModel, Field

from benchforge.anonymize.policy.check import check_policy
from benchforge.anonymize.policy.loader import LoadedPolicy
from benchforge.anonymize.policy.secret import read_secret
from benchforge.anonymize.report.build import build_report
from benchforge.anonymize.report.html import write_report
from benchforge.anonymize.report.models import ReleaseReport
from benchforge.anonymize.transform.models import TransformManifest
from benchforge.anonymize.transform.run import anonymize_warehouse
from benchforge.core.artifacts import LAYOUT
from benchforge.core.errors import BenchforgeError
from benchforge.core.progress import ProgressEvent
from benchforge.core.records import DatasetRecord, ReleaseStamp
from benchforge.core.source_schemas import add_source_views, read_source_schemas

WAREHOUSE = "warehouse.duckdb"
PARQUET_DIR = "parquet"
MANIFEST = "manifest.json"
REPORT_DIR = "report"


class ReleaseError(BenchforgeError):
    """The release could not be built; nothing was published."""


class ReleaseRefused(BenchforgeError):
    """The release was built but fails its policy's thresholds; nothing was published. The
    report (with the failing thresholds first) is kept at ``report_dir``."""

    def __init__(self, report: ReleaseReport, report_dir: Path | None):
        self.report = report
        self.report_dir = report_dir
        failing = [t for t in report.thresholds if not t.passed]
        lines = "\n".join(f"  {t.name}: {t.detail}" for t in failing)
        where = f"\nreport: {report_dir}" if report_dir else ""
        super().__init__(f"release refused: {len(failing)} threshold(s) failed\n{lines}{where}")


class ReleasedTable(BaseModel):
    rows: int
    columns: int
    parquet_sha256: str
    parquet_bytes: int


class ReleaseManifest(BaseModel):
    """``manifest.json`` of a release: what was released, from which dataset, under which
    policy; the transform's counts (no original value)."""

    kind: str = "anonymized-release"
    domain: str
    source_version: str
    policy: str
    policy_sha256: str
    duckdb_version: str
    tables: dict[str, ReleasedTable]
    transform: TransformManifest
    source_schemas: list[str] = Field(
        default_factory=list,
        description=(
            "The source's schemas of views over raw, re-created in the release "
            "(benchforge.core.source_schemas); written only when there are some."
        ),
    )

    @property
    def total_rows(self) -> int:
        return sum(t.rows for t in self.tables.values())

    def to_json(self) -> str:
        """``manifest.json``'s text; a release with no source schemas writes no
        ``source_schemas`` field (its manifest reads as it did before the field existed)."""
        exclude = None if self.source_schemas else {"source_schemas"}
        return self.model_dump_json(indent=2, exclude=exclude) + "\n"


class StagedRelease(BaseModel):
    folder: Path
    source: DatasetRecord
    manifest: ReleaseManifest
    report: ReleaseReport
    seconds: dict[str, float]


def source_record(source_dir: Path) -> DatasetRecord:
    path = LAYOUT.dataset_record_file(source_dir)
    try:
        return DatasetRecord.model_validate_json(path.read_text())
    except OSError:
        raise ReleaseError(f"{source_dir} is not a dataset (no {path.name})") from None
    except ValueError as err:
        raise ReleaseError(f"{path}: not a dataset record: {err}") from None


def source_version(record: DatasetRecord) -> str:
    checksums = "|".join(f"{k}={v}" for k, v in sorted(record.table_checksums.items()))
    return hashlib.sha256(checksums.encode()).hexdigest()[:16]


def preflight(source_dir: Path, loaded: LoadedPolicy) -> tuple[DatasetRecord, bytes]:
    """Everything that can refuse a release before a byte is written: the source is a dataset,
    the secret is set, the policy fits the warehouse (every column ruled, keys kept joinable,
    no PII kept, constraints hold on the source)."""
    record = source_record(source_dir)
    warehouse = source_dir / WAREHOUSE
    if not warehouse.is_file():
        raise ReleaseError(f"{source_dir} has no {WAREHOUSE}")
    secret = read_secret(loaded)
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{warehouse}' AS src (READ_ONLY)")
        check_policy(loaded, con, "src", dataset_domain=record.domain)
    return record, secret


def source_schemas(source_dir: Path) -> list[str]:
    """The schemas of views over ``raw`` the source's ``manifest.json`` lists (an imported
    dataset's ``--source-schema``, or a release's of one), re-created in the release."""
    manifest = source_dir / MANIFEST
    if not manifest.is_file():
        return []
    try:
        return read_source_schemas(manifest)
    except ValueError as err:
        raise ReleaseError(str(err)) from None


GOLD_PROJECT_FILE = "dbt_project.yml"
BENCHMARK_SWITCH = "thresholds.require_benchmark"


def benchmark_preflight(domain: str, loaded: LoadedPolicy, gold_repo: Path) -> str | None:
    """Whether the benchmark check (the domain's gold dbt project built on the release) can run,
    decided before the transform: None when it can; the reason it will be skipped when the
    policy does not require it; a :class:`ReleaseError` naming the policy field that turns it
    off when the policy requires it and there is no project."""
    if (gold_repo / GOLD_PROJECT_FILE).is_file():
        return None
    problem = (
        f"no gold dbt project for domain '{domain}' ({gold_repo / GOLD_PROJECT_FILE} is missing)"
    )
    if not loaded.policy.thresholds.require_benchmark:
        return f"{problem}; the policy does not require the check ({BENCHMARK_SWITCH}: false)"
    raise ReleaseError(
        f"{problem}: the benchmark check (gold build + task verification) cannot run, so the "
        f"release would be refused. Add the project there, or set `{BENCHMARK_SWITCH}: false` "
        f"in the policy ({loaded.source}) to publish without the check. Nothing was written."
    )


def stage_release(
    source_dir: Path,
    loaded: LoadedPolicy,
    staging: Path,
    *,
    on_progress: Callable[[ProgressEvent], None] | None = None,
    sample_rows: int = 5000,
    seed: int = 0,
) -> StagedRelease:
    """Builds the release in ``staging`` (created) and its report; writes no ``dataset.json``."""
    record, secret = preflight(source_dir, loaded)
    schemas = source_schemas(source_dir)
    seconds: dict[str, float] = {}
    staging.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    transform = anonymize_warehouse(
        source_dir / WAREHOUSE, staging / WAREHOUSE, loaded.policy, secret, on_progress=on_progress
    )
    try:
        add_source_views(staging / WAREHOUSE, schemas)
    except duckdb.Error as err:
        raise ReleaseError(
            f"the source's views (source_schemas {schemas} of {source_dir / MANIFEST}) cannot "
            f"be re-created in the release: {str(err).strip().splitlines()[0]}"
        ) from None
    seconds["transform"] = time.perf_counter() - started
    started = time.perf_counter()
    tables = export_parquet(staging)
    seconds["parquet"] = time.perf_counter() - started
    manifest = ReleaseManifest(
        domain=record.domain,
        source_version=source_version(record),
        policy=loaded.source,
        policy_sha256=loaded.sha256,
        duckdb_version=duckdb.__version__,
        tables=tables,
        transform=transform,
        source_schemas=schemas,
    )
    (staging / MANIFEST).write_text(manifest.to_json())
    started = time.perf_counter()
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{source_dir / WAREHOUSE}' AS src (READ_ONLY)")
        con.execute(f"ATTACH '{staging / WAREHOUSE}' AS rel (READ_ONLY)")
        report = build_report(
            con,
            loaded,
            transform,
            dataset=str(source_dir),
            domain=record.domain,
            sample_rows=sample_rows,
            seed=seed,
        )
    seconds["report"] = time.perf_counter() - started
    write_report(report, staging / REPORT_DIR)
    return StagedRelease(
        folder=staging, source=record, manifest=manifest, report=report, seconds=seconds
    )


def export_parquet(folder: Path) -> dict[str, ReleasedTable]:
    """``parquet/<table>.parquet`` for every table of the release warehouse (zstd, as the
    synthesizer writes them), with checksums."""
    out = folder / PARQUET_DIR
    out.mkdir(exist_ok=True)
    tables: dict[str, ReleasedTable] = {}
    with duckdb.connect(str(folder / WAREHOUSE), read_only=True) as con:
        names = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'raw' ORDER BY table_name"
            ).fetchall()
        ]
        for name in names:
            path = out / f"{name}.parquet"
            con.execute(f"COPY raw.\"{name}\" TO '{path}' (FORMAT parquet, COMPRESSION zstd)")
            rows = con.execute(f'SELECT count(*) FROM raw."{name}"').fetchone()
            cols = con.execute(
                "SELECT count(*) FROM information_schema.columns "
                "WHERE table_schema = 'raw' AND table_name = ?",
                [name],
            ).fetchone()
            tables[name] = ReleasedTable(
                rows=int(rows[0]) if rows else 0,
                columns=int(cols[0]) if cols else 0,
                parquet_sha256=_sha256(path),
                parquet_bytes=path.stat().st_size,
            )
    return tables


def write_release_record(staged: StagedRelease, location: str) -> DatasetRecord:
    """``dataset.json`` of the release, written last into the staging folder: the release keeps
    its source's domain, scale and seed (so tasks find it) and says what it was made from."""
    # the report may have gained its benchmark section since staging
    write_report(staged.report, staged.folder / REPORT_DIR)
    src = staged.source
    record = DatasetRecord(
        domain=src.domain,
        seed=src.seed,
        scale=src.scale,
        created_at=datetime.now(UTC),
        location=location,
        total_rows=staged.manifest.total_rows,
        anomaly_total=src.anomaly_total,
        table_checksums={n: t.parquet_sha256 for n, t in staged.manifest.tables.items()},
        validation_success=None,
        validation_expectations=0,
        release=ReleaseStamp(
            source_version=staged.manifest.source_version,
            policy=staged.manifest.policy,
            policy_sha256=staged.manifest.policy_sha256,
            report_passed=staged.report.passed,
        ),
    )
    LAYOUT.dataset_record_file(staged.folder).write_text(record.model_dump_json(indent=2) + "\n")
    return record


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()

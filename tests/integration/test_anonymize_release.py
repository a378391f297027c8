"""The ``anonymize`` flow end to end on a synthesized crm dataset treated as the real input: a
release that passes its policy is published with its report and works as a benchmark dataset;
a bad policy or a missing secret fails before anything is written; a release below a threshold
is refused and nothing is published."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import boto3
import duckdb
import pytest
import yaml

from benchforge.anonymize.policy.loader import load_policy
from benchforge.anonymize.policy.models import DEFAULT_SECRET_ENV, PolicyError
from benchforge.anonymize.release import ReleaseRefused
from benchforge.anonymize.report.models import ReleaseReport
from benchforge.core.records import DatasetRecord
from benchforge.flows.anonymize import anonymize
from benchforge.synthesis.dataset import build_dataset
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

SECRET = "integration-test-secret-0123456789abcdef"
# The README's commands (tests/integration/test_readme.py checks they are covered here).
EXPORT_SECRET = (
    "export BENCHFORGE_ANON_SECRET=\"$(python -c 'import secrets; print(secrets.token_hex(32))')\""
)
ANONYMIZE = (
    "benchforge anonymize crm --scale 0.1 --out out/crm-release "
    "--verify-suite task_specs/de-crm/crm-impl-full"
)
POLICY_CHECK = "benchforge policy check artifacts/datasets/crm/scale-0.1/seed-7 --policy crm"
POLICY_DRAFT = "benchforge policy draft artifacts/datasets/crm/scale-0.1/seed-7 > draft-policy.yaml"
POLICY_SCHEMA = "benchforge policy schema > policy.schema.json"


@pytest.fixture(scope="module")
def small_crm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """crm at scale 0.02, for the tests about publishing and refusing rather than about the
    shipped policy's figures: at the README's scale 0.1 (its release test) a few hundred leads
    per country and industry are what keep the linkage and singling-out risks under their
    thresholds."""
    out = tmp_path_factory.mktemp("anon-small") / "crm"
    build_dataset("crm", scale=0.02, seed=7, out=str(out), validate=False)
    return out


def _lenient(tmp_path: Path, **thresholds: object) -> Path:
    """The shipped crm policy with the privacy figures that a dataset this small cannot meet
    (linkage, attacks, re-identification at scale 0.02) not gated, and ``thresholds`` set."""
    shipped = yaml.safe_load(Path(load_policy("crm").source).read_text())
    gates = shipped.setdefault("thresholds", {})
    gates.update(
        max_linkage_rate=1.0, max_attack_risk=1.0, max_reidentification_rate=1.0, require_k=False
    )
    gates.update(thresholds)
    path = tmp_path / "lenient.yaml"
    path.write_text(yaml.safe_dump(shipped))
    return path


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv(DEFAULT_SECRET_ENV, SECRET)
    yield SECRET


def _originals(crm: Path, table: str, column: str) -> set[str]:
    with duckdb.connect(str(crm / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute(f"SELECT DISTINCT {column} FROM raw.{table} WHERE {column} IS NOT NULL")
        return {str(r[0]) for r in rows.fetchall()}


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


def test_readme_release_commands(tmp_path: Path) -> None:
    """The README's anonymization commands, run as written: a crm release is published with its
    report, works as a benchmark dataset (gold build, one task verified) and leaks nothing."""
    env = {"BENCHFORGE_ARTIFACT_ROOT": str(tmp_path / "artifacts")}
    env.pop(DEFAULT_SECRET_ENV, None)
    result = _run(f"{EXPORT_SECRET} && {ANONYMIZE}", tmp_path, env)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    out = tmp_path / "out" / "crm-release"
    crm = tmp_path / "artifacts" / "datasets" / "crm" / "scale-0.1" / "seed-7"
    assert "release crm: " in result.stdout and str(out) in result.stdout
    assert "RELEASE PASSED" in result.stdout
    record = DatasetRecord.model_validate_json((out / "dataset.json").read_text())
    assert record.release is not None and record.release.report_passed
    assert record.domain == "crm" and record.scale == 0.1 and record.seed == 7
    # a dataset like any other: warehouse, Parquet, manifest, record; no anomaly manifest (it
    # names original row keys)
    for name in ("warehouse.duckdb", "manifest.json"):
        assert (out / name).is_file()
    assert not (out / "anomalies.parquet").exists()
    assert sorted(p.stem for p in (out / "parquet").glob("*.parquet")) == sorted(
        record.table_checksums
    )
    report = ReleaseReport.model_validate_json((out / "report" / "release-report.json").read_text())
    assert (out / "report" / "release-report.html").is_file()
    assert report.passed
    assert report.privacy.leaked_identifiers == 0
    assert report.privacy.identifiers_checked > 1000
    assert all(abs(fk.join_count_ratio - 1.0) < 1e-12 for fk in report.relational.foreign_keys)
    perturbed = [
        c.ks_complement
        for c in report.fidelity.columns
        if c.rule == "perturb" and c.ks_complement is not None
    ]
    assert len(perturbed) >= 10 and min(perturbed) >= 0.95
    assert report.privacy.linkage and all(
        0 < link.baseline < 0.01 and link.ratio == pytest.approx(link.rate / link.baseline)
        for link in report.privacy.linkage
    )
    bench = report.benchmark
    assert bench is not None and bench.passed and bench.gold_build_success
    assert bench.models > 40 and bench.tests > 100
    assert [t.task for t in bench.tasks] == ["de-crm/crm-impl-full@1"]
    assert bench.tasks[0].gold == 100.0 and bench.tasks[0].empty == 0.0
    # the identifiers really changed, consistently: no original email or account id survives,
    # and contacts join their accounts exactly as often as in the source
    orphans = (
        "SELECT count(*) FROM raw.contacts c LEFT JOIN raw.accounts a "
        "ON upper(trim(c.account_id)) = upper(trim(a.account_id)) WHERE a.account_id IS NULL"
    )
    with duckdb.connect(str(out / "warehouse.duckdb"), read_only=True) as con:
        emails = {r[0] for r in con.execute("SELECT email FROM raw.contacts").fetchall()}
        accounts = {r[0] for r in con.execute("SELECT account_id FROM raw.accounts").fetchall()}
        released_orphans = con.execute(orphans).fetchone()
    with duckdb.connect(str(crm / "warehouse.duckdb"), read_only=True) as con:
        source_orphans = con.execute(orphans).fetchone()
    assert not emails & _originals(crm, "contacts", "email")
    assert not accounts & _originals(crm, "accounts", "account_id")
    assert released_orphans == source_orphans

    # the policy commands of the README on the same dataset
    checked = _run(POLICY_CHECK, tmp_path, env)
    assert checked.returncode == 0, checked.stderr[-2000:]
    assert "ok for artifacts/datasets/crm/scale-0.1/seed-7" in checked.stdout
    drafted = _run(POLICY_DRAFT, tmp_path, env)
    assert drafted.returncode == 0, drafted.stderr[-2000:]
    draft = load_policy(str(tmp_path / "draft-policy.yaml")).policy
    assert set(draft.tables) == set(load_policy("crm").policy.tables)
    schema = _run(POLICY_SCHEMA, tmp_path, env)
    assert schema.returncode == 0
    assert json.loads((tmp_path / "policy.schema.json").read_text())["title"] == (
        "AnonymizationPolicy"
    )


def test_missing_secret_fails_before_anything_is_written(
    small_crm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DEFAULT_SECRET_ENV, raising=False)
    out = tmp_path / "release"
    with pytest.raises(PolicyError) as err:
        anonymize(dataset=str(small_crm), out=str(out), verify_suite="none")
    assert "crm.yaml" in str(err.value) and "secret_env" in str(err.value)
    assert DEFAULT_SECRET_ENV in str(err.value)
    assert not out.exists() and not list(tmp_path.iterdir())


def test_bad_policy_fails_before_anything_is_written(
    small_crm: Path, tmp_path: Path, secret: str
) -> None:
    shipped = yaml.safe_load(Path(load_policy("crm").source).read_text())
    shipped["tables"]["contacts"]["columns"]["email"] = "keep"  # PII kept
    del shipped["tables"]["accounts"]["columns"]["annual_revenue"]  # a column without a rule
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(shipped))
    out = tmp_path / "release"
    with pytest.raises(PolicyError) as err:
        anonymize(dataset=str(small_crm), policy=str(bad), out=str(out), verify_suite="none")
    message = str(err.value)
    assert str(bad) in message
    assert "tables.contacts.columns.email" in message
    assert "annual_revenue" in message
    assert not out.exists()


def test_release_below_a_threshold_is_refused_and_nothing_published(
    small_crm: Path, tmp_path: Path, secret: str
) -> None:
    strict = _lenient(tmp_path, max_linkage_rate=0.0)  # nothing can pass this
    out = tmp_path / "release"
    with pytest.raises(ReleaseRefused) as err:
        anonymize(dataset=str(small_crm), policy=str(strict), out=str(out), verify_suite="none")
    assert "linkage" in str(err.value)
    assert not out.exists()
    kept = tmp_path / "release.refused-report" / "release-report.json"
    refused = json.loads(kept.read_text())
    assert refused["passed"] is False


def test_release_to_s3(
    small_crm: Path,
    tmp_path: Path,
    secret: str,
    s3_server: str,
    s3_bucket: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Published record-last to an S3 prefix (moto over loopback HTTP), report included. (The
    benchmark check is off here, and the privacy figures a small dataset cannot meet: the
    README's release above builds the gold on a release of the README's scale.)"""
    monkeypatch.setenv("BENCHFORGE_S3_ENDPOINT_URL", s3_server)
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    policy = _lenient(tmp_path, require_benchmark=False)
    location = f"s3://{s3_bucket}/releases/crm"
    record = anonymize(
        dataset=str(small_crm), policy=str(policy), out=location, verify_suite="none"
    )
    assert record.location == location and record.release is not None
    assert record.release.report_passed
    s3 = boto3.client("s3", endpoint_url=s3_server)
    listed = s3.list_objects_v2(Bucket=s3_bucket, Prefix="releases/crm/")["Contents"]
    keys = {o["Key"] for o in listed}
    assert {
        "releases/crm/dataset.json",
        "releases/crm/warehouse.duckdb",
        "releases/crm/report/release-report.html",
        "releases/crm/parquet/accounts.parquet",
    } <= keys
    assert not any("anomalies" in k for k in keys)


def test_anonymize_bench_prints_its_figures(tmp_path: Path) -> None:
    # The README runs it at scale 5 against 0.5; here the same script at a small scale.
    result = _run(
        "python bench/anonymize.py --scale 0.1 --small-scale 0.01 --repeat 1 "
        f"--data {tmp_path / 'big'} --small-data {tmp_path / 'small'}",
        REPO_ROOT,
        {},
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    for figure in ("data pass / DuckDB floor", "peak RSS"):
        assert re.search(rf"{re.escape(figure)}[^\n]*\s+[0-9.]+\s+(<=|>=)", result.stdout), figure
    # the row-by-row baseline is a reference figure: printed, without a target
    baseline = re.search(r"data pass / row-by-row baseline[^\n]*\s+([0-9.]+)\n", result.stdout)
    assert baseline, result.stdout[-3000:]

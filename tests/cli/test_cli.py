"""The `benchforge` command end to end: real Prefect (ephemeral server), real S3 (moto server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import duckdb
import pytest

from benchforge.synthesis.spec import load_domain
from benchforge.synthesis.spec.generators import ForeignKeyGen
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROOT = REPO_ROOT


def benchforge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchforge.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=900,
        check=False,
    )


def checksums(dataset: Path) -> dict[str, str]:
    record = json.loads((dataset / "dataset.json").read_text())
    return dict(record["table_checksums"])


def test_help_explains_every_stage() -> None:
    top = benchforge("--help")
    assert top.returncode == 0
    for stage in ("synth", "spec", "pipeline", "settings"):
        assert stage in top.stdout
    synth = benchforge("synth", "--help")
    assert "--scale" in synth.stdout and "s3://" in synth.stdout and "anomalies" in synth.stdout


@pytest.fixture(scope="module")
def crm_scale1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("crm") / "scale1"
    result = benchforge("synth", "crm", "--scale", "1", "--seed", "7", "--out", str(out))
    assert result.returncode == 0, result.stderr[-4000:]
    assert "1,0" in result.stdout  # ~1 M rows reported
    return out


def test_synth_crm_scale1_writes_a_complete_dataset(crm_scale1: Path) -> None:
    out = crm_scale1
    for name in ("warehouse.duckdb", "anomalies.parquet", "manifest.json", "dataset.json"):
        assert (out / name).is_file(), name
    assert (out / "validation" / "results.json").is_file()
    assert any((out / "validation").rglob("*.html"))
    spec = load_domain("crm")
    assert {p.stem for p in (out / "parquet").glob("*.parquet")} == {t.name for t in spec.tables}
    con = duckdb.connect()
    con.execute(f"ATTACH '{out / 'warehouse.duckdb'}' AS wh (READ_ONLY)")
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() "
            "WHERE database_name = 'wh' AND schema_name = 'raw'"
        ).fetchall()
    }
    assert tables == {t.name for t in spec.tables}
    total = sum(
        json.loads((out / "manifest.json").read_text())["tables"][t]["rows"] for t in tables
    )
    assert 900_000 < total < 1_200_000


def test_clean_rows_have_no_orphans_and_manifest_matches_data(crm_scale1: Path) -> None:
    out = crm_scale1
    spec = load_domain("crm")
    con = duckdb.connect()
    con.execute(f"ATTACH '{out / 'warehouse.duckdb'}' AS wh (READ_ONLY)")
    con.execute(f"CREATE VIEW anomalies AS SELECT * FROM '{out / 'anomalies.parquet'}'")
    checked = 0
    for table in spec.tables:
        fks = dict(table.foreign_keys())
        for column, fk in fks.items():
            checked += 1
            assert isinstance(fk, ForeignKeyGen)
            parent = spec.table_map[fk.table]
            orphans = con.execute(
                f"""SELECT CAST(c.{table.primary_key} AS VARCHAR) FROM wh.raw.{table.name} c
                WHERE c.{column} IS NOT NULL AND c.{column} NOT IN
                  (SELECT {parent.primary_key} FROM wh.raw.{parent.name})"""
            ).fetchall()
            drifted = con.execute(
                f"""SELECT row_key FROM anomalies WHERE table_name = '{table.name}'
                AND column_name = '{column}' AND kind = 'key_drift'"""
            ).fetchall()
            assert sorted(orphans) == sorted(drifted), f"{table.name}.{column}"
        if table.scd:
            dup = con.execute(
                f"""SELECT count(*) FROM (SELECT {table.scd.entity_key} FROM wh.raw.{table.name}
                WHERE is_current GROUP BY 1 HAVING count(*) > 1)"""
            ).fetchone()
            listed = con.execute(
                f"""SELECT count(*) FROM anomalies WHERE table_name = '{table.name}'
                AND kind = 'duplicate_current'"""
            ).fetchone()
            assert dup == listed
    assert checked >= 20
    kinds = {r[0] for r in con.execute("SELECT DISTINCT kind FROM anomalies").fetchall()}
    assert kinds == {
        "missing_values",
        "outliers",
        "type_coercion",
        "duplicate_current",
        "currency_conflict",
        "timezone_mismatch",
        "key_drift",
    }
    manifest = json.loads((out / "manifest.json").read_text())
    total = con.execute("SELECT count(*) FROM anomalies").fetchone()
    assert total is not None and manifest["anomaly_total"] == total[0]


def test_same_seed_same_checksums_other_seed_differs(crm_scale1: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    result = benchforge(
        "synth",
        "crm",
        "--scale",
        "1",
        "--seed",
        "7",
        "--out",
        str(again),
        "--no-prefect",
        "--no-validate",  # the data is what must repeat; the fixture's run validated it
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert checksums(again) == checksums(crm_scale1)
    other = tmp_path / "other"
    result = benchforge(
        "synth",
        "crm",
        "--scale",
        "0.05",
        "--seed",
        "8",
        "--out",
        str(other),
        "--no-prefect",
        "--no-validate",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    mine, theirs = checksums(other), checksums(crm_scale1)
    assert all(mine[t] != theirs[t] for t in mine)


def test_synth_to_s3(s3_server: str, s3_bucket: str, tmp_path: Path) -> None:
    uri = f"s3://{s3_bucket}/datasets/crm-small"
    env = {"BENCHFORGE_S3_ENDPOINT_URL": s3_server}
    result = benchforge("synth", "crm", "--scale", "0.05", "--seed", "7", "--out", uri, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    s3 = boto3.client("s3", endpoint_url=s3_server)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=s3_bucket)["Contents"]}
    for name in (
        "warehouse.duckdb",
        "anomalies.parquet",
        "manifest.json",
        "dataset.json",
        "validation/results.json",
        "parquet/accounts.parquet",
    ):
        assert f"datasets/crm-small/{name}" in keys, name
    body = s3.get_object(Bucket=s3_bucket, Key="datasets/crm-small/dataset.json")["Body"].read()
    assert json.loads(body)["location"] == uri


def test_bad_input_gives_one_clear_line_and_writes_nothing(tmp_path: Path, s3_server: str) -> None:
    out = tmp_path / "never"
    unknown = benchforge("synth", "erp", "--out", str(out))
    assert unknown.returncode == 2
    assert "unknown domain 'erp'" in unknown.stderr and "Traceback" not in unknown.stderr
    broken = tmp_path / "broken.yaml"
    text = (ROOT / "tests" / "fixtures" / "mini_domain.yaml").read_text()
    broken.write_text(text.replace("table: users, fan_out: zipf", "table: people, fan_out: zipf"))
    bad_spec = benchforge("synth", str(broken), "--out", str(out))
    assert bad_spec.returncode == 2
    assert (
        f"{broken}: tables.accounts.columns.owner_id.generator: foreign key to unknown table "
        "'people'" in bad_spec.stderr
    )
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    unwritable = benchforge("synth", "crm", "--scale", "0.01", "--out", str(blocker / "sub"))
    assert unwritable.returncode == 2 and "not writable" in unwritable.stderr
    no_bucket = benchforge(
        "synth",
        "crm",
        "--scale",
        "0.01",
        "--out",
        "s3://no-such-bucket/x",
        env={"BENCHFORGE_S3_ENDPOINT_URL": s3_server},
    )
    assert no_bucket.returncode == 2
    assert "no-such-bucket" in no_bucket.stderr and "Traceback" not in no_bucket.stderr
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


def test_failed_generation_leaves_nothing_that_looks_complete(tmp_path: Path) -> None:
    broken = tmp_path / "sql.yaml"
    text = (ROOT / "tests" / "fixtures" / "mini_domain.yaml").read_text()
    broken.write_text(text.replace("round(amount * (1 - discount_pct), 2)", "round(amount * nope)"))
    out = tmp_path / "ds"
    result = benchforge("synth", str(broken), "--out", str(out), "--no-prefect")
    assert result.returncode == 2
    # caught before anything is generated: the expression is compiled on an empty table
    assert "tables.opportunities.columns." in result.stderr and "nope" in result.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [broken]


def test_failed_expectation_fails_the_run_naming_it(tmp_path: Path) -> None:
    spec = tmp_path / "strict.yaml"
    text = (ROOT / "tests" / "fixtures" / "mini_domain.yaml").read_text()
    # The generator draws ages from N(42, 11) but the spec now promises age >= 30.
    spec.write_text(
        text.replace("type: integer, min: 18, max: 80", "type: integer, min: 30, max: 80")
    )
    out = tmp_path / "ds"
    result = benchforge("synth", str(spec), "--out", str(out))
    assert result.returncode == 2
    assert "contacts" in result.stderr and "age" in result.stderr
    assert "min_max" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()

"""The shipped enterprise environment (task_specs/explore-enterprise/environment.yaml) at scale
0.1, and an anonymized enterprise release as input: every table read the clean way equals the
dataset's (within the recorded rounding and unit decimals), the naive readings of the noisy
tables are wrong, the derived tables agree with SQL over the dataset, and the flow writes the
same environment as the library."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
import yaml

from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.explore_env import (
    ENVIRONMENT_DIR,
    RECORD_FILE,
    EnvironmentRecord,
    build_environment,
    read_clean_derived,
    read_clean_table,
    read_dataset_table,
)
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

SPEC = REPO_ROOT / "task_specs" / "explore-enterprise" / "environment.yaml"
SECRET = "explore-test-secret-0123456789abcdef"


@pytest.fixture(scope="module")
def enterprise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("explore-enterprise") / "enterprise"
    build_dataset("enterprise", scale=0.1, seed=7, out=str(out), validate=False)
    return out


@pytest.fixture(scope="module")
def environment(
    enterprise: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, EnvironmentRecord]]:
    out = tmp_path_factory.mktemp("explore-env")
    yield out, build_environment(enterprise, SPEC, out, seed=1)


def _tolerance(record: EnvironmentRecord, table: str, column: str) -> float:
    written = record.table(table)
    tolerance = 0.0
    for rounding in written.rounding:
        if rounding.column == column:
            tolerance += rounding.max_abs_error
    for units in written.units:
        if units.column == column and units.decimals is not None:
            tolerance += 0.5 * 10**-units.decimals * max(units.units.values())
    return tolerance


def assert_reads_back(out: Path, record: EnvironmentRecord, dataset: Path) -> None:
    with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
        for written in record.tables:
            clean = read_clean_table(out, record, written.table, restore_missing=True)
            source = read_dataset_table(con, written.table)
            assert len(clean.rows) == len(source.rows), written.table
            for column in clean.columns:
                tolerance = _tolerance(record, written.table, column)
                pairs = zip(clean.values(column), source.values(column), strict=True)
                for read, true in pairs:
                    if isinstance(true, float) and read is not None:
                        assert math.isclose(read, true, rel_tol=1e-9, abs_tol=tolerance + 1e-9), (
                            written.table,
                            column,
                            read,
                            true,
                        )
                    else:
                        assert read == true or (true == "" and read is None), (
                            written.table,
                            column,
                        )


def test_every_table_reads_back_clean(
    enterprise: Path, environment: tuple[Path, EnvironmentRecord]
) -> None:
    out, record = environment
    assert_reads_back(out, record, enterprise)
    assert record.dataset_domain == "enterprise"
    # every noise kind of the spec did something
    aggregates = record.table("national_industry_aggregates")
    assert aggregates.totals and len(aggregates.totals.rows) > 100
    assert len(aggregates.units[0].rows_per_unit) == 3
    index = record.table("company_index")
    assert all(v.rows_changed > 50 for v in index.variants)
    assert len(set(index.units[0].entity_units.values())) == 3
    assert len(record.table("company_kpis").missing[0].cells) > 300
    assert len(record.table("provincial_industry_aggregates").subsets) == 4
    assert {d.kind for d in record.derived} == {
        "wide_annual",
        "year_over_year",
        "aggregates",
        "distractor",
        "documents",
    }
    files = [p for p in (out / ENVIRONMENT_DIR).rglob("*") if p.is_file()]
    assert {p.suffix for p in files} == {".csv", ".md"}
    assert all(p.suffix == ".csv" or p.parent.name == "texts" for p in files)
    assert not (out / ENVIRONMENT_DIR / RECORD_FILE).exists()


def test_naive_readings_are_wrong(
    enterprise: Path, environment: tuple[Path, EnvironmentRecord]
) -> None:
    out, record = environment
    revenue = (
        "SELECT sum(total_value) FROM raw.national_industry_aggregates "
        "WHERE indicator = 'REVENUE' AND period = DATE '2023-12-31'"
    )
    with duckdb.connect(str(enterprise / "warehouse.duckdb"), read_only=True) as con:
        truth = con.execute(revenue).fetchone()[0]  # type: ignore[index]
    units = record.table("national_industry_aggregates").units[0].units
    path = out / ENVIRONMENT_DIR / "database/industry/national_industry_aggregates.csv"
    with duckdb.connect() as con:
        rows = con.execute(
            f"SELECT industry_code, total_value FROM read_csv('{path}', all_varchar = true) "
            "WHERE indicator = 'REVENUE' AND period = '2023-12-31'"
        ).fetchall()

    def value(text: str) -> float:
        number, label = text.split(" ")
        return float(number) * units[label]

    with_totals = sum(value(t) for _, t in rows)  # units right, 合计 kept
    assert with_totals == pytest.approx(2 * truth, rel=1e-3)
    units_ignored = sum(float(t.split(" ")[0]) for code, t in rows if code != "合计")
    assert units_ignored > 10 * truth
    clean = read_clean_table(out, record, "national_industry_aggregates")
    rows_clean = zip(
        clean.values("indicator"), clean.values("period"), clean.values("total_value"), strict=True
    )
    assert sum(v for i, p, v in rows_clean if i == "REVENUE" and str(p) == "2023-12-31") == (
        pytest.approx(truth, abs=1e-3)
    )


def test_derived_tables_agree_with_sql_on_the_dataset(
    enterprise: Path, environment: tuple[Path, EnvironmentRecord]
) -> None:
    out, record = environment
    with duckdb.connect(str(enterprise / "warehouse.duckdb"), read_only=True) as con:
        annual = con.execute(
            "SELECT industry_code, indicator, year(period), sum(total_value) "
            "FROM raw.national_industry_aggregates WHERE year(period) BETWEEN 2020 AND 2023 "
            "GROUP BY ALL"
        ).fetchall()
        capital = con.execute(
            "SELECT region, scale_category, count(*), sum(registered_capital) "
            "FROM raw.company_index GROUP BY ALL"
        ).fetchall()
    wide = read_clean_derived(out, record, "industry_indicators_annual")
    read = {(c, i, y): v for c, i, y, v in wide.rows}
    assert len(read) == len(annual)
    for code, indicator, year, value in annual:
        assert read[code, indicator, year] == pytest.approx(value, abs=0.5e-4)
    by_region = read_clean_derived(out, record, "company_capital_by_region")
    regional = {(r[1], r[2]): (r[3], r[4]) for r in by_region.rows if r[0] == "regional"}
    assert len(regional) == len(capital)
    for region, scale, count, total in capital:
        assert regional[region, scale][0] == count
        assert regional[region, scale][1] == pytest.approx(total, abs=0.005)
    yoy = read_clean_derived(out, record, "industry_indicators_yoy")
    assert set(yoy.values("year")) == {2021, 2022, 2023}
    docs = read_clean_derived(out, record, "database/policy/texts")
    assert len(docs.rows) == record.table("policy_documents").rows


@pytest.fixture(scope="module")
def release(enterprise: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small enterprise release (scale 0.02) by the anonymize stage without an orchestrator,
    with the shipped policy's privacy gates lifted (a dataset this small cannot meet them; the
    release tests are about that) and no benchmark check."""
    from benchforge.anonymize.policy.loader import load_policy
    from benchforge.flows.anonymize import make_release

    tmp = tmp_path_factory.mktemp("explore-release")
    source = tmp / "enterprise"
    build_dataset("enterprise", scale=0.02, seed=7, out=str(source), validate=False)
    shipped = yaml.safe_load(Path(load_policy("enterprise").source).read_text())
    gates = shipped.setdefault("thresholds", {}) or {}
    gates.update(
        max_linkage_rate=1.0, max_attack_risk=1.0, max_reidentification_rate=1.0, require_k=False
    )
    shipped["thresholds"] = gates
    policy = tmp / "lenient.yaml"
    policy.write_text(yaml.safe_dump(shipped, allow_unicode=True))
    previous = os.environ.get("BENCHFORGE_ANON_SECRET")
    os.environ["BENCHFORGE_ANON_SECRET"] = SECRET
    try:
        record = make_release(str(source), str(policy), str(tmp / "release"), "none", 0.02, 7, 0)
    finally:
        if previous is None:
            os.environ.pop("BENCHFORGE_ANON_SECRET", None)
        else:
            os.environ["BENCHFORGE_ANON_SECRET"] = previous
    assert record.release is not None
    return Path(record.location)


def test_an_anonymized_release_is_an_input(release: Path, tmp_path: Path) -> None:
    record = build_environment(release, SPEC, tmp_path, seed=1)
    assert record.dataset_origin == "released"
    assert_reads_back(tmp_path, record, release)
    assert record.table("company_index").variants[0].rows_changed > 0


def test_the_flow_writes_what_the_library_writes(release: Path, tmp_path: Path) -> None:
    from benchforge.flows.exploration import build_exploration_environment

    flow_record = build_exploration_environment(
        dataset=str(release), spec=str(SPEC), out=str(tmp_path / "flow"), seed=5
    )
    library_record = build_environment(release, SPEC, tmp_path / "library", seed=5)
    assert flow_record == library_record
    assert (tmp_path / "flow" / RECORD_FILE).read_bytes() == (
        tmp_path / "library" / RECORD_FILE
    ).read_bytes()


def test_the_benchmark_runs_at_scale_0_1(enterprise: Path, tmp_path: Path) -> None:
    """``python bench/explore_env.py`` (the README's command) at its smallest scale, on the
    dataset built above."""
    (tmp_path / "enterprise-0.1").symlink_to(enterprise)
    command = ["bench/explore_env.py", "--scales", "0.1", "--repeat", "1", "--data", str(tmp_path)]
    result = subprocess.run(
        [sys.executable, *command],
        cwd=REPO_ROOT,
        # this checkout's package, whichever checkout the environment was installed from
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
        },
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "scale 0.1: " in result.stdout and "build at scale 0.1: " in result.stdout, (
        result.stdout + result.stderr
    )

"""Gold builds of a maintainer's own dbt project: Benchforge's profile whatever the project
names, seeds loaded, every relation of the manifest checked, dbt's real error line kept."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from benchforge.core.records import GOLD_DB
from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.dbt.project import DbtProjectError
from benchforge.evaluation.gold import (
    GoldBuildError,
    NotADatasetError,
    build_counts,
    build_gold,
)
from tests.gold_builds.project import MODELS, listing, write_dataset, write_project

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dataset(tmp_path_factory.mktemp("data") / "shop")


def test_the_project_profile_is_never_used_and_seeds_are_loaded(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project names profile ``shop`` writing ``./elsewhere.duckdb``: the build still lands
    in gold.duckdb, the seed with it, and neither the project nor the cwd gets a file."""
    repo = write_project(tmp_path / "shop")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = listing(repo)
    record = build_gold("shop", repo, dataset, tmp_path / "gold")
    assert listing(repo) == before
    assert listing(cwd) == set()
    assert not list(tmp_path.rglob("elsewhere.duckdb"))
    con = duckdb.connect(str(tmp_path / "gold" / GOLD_DB), read_only=True)
    tables = {
        (s, t)
        for s, t in con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables"
        ).fetchall()
    }
    spain = con.execute("SELECT count(*) FROM main.stg_countries WHERE country = 'ES'").fetchone()
    con.close()
    assert ("main", "countries") in tables and spain == (1,)
    assert {("main_reporting", "rpt_revenue"), ("main_reporting", "rpt_customers")} <= tables
    assert {t for _, t in tables} >= MODELS
    assert record.models == len(MODELS) and record.tests == 2
    counts = build_counts((tmp_path / "gold" / "run_results.json").read_text())
    assert (counts.models, counts.tests, counts.seeds) == (7, 2, 1)
    assert (tmp_path / "gold" / "docs" / "index.html").is_file()
    manifest = load_manifest(tmp_path / "gold" / "manifest.json")
    assert manifest.models["orders_summary"].layer == "other"
    assert manifest.models["orders_summary"].tags == ["finance"]


def test_a_build_missing_a_relation_of_its_manifest_fails(dataset: Path, tmp_path: Path) -> None:
    """dbt reports success, but a hook dropped a model: the gold is not stored."""
    dropped = "{{ config(post_hook='drop table {{ this }}') }}\n"
    repo = write_project(
        tmp_path / "shop",
        {"models/reporting/rpt_customers.sql": dropped + "select 1 as customer_id\n"},
    )
    with pytest.raises(GoldBuildError) as err:
        build_gold("shop", repo, dataset, tmp_path / "gold", docs=False)
    message = str(err.value)
    assert "model.shop.rpt_customers" in message and "main_reporting.rpt_customers" in message
    assert "rpt_revenue" not in message
    assert not (tmp_path / "gold" / "build.json").exists()


def test_the_real_dbt_error_line_is_kept(dataset: Path, tmp_path: Path) -> None:
    repo = write_project(
        tmp_path / "shop",
        {"models/reporting/rpt_revenue.sql": "select * from {{ ref('int_order') }}\n"},
    )
    with pytest.raises(GoldBuildError) as err:
        build_gold("shop", repo, dataset, tmp_path / "gold", docs=False)
    assert "Compilation Error" in str(err.value)
    assert "depends on a node named 'int_order' which was not found" in str(err.value)


def test_not_a_dbt_project_nor_a_dataset(dataset: Path, tmp_path: Path) -> None:
    nested = write_project(tmp_path / "checkout" / "shop")
    with pytest.raises(DbtProjectError, match=r"has no dbt_project\.yml; did you mean .*shop"):
        build_gold("shop", nested.parent, dataset, tmp_path / "gold")
    with pytest.raises(DbtProjectError, match="no such folder"):
        build_gold("shop", tmp_path / "nowhere", dataset, tmp_path / "gold")
    with pytest.raises(NotADatasetError, match=r"is not a dataset: it has no dataset\.json"):
        build_gold("shop", nested, tmp_path / "checkout", tmp_path / "gold")

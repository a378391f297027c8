"""Gold models of every materialization dbt-duckdb offers beside tables: a view is scored like a
table (its relations exported under the catalog name its SQL uses), an incremental model as it
is built fresh (on an empty warehouse copy: its full query), an ephemeral model is scored
through the models that inline it (its parents become their component inputs), so the gold
scores 100 / 100 / 100 on itself and a candidate that materializes the helper otherwise still
does, while a wrong ephemeral costs the model that inlines it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.de.scoring import DeScore, score_candidate
from benchforge.evaluation.gold import build_gold
from benchforge.evaluation.tasks.materials import data_contract
from benchforge.evaluation.tasks.models import DeScoring
from tests.paths import FIXTURES
from tests.support.datasets import mini_dataset

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

HELPER = "models/intermediate/int_contacts_counted.sql"
DIM = "models/marts/dim_accounts.sql"
FACT = "models/marts/fct_won_revenue_by_country.sql"


def _materialized(repo: Path, path: str, how: str) -> None:
    sql = repo / path
    sql.write_text(f"{{{{ config(materialized='{how}') }}}}\n" + sql.read_text())


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("repo") / "mini_dbt"
    shutil.copytree(FIXTURES / "mini_dbt", repo)
    _materialized(repo, HELPER, "ephemeral")
    _materialized(repo, DIM, "view")
    # incremental: built fresh (no relation exists yet), so the filter below never applies
    fact = repo / FACT
    fact.write_text(
        "{{ config(materialized='incremental') }}\n"
        + fact.read_text().replace(
            "    where is_won\n",
            "    where is_won\n"
            "    {% if is_incremental() %}and close_date > (select max(close_month) "
            "from {{ this }}){% endif %}\n",
        )
    )
    return repo


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_dataset(tmp_path_factory.mktemp("ds") / "mini")


@pytest.fixture(scope="module")
def gold(project: Path, dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("gold") / "mini"
    build = build_gold("mini", project, dataset, folder)
    assert build.models == 6  # the ephemeral helper has no relation
    return folder


def _score(candidate: Path, gold: Path, dataset: Path, work: Path) -> DeScore:
    return score_candidate(candidate, gold, dataset, work, DeScoring())


def test_the_gold_with_a_view_and_an_ephemeral_model_scores_100_on_itself(
    project: Path, gold: Path, dataset: Path, tmp_path: Path
) -> None:
    manifest = load_manifest(gold / "manifest.json")
    assert "int_contacts_counted" not in manifest.models
    assert manifest.models["dim_accounts"].materialized == "view"
    assert manifest.models["fct_won_revenue_by_country"].materialized == "incremental"
    # the helper's parent is the component input of the model that inlines it
    assert manifest.parents("dim_accounts") == ["stg_mini__accounts", "stg_mini__contacts"]
    result = _score(project, gold, dataset, tmp_path / "w")
    assert (result.cs, result.cfs, result.sr) == (100.0, 100.0, 100.0)
    assert len(result.nodes) == 6
    contract = data_contract(gold, None, "mini")
    assert "int_contacts_counted" not in {m["name"] for m in contract["models"]}


def test_the_helper_materialized_otherwise_scores_100_and_a_wrong_one_costs_its_user(
    project: Path, gold: Path, dataset: Path, tmp_path: Path
) -> None:
    as_table = tmp_path / "as-table"
    shutil.copytree(FIXTURES / "mini_dbt", as_table)  # helper and dim as plain tables
    result = _score(as_table, gold, dataset, tmp_path / "w1")
    assert (result.cs, result.cfs, result.sr) == (100.0, 100.0, 100.0)

    wrong = tmp_path / "wrong"
    shutil.copytree(project, wrong)
    helper = wrong / HELPER
    helper.write_text(
        helper.read_text().replace("count(*) as contacts", "count(*) + 1 as contacts")
    )
    result = _score(wrong, gold, dataset, tmp_path / "w2")
    failed = {n.name for n in result.nodes if not n.cs.matched}
    assert failed == {"dim_accounts"}
    assert result.sr == 0.0

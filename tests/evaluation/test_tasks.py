"""Task specs: validation errors, contracts, workspaces, self-verification and `score de`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchforge.core.records.verification import EMPTY, REFERENCE
from benchforge.evaluation.de.mutations import load_catalogue
from benchforge.evaluation.de.tasks import (
    DeVerification,
    gold_docs,
    prepare_gold,
    verify_task,
    workspace,
)
from benchforge.evaluation.tasks import TaskSpecError, load_task, load_tasks, task_json_schema
from benchforge.evaluation.tasks.materials import data_contract, make_skeleton, write_contract
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES, REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROOT = REPO_ROOT
SUITE = FIXTURES / "task_specs" / "de-mini"
SCHEMA_FILE = ROOT / "evaluation" / "tasks" / "task_spec.schema.json"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds") / "mini"
    build_dataset(
        load_spec(FIXTURES / "mini_domain.yaml"), scale=1, seed=7, out=str(out), validate=False
    )
    return out


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("work")


def test_fixture_suite_is_valid() -> None:
    tasks = load_tasks(SUITE)
    assert sorted(t.spec.family for t in tasks) == ["de_arch", "de_evol", "de_impl"]
    impl = next(t for t in tasks if t.spec.family == "de_impl")
    assert impl.spec.scoring.layer_weights == {"staging": 15, "intermediate": 25, "marts": 60}


def copy_task(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / "de-mini" / name
    shutil.copytree(SUITE / name, dest)
    return dest


def edit(folder: Path, **changes: object) -> None:
    data = yaml.safe_load((folder / "task.yaml").read_text())
    data.update(changes)
    (folder / "task.yaml").write_text(yaml.safe_dump(data))


def test_bad_specs_name_file_and_field(tmp_path: Path) -> None:
    folder = copy_task(tmp_path, "mini-arch-retention")
    edit(folder, colour="blue")
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    assert (
        str(folder / "task.yaml") in str(err.value)
        and ("colour", "Extra inputs are not permitted") in err.value.problems
    )

    folder = copy_task(tmp_path, "mini-evol-won-by-industry")
    (folder / "change_request.md").unlink()
    edit(folder, removed=["models/marts/no_such.sql"])
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    paths = [p for p, _ in err.value.problems]
    assert "change_request" in paths and "removed[0]" in paths

    folder = copy_task(tmp_path, "mini-impl")
    edit(folder, scoring={"layer_weights": {"staging": -1}}, id="other-name")
    with pytest.raises(TaskSpecError) as err:
        load_task(folder)
    assert any(p == "scoring.layer_weights" for p, _ in err.value.problems)


def test_task_json_schema_is_current() -> None:
    assert SCHEMA_FILE.read_text() == task_json_schema(), "run: benchforge task schema > ..."


def test_contract_lists_models_lineage_types_and_tests(dataset: Path, work: Path) -> None:
    impl = load_task(SUITE / "mini-impl")
    gold = prepare_gold(impl, dataset, work)
    # scoring reads a gold's warehouse and manifest: its cached build skips dbt docs generate,
    # and the contract, which reads column types from the catalog, has it generated once
    assert not (gold.gold_folder / "catalog.json").exists()
    folder = gold_docs(gold.gold_folder, gold.repo)
    assert (folder / "catalog.json").is_file() and (folder / "docs" / "index.html").is_file()
    assert not (folder / "_dbt").exists()
    contract = data_contract(folder, impl.file("contract_metadata.yaml"), "mini")
    names = [m["name"] for m in contract["models"]]
    assert len(names) == 7 and names.index("stg_mini__accounts") < names.index("dim_accounts")
    dim = next(m for m in contract["models"] if m["name"] == "dim_accounts")
    assert dim["grain"] == "One row per account." and dim["primary_key"] == "account_id"
    assert dim["depends_on"]["models"] == ["int_contacts_counted", "stg_mini__accounts"]
    assert {c["name"] for c in dim["columns"]} == {
        "account_id",
        "country",
        "industry",
        "annual_revenue",
        "contacts",
    }
    assert contract["metrics"][0]["name"] == "won_amount"
    path = work / "contract.yaml"
    write_contract(contract, path)
    assert yaml.safe_load(path.read_text())["models"][0]["layer"] == "staging"


def test_workspace_holds_only_what_the_task_exposes(dataset: Path, work: Path) -> None:
    impl = load_task(SUITE / "mini-impl")
    space = workspace(impl, None, work / "ws-impl")
    assert (space / "data_contract.yaml").is_file() and (space / "TASK.md").is_file()
    assert not list((space / "repo" / "models").rglob("*.sql"))
    assert (space / "repo" / "models" / "staging" / "_sources.yml").is_file()
    assert not list(space.rglob("*.duckdb"))
    evol = load_task(SUITE / "mini-evol-won-by-industry")
    space = workspace(evol, None, work / "ws-evol")
    assert (space / "change_request.md").is_file()
    assert not (space / "repo" / "models" / "marts" / "fct_won_revenue_by_industry.sql").exists()


def test_verify_impl_task_with_mutations(dataset: Path, work: Path) -> None:
    impl = load_task(SUITE / "mini-impl")
    catalogue = load_catalogue(FIXTURES / "mini_mutations.yaml")
    result = verify_task(impl, dataset, work, catalogue)
    assert result.ok, result.problems
    assert result.shown(REFERENCE) == "gold 100/100/100"
    assert result.shown(EMPTY) == "empty 0/0/0"
    assert result.tally("mutations") == "6/6" and result.groups() == [REFERENCE, EMPTY, "mutations"]
    record = result.record
    assert isinstance(record, DeVerification)
    assert len(record.mutations) == 6 and all(m.ok for m in record.mutations)
    first = result.group("mutations")[0]
    assert first.name == f"mutation {record.mutations[0].id}" and first.passed
    assert first.expected == first.observed != "100/100/100"


def test_a_mutation_that_changes_no_output_is_refused(
    dataset: Path, work: Path, tmp_path: Path
) -> None:
    """Rule 3, computed: the mutated node's output equals the gold's, whatever was predicted."""
    noop = tmp_path / "noop.yaml"
    noop.write_text(
        "domain: mini\nmutations:\n  - id: always-true-filter\n    kind: dropped_filter\n"
        "    node: fct_won_revenue_by_country\n    edits:\n"
        '      - {find: "where is_won", replace: "where is_won and 1 = 1"}\n'
    )
    impl = load_task(SUITE / "mini-impl")
    result = verify_task(impl, dataset, work, load_catalogue(noop))
    assert result.problems == [
        "mutation always-true-filter: fct_won_revenue_by_country still produces the gold output "
        "(scored cs=100.0 cfs=100.0 sr=100.0): a mutation must change what the data shows "
        "(task_specs/mutations/README.md, rule 3)"
    ]


def test_verify_evol_task_scores_only_changed_nodes(dataset: Path, work: Path) -> None:
    evol = load_task(SUITE / "mini-evol-won-by-industry")
    gold = prepare_gold(evol, dataset, work)
    assert gold.scored_nodes == ["fct_won_revenue_by_country", "fct_won_revenue_by_industry"]
    result = verify_task(evol, dataset, work)
    assert result.ok, result.problems
    assert result.shown(EMPTY) == "empty 0/0/0" and result.score(EMPTY) == 0


def test_score_de_command(dataset: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    candidate = tmp_path / "candidate"
    shutil.copytree(FIXTURES / "mini_dbt", candidate)
    (candidate / "models" / "marts" / "dim_accounts.sql").write_text("select 1 as account_id")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchforge.cli",
            "score",
            "de",
            "--task",
            str(SUITE / "mini-impl"),
            "--candidate",
            str(candidate),
            "--dataset",
            str(dataset),
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "CS 70.00 / CFS 70.00 / SR 0" in result.stdout
    assert "dim_accounts" in result.stdout and "missing columns" in result.stdout
    data = json.loads(report.read_text())
    assert data["cs"] == 70.0 and len(data["nodes"]) == 7


def test_skeleton_leaves_out_model_macros_but_keeps_shared_ones(tmp_path: Path) -> None:
    """A macro under macros/<layer>/ is a model's body (enterprise's regional company
    profiles): handing it to a de_impl agent would give the answer away."""
    repo = REPO_ROOT / "dbt_projects" / "enterprise"
    model_macros = sorted((repo / "macros" / "staging").glob("*.sql"))
    assert model_macros, "the enterprise gold keeps its company-profile macro in macros/staging/"
    shared = sorted(p.relative_to(repo) for p in (repo / "macros").glob("*.sql"))
    skeleton = make_skeleton(repo, tmp_path / "skeleton")
    assert not (skeleton / "macros" / "staging").exists()
    assert not list((skeleton / "models").rglob("*.sql"))
    assert sorted(p.relative_to(skeleton) for p in (skeleton / "macros").glob("*.sql")) == shared
    assert shared, "shared macros (helpers every model may use) stay"

"""``benchforge task new de_impl`` on a maintainer's own project and dataset, then what
``task validate`` and ``task contract`` make of it: a scaffold that validates at once, a
contract derived from the manifest that knows what it was generated from, empty and stale
contracts rejected, a task's first contract created, models of weight 0 warned about."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchforge.cli import main as cli_main
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.gold import repo_version
from benchforge.evaluation.tasks import DeImplTask, load_task
from benchforge.evaluation.tasks.authoring import ParsedRepos, review_task
from tests.task_authoring.conftest import Shop
from tests.task_authoring.tiny import MODELS


def validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main.main(["task", "validate", str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_scaffold_validates_and_names_paths_from_the_catalogue_root(
    env: Shop, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = env.task("shop-impl")
    assert {p.name for p in folder.iterdir()} == {
        "task.yaml",
        "contract_metadata.yaml",
        "data_contract.yaml",
    }
    spec = load_task(folder).spec
    assert isinstance(spec, DeImplTask)
    assert spec.repo == "shop_dbt"  # inside the root: relative to it
    assert spec.dataset.location == str(env.dataset)  # outside: absolute
    text = (folder / "task.yaml").read_text()
    assert "# What the agent is asked to do." in text  # the field's own description
    assert "\n# contract: data_contract.yaml\n" in text  # a default, commented out
    catalogue = read_yaml((env.tasks / "mutations" / "shop.yaml").read_text())
    assert catalogue == {"domain": "shop", "mutations": []}
    code, out, err = validate(folder, capsys)
    assert code == 0, err
    assert "ok  de-shop/shop-impl@1" in out and "1 task(s) valid, 2 warning(s)" in out
    assert "task_specs/mutations/shop.yaml lists no mutation yet" in out
    # the project leaves some models without a description, grain or key: each gets a
    # TODO(scaffold) note, which the contract carries and validate warns about
    assert (
        "contract_metadata.yaml, data_contract.yaml still hold TODO(scaffold) placeholders" in out
    )
    contract = read_yaml((folder / "data_contract.yaml").read_text())
    lacking = {
        m["name"]
        for m in contract["models"]
        if not (m["description"] and m["grain"] and m["primary_key"])
    }
    notes = read_yaml((folder / "contract_metadata.yaml").read_text())["models"]
    assert lacking and set(notes) == lacking
    assert all(n[0].startswith("TODO(scaffold): the gold project gives no") for n in notes.values())


def test_the_contract_header_is_derived_from_the_manifest(env: Shop) -> None:
    contract = yaml.safe_load((env.task("shop-impl") / "data_contract.yaml").read_text())
    assert contract["generated_from"] == {
        "repo_version": repo_version(env.repo),
        "models": 4,
        "layer_rules": [],
        "contract_metadata": contract["generated_from"]["contract_metadata"],
    }
    build = contract["build"]
    assert build["adapter"] == "duckdb" and build["source_schemas"] == ["raw"]
    # No custom schema macro and one materialization: the header says so, not "one schema
    # per layer, every model a table".
    assert build["layers"] == {
        "staging": {"models": 2, "schemas": ["main"], "materialized": ["table"]},
        "marts": {"models": 2, "schemas": ["main"], "materialized": ["table"]},
    }
    assert {m["name"] for m in contract["models"]} == MODELS
    fct = next(m for m in contract["models"] if m["name"] == "fct_orders")
    assert (fct["layer"], fct["materialized"], fct["primary_key"]) == (
        "marts",
        "table",
        "order_id",
    )


def test_validate_rejects_an_empty_contract(
    env: Shop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = env.copy(tmp_path / "catalogue")
    contract = copy.task("shop-impl") / "data_contract.yaml"
    data = yaml.safe_load(contract.read_text())
    contract.write_text(yaml.safe_dump({**data, "models": []}))
    code, out, err = validate(copy.task("shop-impl"), capsys)
    assert code == 2 and "ok  " not in out
    assert "data_contract.yaml lists no models: run `benchforge task contract" in err
    assert "Traceback" not in err


def test_validate_rejects_a_stale_contract(env: Shop, tmp_path: Path) -> None:
    copy = env.copy(tmp_path / "catalogue")
    before = repo_version(copy.repo)
    model = copy.repo / "models" / "marts" / "dim_customers.sql"
    model.write_text(model.read_text().replace("count(*) as orders", "count(*) as order_count"))
    review = review_task(load_task(copy.task("shop-impl")), ParsedRepos(tmp_path / "parsed"))
    assert review.problems == [
        f"data_contract.yaml is stale: generated from repository version {before}, the "
        f"repository is now {repo_version(copy.repo)}: run `benchforge task contract "
        f"{copy.task('shop-impl')}`"
    ]
    meta = copy.task("shop-impl") / "contract_metadata.yaml"
    model.write_text(model.read_text().replace("order_count", "orders"))  # back to the gold
    meta.write_text(meta.read_text().replace("metrics: []", "metrics: [{name: orders}]"))
    review = review_task(load_task(copy.task("shop-impl")), ParsedRepos(tmp_path / "parsed"))
    assert review.problems == [
        "data_contract.yaml is stale: its metadata changed since it was generated: run "
        f"`benchforge task contract {copy.task('shop-impl')}`"
    ]


def test_task_contract_writes_a_tasks_first_contract(
    env: Shop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = env.copy(tmp_path / "catalogue")
    contract = copy.task("shop-impl") / "data_contract.yaml"
    contract.unlink()
    code, _, err = validate(copy.task("shop-impl"), capsys)
    assert code == 2 and "generate it: benchforge task contract" in err
    assert cli_main.main(["task", "contract", str(copy.task("shop-impl"))]) == 0
    assert f"wrote {contract}" in capsys.readouterr().out
    assert yaml.safe_load(contract.read_text())["generated_from"]["models"] == 4
    assert validate(copy.task("shop-impl"), capsys)[0] == 0


def test_a_model_of_weight_zero_is_a_warning(
    env: Shop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = env.copy(tmp_path / "catalogue")
    spec = copy.task("shop-impl") / "task.yaml"
    spec.write_text(spec.read_text() + "scoring:\n  layer_weights: {staging: 1.0}\n")
    code, out, err = validate(copy.task("shop-impl"), capsys)
    assert code == 0, err
    for model in ("dim_customers", "fct_orders"):
        assert (
            f"warning  de-shop/shop-impl@1: model {model} gets weight 0 (layer 'marts' has no "
            "weight in scoring.layer_weights; add a scoring.layers rule or a weight)"
        ) in out
    assert "stg_orders gets weight 0" not in out

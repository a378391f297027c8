"""The ``benchforge task`` actions around authoring that need no build: refusing what cannot
be scaffolded, de_arch scaffolds, a failed verify as one error line (no traceback), the
datasets ``task verify --dataset`` passes on, the catalogue action's dispatch."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchforge.cli import main as cli_main
from benchforge.cli.task import _verify_datasets
from benchforge.cli.task_catalogue import catalogue_command
from benchforge.core.errors import ConfigError
from benchforge.evaluation.families import VerifyOptions, get_family
from benchforge.evaluation.tasks import DeArchTask, load_task
from tests.task_authoring.conftest import Shop

BAD_CATALOGUE = """\
domain: shop
mutations:
  - id: join-on-country
    kind: wrong_joins
    node: fct_orders
    edits:
      - {find: "c.customer_id = o.customer_id", replace: "c.country = o.customer_id"}
"""


def new(shop: Shop, family: str, task_id: str) -> int:
    return cli_main.main(
        [
            "task", "new", family, "--id", task_id, "--suite", "de-shop",
            "--repo", str(shop.repo), "--dataset", str(shop.dataset), "--root", str(shop.root),
        ]
    )  # fmt: skip


def test_families_that_cannot_be_scaffolded_are_refused_by_name(
    env: Shop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = env.copy(tmp_path / "catalogue")
    assert new(copy, "da_open", "shop-da") == 2
    err = capsys.readouterr().err
    assert "cannot scaffold da_open tasks; it scaffolds de_arch, de_evol, de_impl" in err
    assert not copy.task("shop-da").exists()
    assert new(copy, "de_impl", "shop-impl") == 2  # exists: not overwritten without --force
    assert "exists (pass --force" in capsys.readouterr().err


def test_a_de_arch_scaffold_validates_with_its_placeholders_named(
    env: Shop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = env.copy(tmp_path / "catalogue")
    assert new(copy, "de_arch", "shop-arch") == 0
    spec = load_task(copy.task("shop-arch")).spec
    assert isinstance(spec, DeArchTask)
    assert {i.dimension for i in spec.rubric} == {
        "business_alignment",
        "technical_feasibility",
        "design_quality",
    }
    capsys.readouterr()
    assert cli_main.main(["task", "validate", str(copy.task("shop-arch"))]) == 0
    assert (
        "reference_blueprint.yaml, requirement.md, task.yaml still hold TODO(scaffold) "
        "placeholders" in capsys.readouterr().out
    )


def test_a_failed_verify_is_one_error_without_traceback(
    env: Shop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = env.copy(tmp_path / "catalogue")
    catalogue = copy.tasks / "mutations" / "shop.yaml"
    catalogue.write_text(BAD_CATALOGUE)
    assert cli_main.main(["task", "verify", str(copy.task("shop-impl"))]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("benchforge: error: 1 task(s) invalid")
    assert f"{catalogue}: mutations[join-on-country].kind: Input should be" in err
    # The flow's own check (a deployment calls it without the command) raises the same
    # error, before building anything.
    with pytest.raises(ConfigError, match=r"mutations\[join-on-country\]\.kind"):
        get_family("de_impl").verify(
            load_task(copy.task("shop-impl")), copy.dataset, tmp_path / "work", VerifyOptions()
        )


def test_verify_takes_a_dataset_for_the_domain_of_its_tasks(tmp_path: Path) -> None:
    here = str(tmp_path.resolve())
    assert _verify_datasets([str(tmp_path)], ["shop"]) == {"shop": here}
    assert _verify_datasets([f"shop={tmp_path}", "crm=s3://b/crm"], ["crm", "shop"]) == {
        "shop": here,
        "crm": "s3://b/crm",
    }
    with pytest.raises(ConfigError, match="say which with --dataset DOMAIN=LOCATION"):
        _verify_datasets([str(tmp_path)], ["crm", "shop"])
    with pytest.raises(ConfigError, match="no task under PATH has domain ads"):
        _verify_datasets([f"ads={tmp_path}"], ["shop"])


def test_the_catalogue_action_is_the_catalogue_pages() -> None:
    args = cli_main.build_parser().parse_args(
        ["task", "catalogue", "task_specs", "--out", "page.html", "--runs", "none"]
    )
    assert args.func is catalogue_command
    assert (args.path, args.out, args.runs) == ("task_specs", "page.html", "none")


def test_validate_resolves_the_dataset_location(
    env: Shop, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A location that is no folder, or a folder that is no dataset, fails validation naming
    the task file; the scaffold's own location (the shop dataset) passes."""
    copy = env.copy(tmp_path / "catalogue")
    assert new(copy, "de_arch", "shop-arch") == 0
    task_file = copy.task("shop-arch") / "task.yaml"
    spec = yaml.safe_load(task_file.read_text())
    assert spec["dataset"]["location"]
    (tmp_path / "not-a-dataset").mkdir()
    for location, problem in [
        (str(tmp_path / "nowhere"), "does not exist"),
        (str(tmp_path / "not-a-dataset"), "is not a dataset: it has no dataset.json"),
    ]:
        spec["dataset"]["location"] = location
        task_file.write_text(yaml.safe_dump(spec, sort_keys=False))
        capsys.readouterr()
        assert cli_main.main(["task", "validate", str(copy.task("shop-arch"))]) == 2
        err = capsys.readouterr().err
        assert f"{task_file}: dataset.location '{location}' (resolved to {location}) {problem}" in (
            err
        )

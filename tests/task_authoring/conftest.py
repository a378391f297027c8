"""One maintainer's catalogue for the task-authoring tests: the tiny project and dataset of
:mod:`tests.task_authoring.tiny`, an artifact root of their own (so the work folder, its gold
builds and parsed manifests are shared by the tests and nobody else), and the de_impl and
de_evol tasks ``benchforge task new`` scaffolds from them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel

from benchforge.cli import main as cli_main
from tests.task_authoring.tiny import write_dataset, write_project


class Shop(BaseModel):
    root: Path  # the catalogue root: task_specs/ and the dbt project shop_dbt/
    repo: Path
    dataset: Path  # outside the catalogue: written absolute
    work: Path  # the work folder (BENCHFORGE_ARTIFACT_ROOT/work)

    @property
    def tasks(self) -> Path:
        return self.root / "task_specs"

    def task(self, task_id: str) -> Path:
        return self.tasks / "de-shop" / task_id

    def copy(self, dest: Path) -> Shop:
        """The catalogue copied to ``dest`` (same dataset and work folder): a test that
        breaks a task breaks its own copy."""
        shutil.copytree(self.root, dest)
        return self.model_copy(update={"root": dest, "repo": dest / "shop_dbt"})


@pytest.fixture(scope="session")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Shop:
    """Made once; the artifact root is set only while the tasks are scaffolded (tests set it
    again through ``env``, so no other test sees it)."""
    base = tmp_path_factory.mktemp("shop")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(base / "artifacts"))
        made = Shop(
            root=base / "catalogue",
            repo=write_project(base / "catalogue" / "shop_dbt"),
            dataset=write_dataset(base / "data" / "shop"),
            work=base / "artifacts" / "work",
        )
        for family, task_id in (("de_impl", "shop-impl"), ("de_evol", "shop-evol")):
            code = cli_main.main(
                [
                    "task", "new", family, "--id", task_id, "--suite", "de-shop",
                    "--repo", str(made.repo), "--dataset", str(made.dataset),
                    "--root", str(made.root),
                ]
            )  # fmt: skip
            assert code == 0, family
    return made


@pytest.fixture
def env(shop: Shop, monkeypatch: pytest.MonkeyPatch) -> Shop:
    """The shared catalogue, with its artifact root (and so its work folder) set for the
    test."""
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(shop.work.parent))
    return shop

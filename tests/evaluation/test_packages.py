"""dbt packages of a maintainer's project are vendored once and installed into every copy that
is built: from the project's own install folder when complete (no network), else by ``dbt
deps`` on a copy of its configuration; never by writing to the project. The scorer replaces
whatever a submission ships under ``dbt_packages/`` with the gold's vendored packages."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from benchforge.evaluation.dbt.packages import (
    PackagesError,
    add_packages,
    buildable,
    vendored_packages,
)
from benchforge.evaluation.de.boundary import ScoringFolders
from benchforge.evaluation.de.scoring import _with_gold_packages
from benchforge.evaluation.tasks.materials import AnsweringPackageError, make_skeleton

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

MACRO = "{% macro cents(x) %}cast(round({{ x }} * 100) as bigint){% endmacro %}\n"


def _package(folder: Path, name: str = "team_macros", macro: str = MACRO) -> Path:
    (folder / "macros").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text(f'name: {name}\nversion: "1.0.0"\nconfig-version: 2\n')
    (folder / "macros" / "cents.sql").write_text(macro)
    return folder


def _project(folder: Path, packages: str) -> Path:
    (folder / "models" / "marts").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text(
        'name: shop\nversion: "1.0.0"\nconfig-version: 2\nprofile: shop\n'
    )
    (folder / "packages.yml").write_text(packages)
    (folder / "models" / "marts" / "fct_amounts.sql").write_text(
        "select {{ team_macros.cents('amount') }} as cents, customer_id, region, amount\n"
        "from {{ source('shop', 'payments') }} where amount is not null\n"
    )
    return folder


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHFORGE_CACHE_DIR", str(tmp_path / "cache"))


def test_a_local_package_never_installed_is_vendored_by_dbt_deps_without_touching_the_project(
    tmp_path: Path,
) -> None:
    _package(tmp_path / "team_macros")
    repo = _project(tmp_path / "shop", "packages:\n  - local: ../team_macros\n")
    before = _digest(repo)
    vendored = vendored_packages(repo)
    assert vendored is not None and vendored.is_relative_to(tmp_path / "cache")
    assert _digest(vendored) == {
        "team_macros/dbt_project.yml": hashlib.sha256(
            (tmp_path / "team_macros/dbt_project.yml").read_bytes()
        ).hexdigest(),
        "team_macros/macros/cents.sql": hashlib.sha256(MACRO.encode()).hexdigest(),
    }
    assert not (vendored / "team_macros").is_symlink()  # a copy, not dbt's link
    assert _digest(repo) == before  # no dbt_packages/, no package-lock.yml written
    assert vendored_packages(repo) == vendored  # made once per content
    # The package's content is part of the key: an edit vendors it again.
    (tmp_path / "team_macros/macros/cents.sql").write_text(MACRO.replace("100", "1000"))
    again = vendored_packages(repo)
    assert again is not None and again != vendored
    assert "1000" in (again / "team_macros/macros/cents.sql").read_text()


def test_installed_packages_are_vendored_offline_even_from_an_unreachable_hub(
    tmp_path: Path,
) -> None:
    repo = _project(
        tmp_path / "shop", "packages:\n  - package: acme/team_macros\n    version: 1.2.0\n"
    )
    _package(repo / "dbt_packages" / "team_macros")
    vendored = vendored_packages(repo)
    assert vendored is not None
    assert (vendored / "team_macros/macros/cents.sql").read_text() == MACRO
    copy = buildable(repo, tmp_path / "copy")
    assert copy != repo and (copy / "dbt_packages/team_macros/macros/cents.sql").is_file()


def test_packages_that_cannot_be_installed_are_an_error_naming_packages_yml(
    tmp_path: Path,
) -> None:
    repo = _project(tmp_path / "shop", "packages:\n  - local: ../nowhere\n  - local: ../nor_here\n")
    with pytest.raises(PackagesError) as err:
        vendored_packages(repo)
    said = str(err.value)
    assert str(repo / "packages.yml") in said and "2 dbt package(s)" in said
    assert "dbt deps" in said


def test_a_project_without_packages_is_built_as_is(tmp_path: Path) -> None:
    repo = _project(tmp_path / "shop", "packages: []\n")
    assert vendored_packages(repo) is None
    assert buildable(repo, tmp_path / "copy") == repo
    add_packages(repo, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_the_skeleton_ships_the_packages_but_refuses_one_holding_a_gold_model(
    tmp_path: Path,
) -> None:
    _package(tmp_path / "team_macros")
    repo = _project(tmp_path / "shop", "packages:\n  - local: ../team_macros\n")
    skeleton = make_skeleton(repo, tmp_path / "skeleton")
    assert (skeleton / "dbt_packages/team_macros/macros/cents.sql").read_text() == MACRO
    assert not list(skeleton.glob("models/**/*.sql"))
    # A "package" that is the answer in disguise: the model's SQL as a macro body.
    model = (repo / "models/marts/fct_amounts.sql").read_text()
    leaky = _package(tmp_path / "leaky", "leaky", "{% macro fct() %}" + model + "{% endmacro %}")
    assert leaky.is_dir()
    (repo / "packages.yml").write_text(
        "packages:\n  - local: ../team_macros\n  - local: ../leaky\n"
    )
    with pytest.raises(AnsweringPackageError, match=r"dbt_packages/leaky/macros/cents\.sql"):
        make_skeleton(repo, tmp_path / "skeleton2")


def test_the_scorer_replaces_the_packages_a_submission_ships_with_the_golds(
    tmp_path: Path,
) -> None:
    gold = tmp_path / "gold"
    _package(gold / "dbt_packages" / "team_macros")
    candidate = _project(tmp_path / "candidate", "packages:\n  - local: ../team_macros\n")
    # The agent's own "team_macros" answers whatever the scorer asks.
    _package(
        candidate / "dbt_packages" / "team_macros", macro="{% macro cents(x) %}42{% endmacro %}"
    )
    (candidate / "dbt_packages" / "planted").mkdir()
    (candidate / "dbt_packages" / "planted" / "dbt_project.yml").write_text("name: planted\n")
    folders = ScoringFolders.fresh(tmp_path / "work")
    built = _with_gold_packages(candidate, gold, folders)
    assert built != candidate and not built.is_relative_to(candidate)
    assert sorted(p.name for p in (built / "dbt_packages").iterdir()) == ["team_macros"]
    assert (built / "dbt_packages/team_macros/macros/cents.sql").read_text() == MACRO
    assert (built / "models/marts/fct_amounts.sql").is_file()
    # Without vendored packages in the gold the candidate is built where it is.
    assert _with_gold_packages(candidate, tmp_path / "none", folders) == candidate
    shutil.rmtree(folders.root)

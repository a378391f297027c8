"""The de_impl workspace is built from an allow-list: a maintainer's own project (a git
checkout, a notebook that writes the models, load scripts, raw CSVs, images) gives an agent the
dbt configuration, shared macros, seeds and source definitions, and nothing that holds the
answer."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from benchforge.evaluation.tasks.materials import make_skeleton, skeleton_files
from benchforge.evaluation.tasks.models import DeImplTask
from tests.paths import FIXTURES
from tests.support.maintainer_checkout import maintainer_checkout

GOLD = FIXTURES / "mini_dbt"


@pytest.fixture
def byo(tmp_path: Path) -> Path:
    return maintainer_checkout(GOLD, tmp_path / "project")


def test_the_workspace_ships_the_allow_list_and_nothing_of_the_answer(
    byo: Path, tmp_path: Path
) -> None:
    skeleton = make_skeleton(byo, tmp_path / "skeleton")
    shipped = sorted(p.relative_to(skeleton).as_posix() for p in skeleton.rglob("*"))
    assert shipped == [
        "dbt_project.yml",
        "macros",
        "macros/expression_is_true.sql",
        "macros/generate_schema_name.sql",
        "models",
        "models/intermediate",
        "models/marts",
        "models/staging",
        "models/staging/_sources.yml",
        "profiles.yml",
    ]
    # the attack this closes: with the checkout shipped, `git checkout HEAD -- models/` restored
    # every gold model
    restore = subprocess.run(
        ["git", "checkout", "HEAD", "--", "models/"], cwd=skeleton, capture_output=True, text=True
    )
    assert restore.returncode != 0
    assert not list((skeleton / "models").rglob("*.sql"))


def test_listed_files_are_shipped_unless_they_hold_the_answer(byo: Path) -> None:
    include = ["docs/*.md", "*.ipynb", "scripts/*.py", ".git/**/*", "data/*.csv"]
    shipped = {p.as_posix() for p in skeleton_files(byo, include)}
    assert {"docs/style.md", "data/accounts.csv"} <= shipped
    # the notebook and .git never; the script and the solution note quote a gold model
    leaked = {"build_models.ipynb", "scripts/load.py", "docs/solution.md"} & shipped
    assert not leaked
    assert not any(p.startswith(".git/") for p in shipped)


def test_a_short_model_does_not_block_shared_code(tmp_path: Path) -> None:
    """A model below the token floor (``select * from {{ ref('x') }}``) is not searched for:
    every macro would otherwise look like it quoted one."""
    repo = tmp_path / "project"
    shutil.copytree(GOLD, repo)
    (repo / "models" / "marts" / "dim_short.sql").write_text("select * from {{ ref('x') }}\n")
    (repo / "macros" / "helper.sql").write_text(
        "{% macro helper() %}select * from {{ ref('x') }}{% endmacro %}\n"
    )
    assert Path("macros/helper.sql") in skeleton_files(repo)


@pytest.mark.parametrize("pattern", ["../other/*.sql", "/etc/passwd", "docs/../../x"])
def test_listed_files_stay_inside_the_repository(pattern: str) -> None:
    spec = yaml.safe_load((FIXTURES / "task_specs/de-mini/mini-impl/task.yaml").read_text())
    with pytest.raises(ValidationError, match="a glob relative to the repository, inside it"):
        DeImplTask.model_validate({**spec, "workspace_include": [pattern]})
    assert DeImplTask.model_validate({**spec, "workspace_include": ["docs/*.md"]})

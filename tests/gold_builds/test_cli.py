"""``benchforge gold build NAME --repo PATH --dataset LOCATION`` for a maintainer's project
(the Prefect flow, in this process): stored, with its counts printed; clear errors for a
folder that is not a dbt project or not a dataset, and for a name with no shipped repo."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.cli.main import main
from tests.gold_builds.project import write_dataset, write_project

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "artifacts"
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    return root


def test_gold_build_of_your_own_project(
    artifacts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, dataset = write_project(tmp_path / "shop"), write_dataset(tmp_path / "data")
    assert main(["gold", "build", "shop", "--repo", str(repo), "--dataset", str(dataset)]) == 0
    out = capsys.readouterr().out.strip()
    stored = list((artifacts / "gold" / "shop").glob("*/*/build.json"))
    assert len(stored) == 1
    assert out == (f"gold shop: 7 models, 2 tests, 1 seeds; stored at {stored[0].parent}")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--repo", "{tmp}", "--dataset", "{data}"], "{tmp} is not a dbt project"),
        (["--repo", "{repo}", "--dataset", "{tmp}"], "{tmp} is not a dataset"),
        (["--dataset", "{data}"], "no shipped gold repository for 'shop'"),
        (["--repo", "{repo}"], "give --dataset LOCATION"),
    ],
    ids=["not-a-project", "not-a-dataset", "no-repo", "no-dataset"],
)
def test_errors_say_what_to_give(
    args: list[str],
    expected: str,
    artifacts: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = {"tmp": tmp_path, "repo": tmp_path / "shop", "data": tmp_path / "data"}
    write_project(names["repo"])
    write_dataset(names["data"])
    argv = ["gold", "build", "shop", *(a.format(**names) for a in args)]
    assert main(argv) == 2
    assert expected.format(**names) in capsys.readouterr().err
    assert not artifacts.exists() or not list(artifacts.rglob("build.json"))

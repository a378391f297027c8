"""Gold caches are keyed: a candidate holding the data it is scored on (the held-out seed's
warehouse is its input then) can compute the dataset's version, but not the folder its gold
build lies in."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from benchforge.evaluation.de.tasks import CACHE_KEY_FILE, gold_cache_folder
from benchforge.evaluation.gold import dataset_version, repo_version
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES

REPO = FIXTURES / "mini_dbt"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("gold-key") / "mini"
    build_dataset(load_spec(FIXTURES / "mini_domain.yaml"), scale=1, seed=3, out=str(folder))
    return folder


def test_the_gold_folder_name_is_not_computable_from_the_data(
    dataset: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "work" / "gold"
    folder = gold_cache_folder(cache, "mini", REPO, dataset)
    assert folder.parent == cache / "mini"
    public = {dataset_version(dataset), repo_version(REPO)}
    assert not any(part in folder.name for part in public)
    assert gold_cache_folder(cache, "mini", REPO, dataset) == folder  # stable: built once
    key = cache / CACHE_KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text()) == 64
    other = gold_cache_folder(tmp_path / "elsewhere", "mini", REPO, dataset)
    assert other.name != folder.name  # another work root, another key

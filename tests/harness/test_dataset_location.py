"""A task's dataset given as a location (an imported dataset, a release): used as it is, never
synthesized, never paired with a held-out twin; relative locations start at the catalogue
root, like ``repo``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from benchforge.core.errors import BenchforgeError
from benchforge.evaluation.tasks import TaskSpecError, load_task
from benchforge.evaluation.tasks.authoring import dataset_problems
from benchforge.evaluation.tasks.models import DatasetRef
from benchforge.harness.datasets import resolve_datasets, resolve_heldout, task_dataset
from tests.paths import FIXTURES

TASK = FIXTURES / "task_specs" / "de-mini"


class Recorder:
    """A synthesizer that records what it was asked for and fails the test if called where
    no synthesis may happen."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def __call__(self, *, domain: str, scale: float, seed: int, out: str) -> object:
        self.calls.append({"domain": domain, "scale": scale, "seed": seed, "out": out})
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "dataset.json").write_text("{}")
        return None


def catalogue_with(tmp_path: Path, dataset: dict[str, object]) -> Path:
    """A copy of the fixture suite's de_impl task under ``tmp_path/task_specs`` whose dataset
    block is ``dataset``; returns the task folder."""
    folder = tmp_path / "task_specs" / "de-mini"
    shutil.copytree(TASK, folder)
    (tmp_path / "mini_dbt").symlink_to(FIXTURES / "mini_dbt")
    impl = next(p.parent for p in folder.glob("*/task.yaml") if "impl" in p.parent.name)
    data = yaml.safe_load((impl / "task.yaml").read_text())
    data["dataset"] = dataset
    (impl / "task.yaml").write_text(yaml.safe_dump(data))
    return impl


def fake_dataset(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "dataset.json").write_text("{}")
    return folder


def test_location_excludes_scale_and_seed() -> None:
    assert DatasetRef(domain="shop", location="datasets/shop").location == "datasets/shop"
    with pytest.raises(ValueError, match="either location or scale/seed"):
        DatasetRef(domain="shop", location="datasets/shop", seed=3)


def test_relative_location_starts_at_the_catalogue_root(tmp_path: Path) -> None:
    impl = catalogue_with(tmp_path, {"domain": "mini", "location": "datasets/mini"})
    loaded = load_task(impl)
    expected = fake_dataset(tmp_path / "datasets" / "mini")
    synth = Recorder()
    assert task_dataset(loaded, None, tmp_path / "scratch", synthesize=synth) == expected
    dirs = resolve_datasets([loaded], {}, tmp_path / "scratch", synthesize=synth)
    assert dirs == {loaded.key: str(expected.resolve())}
    assert resolve_heldout([loaded], {}, tmp_path / "scratch", synthesize=synth) == {}
    assert synth.calls == []


def test_missing_location_is_an_error_not_a_synthesis(tmp_path: Path) -> None:
    impl = catalogue_with(tmp_path, {"domain": "mini", "location": "datasets/nowhere"})
    synth = Recorder()
    with pytest.raises(BenchforgeError, match="nowhere is not a dataset"):
        task_dataset(load_task(impl), None, tmp_path / "scratch", synthesize=synth)
    assert synth.calls == []


def test_an_override_wins_over_the_location(tmp_path: Path) -> None:
    impl = catalogue_with(tmp_path, {"domain": "mini", "location": "datasets/mini"})
    fake_dataset(tmp_path / "datasets" / "mini")
    other = fake_dataset(tmp_path / "elsewhere")
    loaded = load_task(impl)
    dirs = resolve_datasets([loaded], {"mini": str(other)}, tmp_path / "s", synthesize=Recorder())
    assert dirs[loaded.key] == str(other.resolve())


def test_without_location_the_domain_is_synthesized_at_its_scale_and_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    impl = catalogue_with(tmp_path, {"domain": "mini", "scale": 0.5, "seed": 11})
    synth = Recorder()
    resolve_datasets([load_task(impl)], {}, tmp_path / "scratch", synthesize=synth)
    assert [(c["domain"], c["scale"], c["seed"]) for c in synth.calls] == [("mini", 0.5, 11)]


def test_a_spec_with_both_names_the_field(tmp_path: Path) -> None:
    impl = catalogue_with(tmp_path, {"domain": "mini", "location": "d", "scale": 1})
    with pytest.raises(TaskSpecError, match="location or scale/seed"):
        load_task(impl)


def test_validation_checks_the_location_of_every_role(tmp_path: Path) -> None:
    impl = catalogue_with(tmp_path, {"domain": "mini", "location": "datasets/mini"})
    data = yaml.safe_load((impl / "task.yaml").read_text())
    data["datasets"] = {"primary": data.pop("dataset"), "old": {"domain": "mini", "location": "x"}}
    (impl / "task.yaml").write_text(yaml.safe_dump(data))
    fake_dataset(tmp_path / "datasets" / "mini")
    (problem,) = dataset_problems(load_task(impl))
    assert problem.startswith("datasets.old.location 'x'") and "does not exist" in problem

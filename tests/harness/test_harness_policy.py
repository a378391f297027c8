"""The harness's library logic without Prefect: dataset resolution (with the synthesizer a
caller passes), the sandbox's hiding policy and the model endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchforge.core.artifacts import LAYOUT
from benchforge.core.errors import BenchforgeError
from benchforge.core.records import LlmOptions
from benchforge.core.settings import load_settings
from benchforge.evaluation.families import family_of
from benchforge.evaluation.tasks import LoadedTask, load_tasks
from benchforge.harness.datasets import (
    datasets_by_domain,
    local_dataset,
    resolve_datasets,
    resolve_heldout,
)
from benchforge.harness.endpoints import MOCK_API_KEY, llm_configs, llm_endpoint, uses_mock
from benchforge.harness.sandbox_policy import hidden_paths, work_root
from tests.paths import FIXTURES


class FakeSynthesizer:
    """Writes only the completion record, and remembers what it was asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, int, str]] = []

    def __call__(self, *, domain: str, scale: float, seed: int, out: str) -> object:
        self.calls.append((domain, scale, seed, out))
        Path(out).mkdir(parents=True, exist_ok=True)
        LAYOUT.dataset_record_file(Path(out)).write_text(json.dumps({"seed": seed}))
        return None


@pytest.fixture
def tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[LoadedTask]:
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    return load_tasks(FIXTURES / "task_specs" / "de-mini")


def test_datasets_are_synthesized_once_per_domain_scale_and_seed(
    tasks: list[LoadedTask], tmp_path: Path
) -> None:
    synth = FakeSynthesizer()
    found = resolve_datasets(tasks, {}, tmp_path / "work", synthesize=synth)
    assert set(found) == {t.key for t in tasks}
    assert len(set(found.values())) == 1 and len(synth.calls) == 1
    assert synth.calls[0][:3] == ("mini", 1, 7)
    assert resolve_datasets(tasks, {}, tmp_path / "work", synthesize=synth) == found
    assert len(synth.calls) == 1  # the published dataset is reused
    assert datasets_by_domain(tasks, found) == {"mini": next(iter(found.values()))}


def test_a_given_dataset_is_used_and_never_synthesized(
    tasks: list[LoadedTask], tmp_path: Path
) -> None:
    synth = FakeSynthesizer()
    custom = tmp_path / "custom"
    with pytest.raises(BenchforgeError, match="is not a dataset"):
        resolve_datasets(tasks, {"mini": str(custom)}, tmp_path / "work", synthesize=synth)
    custom.mkdir()
    LAYOUT.dataset_record_file(custom).write_text("{}")
    found = resolve_datasets(tasks, {"mini": str(custom)}, tmp_path / "work", synthesize=synth)
    assert set(found.values()) == {str(custom.resolve())} and synth.calls == []
    # no held-out twin for a custom dataset
    assert resolve_heldout(tasks, {"mini": str(custom)}, tmp_path, synthesize=synth) == {}


def test_heldout_datasets_use_another_seed(tasks: list[LoadedTask], tmp_path: Path) -> None:
    synth = FakeSynthesizer()
    visible = local_dataset("mini", None, tmp_path / "v", 1, 7, synthesize=synth)
    heldout = resolve_heldout(tasks, {}, tmp_path / "work", synthesize=synth)
    # executed families only: a judged blueprint does not depend on the data
    assert set(heldout) == {t.key for t in tasks if family_of(t).heldout}
    assert "de-mini/mini-arch-retention@1" not in heldout
    (folder,) = set(heldout.values())
    assert Path(folder) != visible.resolve()
    assert synth.calls[1][0] == "mini" and synth.calls[1][2] != 7


def test_the_sandbox_hides_artifacts_scratch_repos_and_task_folders(
    tasks: list[LoadedTask],
) -> None:
    settings = load_settings()
    work = work_root(settings)
    hidden = hidden_paths(settings, tasks, work)
    assert str(work) in hidden
    assert str(Path(settings.artifact_root).resolve()) in hidden
    for loaded in tasks:
        assert str(loaded.repo.resolve()) in hidden
        assert str(loaded.folder.parent.resolve()) in hidden
    assert work_root(load_settings(artifact_root="s3://bucket/x")).is_relative_to(Path.home())


def test_the_mock_endpoint_is_started_only_without_a_key(tmp_path: Path) -> None:
    settings = load_settings(artifact_root=str(tmp_path))
    assert uses_mock(settings, calls_models=True) is (settings.openai_api_key is None)
    assert not uses_mock(settings, calls_models=False)
    with llm_endpoint(settings, use_mock=True) as url:
        assert url is not None and url.startswith("http://127.0.0.1")
        configs = llm_configs(settings, ["mock-echo"], url, 4, True, LlmOptions())
    assert configs["mock-echo"].base_url == url
    key = configs["mock-echo"].api_key
    assert key is not None and key.get_secret_value() == MOCK_API_KEY
    assert configs["mock-echo"].concurrency == 4

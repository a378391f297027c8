"""The catalogue's entries: what each task scores (read from files), its difficulty, and the
latest stored result of each agent (read through the run store's own API)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.core.errors import ConfigError
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.models import DatasetRef
from benchforge.harness.catalogue_page import collect_catalogue
from benchforge.harness.catalogue_page.collect import dataset_info
from benchforge.harness.catalogue_page.models import CatalogueEntry
from tests.catalogue_page.catalogue import (
    ARCH,
    EVOL,
    IMPL,
    SUITE,
    at,
    stored_runs,
    write_catalogue,
)


def by_id(entries: list[CatalogueEntry]) -> dict[str, CatalogueEntry]:
    return {e.task_id: e for e in entries}


def test_nodes_scored_and_difficulty_come_from_the_files(tmp_path: Path) -> None:
    entries = by_id(collect_catalogue(write_catalogue(tmp_path), None))
    impl, evol, arch = entries[IMPL], entries[EVOL], entries[ARCH]
    # every model under model-paths (not target/), less the one of node weight 0
    assert (impl.nodes_scored, impl.scored_unit) == (3, "models")
    assert impl.scored_names == ["fct_orders", "stg_customers", "stg_orders"]
    # added + edited; the whitespace-only rewrite of stg_orders is not a change
    assert (evol.nodes_scored, evol.scored_unit) == (2, "changed models")
    assert evol.scored_names == ["fct_order_sizes", "fct_orders"]
    assert (arch.nodes_scored, arch.scored_unit, arch.scored_names) == (
        3,
        "rubric items",
        ["BA1", "TF1", "DQ1"],
    )
    assert (impl.difficulty, impl.difficulty_source) == ("easy", "derived")
    assert (evol.difficulty, evol.difficulty_source) == ("hard", "authored")
    assert [e.family for e in entries.values()] == ["de_arch", "de_evol", "de_impl"]
    assert impl.dataset.label == "tiny · scale 0.5 · seed 11"
    assert all(e.results == [] for e in entries.values())


def test_an_unknown_difficulty_names_the_file_and_the_nearest_level(tmp_path: Path) -> None:
    root = write_catalogue(tmp_path)
    task_file = root / SUITE / EVOL / "task.yaml"
    task_file.write_text(task_file.read_text().replace("difficulty:hard", "difficulty:hrad"))
    with pytest.raises(ConfigError) as err:
        collect_catalogue(root, None)
    assert str(task_file) in str(err.value)
    assert "did you mean 'difficulty:hard'" in str(err.value)


def test_latest_run_wins_per_task_and_agent(tmp_path: Path) -> None:
    artifacts = stored_runs(tmp_path / "artifacts")
    entries = by_id(collect_catalogue(write_catalogue(tmp_path), artifacts))

    impl = {r.label: r for r in entries[IMPL].results}
    assert list(impl) == ["oracle", "react-de · gpt-x"]
    oracle = impl["oracle"]  # a-new, not r-old's 50
    assert (oracle.run_id, oracle.run_created_at) == ("a-new", at(5))
    assert oracle.metrics == {"cfs": 90.0, "cs": 95.0, "sr": 50.0}  # the infra error left out
    assert oracle.primary_score == 95.0
    assert (oracle.trials, oracle.scored, oracle.passed, oracle.infra_errors) == (3, 2, 1, 1)
    # react-de ran only in the older run: that run is its latest
    react = impl["react-de · gpt-x"]
    assert (react.run_id, react.metrics["cs"], react.passed, react.scored) == ("r-old", 80.0, 0, 1)

    (evol,) = entries[EVOL].results
    assert (evol.run_id, evol.primary_score, evol.passed) == ("r-old", 100.0, 1)
    assert entries[ARCH].results == []


def test_the_runs_folder_itself_is_accepted_and_a_missing_store_is_an_error(
    tmp_path: Path,
) -> None:
    artifacts = stored_runs(tmp_path / "artifacts")
    root = write_catalogue(tmp_path)
    via_runs = by_id(collect_catalogue(root, artifacts / "runs"))
    assert via_runs[IMPL].results == by_id(collect_catalogue(root, artifacts))[IMPL].results
    with pytest.raises(ConfigError, match="no artifact store at"):
        collect_catalogue(root, tmp_path / "nowhere")


class _LocatedRef(DatasetRef):
    """DatasetRef with the location the lead is adding (an imported dataset)."""

    location: str | None = None


def test_a_dataset_location_is_shown_instead_of_scale_and_seed(tmp_path: Path) -> None:
    task = load_task(write_catalogue(tmp_path) / SUITE / IMPL)
    ref = _LocatedRef(domain="tiny", location="s3://bucket/datasets/tiny-import")
    located = task.model_copy(update={"spec": task.spec.model_copy(update={"dataset": ref})})
    info = dataset_info(located)
    assert (info.location, info.scale, info.seed) == (
        "s3://bucket/datasets/tiny-import",
        None,
        None,
    )
    assert info.label == "s3://bucket/datasets/tiny-import"
    assert dataset_info(task).label == "tiny · scale 0.5 · seed 11"

"""The chunks of a run on a local Dask cluster (prefect-dask), worker processes and all."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.agents.mock_llm import run_server
from benchforge.core.artifacts import open_store
from benchforge.flows.runs import run_suite
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")


def test_run_suite_on_a_local_dask_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    artifacts = tmp_path / "artifacts"
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "dataset.json").write_text("{}")
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(artifacts))
    with run_server() as server:
        monkeypatch.setenv("BENCHFORGE_OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("BENCHFORGE_OPENAI_API_KEY", "test-key")
        summary = run_suite(
            suites=["de-mini"],
            agents=["single-call", "null"],
            models=["mock-script:single-call"],
            epochs=6,
            run_id="dask",
            tasks_root=TASKS_ROOT,
            task_ids=["mini-arch-retention"],
            datasets={"mini": str(dataset)},
            chunk_size=3,
            dask="local:2",
        )
        requests = server.stats().requests
    assert (summary.trials, summary.ran, summary.chunks, summary.infra_errors) == (12, 12, 4, 0)
    assert requests == 6  # single-call's six epochs, each one model call, none repeated
    run = RunStore(open_store(str(artifacts)), "dask")
    results = [run.read_result(slug) for slug in run.finished_slugs()]
    assert sorted(r.key.epoch for r in results if r.key.agent == "single-call") == list(range(6))
    assert all(r.status == "completed" for r in results)

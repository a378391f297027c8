"""Runs that share one artifact root at once cannot corrupt each other: three `benchforge run`
processes on one de_evol task (two of them the same run, as two nightlies of one date with the
same parameters are), then two `benchforge score-run --rescore` of that run at once. Every
command succeeds, every trial is stored once, and every score is the one a lone run gives.

Before the shared scratch folders were published once under a key of their content, the gold
v2 overlay was copied over itself by each process (rmtree + copytree) and its scoring failed
with FileNotFoundError, and a half-copied overlay could be hashed into a gold-cache key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchforge.core.artifacts import open_store
from benchforge.evaluation.families import family_of
from benchforge.evaluation.tasks import load_task
from benchforge.harness.concurrent_check import score_concurrently
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES
from tests.support.datasets import mini_dataset

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")
EVOL = "mini-evol-won-by-industry"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_dataset(tmp_path_factory.mktemp("ds") / "mini")


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "benchforge.cli", *command],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def _wait_all(procs: list[tuple[subprocess.Popen[bytes], Path]]) -> None:
    for proc, _ in procs:
        proc.wait(timeout=900)
    failed = [(p.args, log.read_text()[-3000:]) for p, log in procs if p.returncode != 0]
    assert not failed, failed


def test_three_runs_and_two_rescorings_at_once_agree(tmp_path: Path, dataset: Path) -> None:
    root = tmp_path / "artifacts"
    env = {
        **os.environ,
        "BENCHFORGE_ARTIFACT_ROOT": str(root),
        "BENCHFORGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("BENCHFORGE_OPENAI_API_KEY", None)
    run = [
        "run",
        "--suite",
        "de-mini",
        "--tasks-root",
        TASKS_ROOT,
        "--task",
        EVOL,
        "--agent",
        "oracle",
        "--agent",
        "null",
        "--dataset",
        f"mini={dataset}",
        "--run-id",
    ]
    _wait_all(
        [
            (_start([*run, run_id], env, tmp_path / f"run-{i}.log"), tmp_path / f"run-{i}.log")
            for i, run_id in enumerate(["nightly", "nightly", "backfill"])
        ]
    )
    _wait_all(
        [
            (
                _start(["score-run", "nightly", "--rescore"], env, tmp_path / f"score-{i}.log"),
                tmp_path / f"score-{i}.log",
            )
            for i in range(2)
        ]
    )
    store = open_store(str(root))
    for run_id in ("nightly", "backfill"):
        stored = RunStore(store, run_id)
        assert sorted(stored.finished_slugs()) == sorted(stored.scored_slugs())
        scores = {s.key.agent: s for s in stored.read_scores()}
        assert len(stored.read_scores()) == 2, run_id
        assert scores["oracle"].metrics == {"cs": 100.0, "cfs": 100.0, "sr": 100.0}, run_id
        assert scores["null"].metrics == {"cs": 0.0, "cfs": 0.0, "sr": 0.0}, run_id
        assert {s.status for s in scores.values()} == {"scored"}
    # gold v2 published whole under a key of its inputs; no staging folder left behind
    overlays = [p for p in (root / "work").rglob("gold_v2-*") if p.is_dir()]
    assert overlays and all((p / "dbt_project.yml").is_file() for p in overlays)
    assert not [p for p in (root / "work").rglob(".gold_v2-*")]


def test_concurrent_scorers_of_one_work_folder_agree_and_a_failure_is_named(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nightly's longer version (verify_tasks(concurrent_scorers=3)), here with two."""
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    task = load_task(FIXTURES / "task_specs" / "de-mini" / EVOL)
    solution = family_of(task).solution(task, tmp_path / "solutions", dataset)
    assert solution is not None
    agreed = score_concurrently(task.key, task.folder, solution, dataset, tmp_path / "w", 2)
    assert agreed.ok, agreed
    assert agreed.metrics == [{"cs": 100.0, "cfs": 100.0, "sr": 100.0}] * 2
    broken = score_concurrently(
        task.key, task.folder, solution, tmp_path / "no-dataset", tmp_path / "w2", 2
    )
    assert not broken.ok and len(broken.failures) == 2
    assert "scorer 0 exited" in str(broken.problem())

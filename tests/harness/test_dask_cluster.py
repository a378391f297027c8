"""A run on a real Dask cluster: a ``dask scheduler`` and two ``dask worker`` processes on
loopback, started here as an operator would, and ``benchforge run --dask tcp://...`` from the
CLI (which scores on the cluster too, as does ``score-run --dask``). The trials and their scores
are those of the same run done locally; and when one worker
is killed in the middle of the run, the run still completes, no trial lost or run twice.

The workers reach the run's Prefect API through PREFECT_API_URL (this session's server: a
command's ephemeral server has no fixed address) and the mock LLM server the run starts on
loopback; the artifact root is a local folder both the CLI and the workers see (one machine
here; on several it is an s3:// store)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchforge.core.artifacts import open_store
from benchforge.core.records import TrialScore
from benchforge.harness.store import RunStore
from tests.integration.test_readme import DASK_SECTION, section_commands
from tests.paths import FIXTURES, REPO_ROOT
from tests.support.datasets import mini_dataset

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

BIN = Path(sys.executable).parent
TASK = "mini-evol-won-by-industry"
AGENTS = ["oracle", "null", "react-de"]
MODEL = "mock-script:react-de-mini-solve"
EPOCHS = 2  # 2 x (oracle, null, react-de): six trials, chunks of one, spread over two workers


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    """A scheduler and its workers, each a process group of its own (killed at the end)."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env, self.logs = env, logs
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        # the README's commands (its "One run on a Dask cluster" section), on loopback
        scheduler, worker, _ = section_commands(DASK_SECTION)
        scheduler = scheduler.replace("0.0.0.0", "127.0.0.1").replace("8786", str(self.port))
        worker = worker.replace("scheduler-host:8786", f"127.0.0.1:{self.port}")
        self.scheduler = self._start("scheduler", [str(BIN / "dask"), *scheduler.split()[1:]])
        self._wait_for_port()
        self.workers = [
            self._start(f"worker-{i}", [str(BIN / "dask"), *worker.split()[1:], "--name", f"w{i}"])
            for i in range(2)
        ]
        self._wait_for_workers(2)

    def _start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        return subprocess.Popen(
            argv, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def _wait_for_port(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.2)
        raise AssertionError("the dask scheduler did not start")

    def _wait_for_workers(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(n, timeout=120)

    def kill_worker(self, index: int) -> None:
        os.killpg(self.workers[index].pid, signal.SIGKILL)

    def stop(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path_factory.mktemp("dask")
    dataset = mini_dataset(root / "mini")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("BENCHFORGE_OPENAI_API_KEY", "BENCHFORGE_OPENAI_BASE_URL")
    }
    env |= {
        "BENCHFORGE_ARTIFACT_ROOT": str(root / "artifacts"),
        "BENCHFORGE_CACHE_DIR": str(root / "cache"),
        "PYTHONPATH": str(REPO_ROOT),
        "MINI_DATASET": str(dataset),
    }
    yield root, env


def _run(env: dict[str, str], run_id: str, *extra: str) -> subprocess.Popen[str]:
    argv = [
        sys.executable, "-m", "benchforge.cli", "run", "--suite", "de-mini",
        "--tasks-root", str(FIXTURES / "task_specs"), "--task", TASK,
        *(a for agent in AGENTS for a in ("--agent", agent)), "--model", MODEL,
        "--epochs", str(EPOCHS), "--chunk-size", "1", "--dataset", f"mini={env['MINI_DATASET']}",
        "--run-id", run_id, *extra,
    ]  # fmt: skip
    return subprocess.Popen(  # from the checkout: the mock scripts name files under it
        argv, cwd=REPO_ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


def _finish(proc: subprocess.Popen[str]) -> str:
    out, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, out[-4000:]
    return out


def _scores(env: dict[str, str], run_id: str) -> dict[str, TrialScore]:
    run = RunStore(open_store(env["BENCHFORGE_ARTIFACT_ROOT"]), run_id)
    return {s.key.slug: s for s in run.read_scores()}


def _same(score: TrialScore) -> tuple[object, ...]:
    return (score.status, score.metrics, score.success, score.termination)


def test_a_run_on_a_cluster_is_the_local_run(setup: tuple[Path, dict[str, str]]) -> None:
    root, env = setup
    _finish(_run(env, "local"))
    cluster = Cluster(env, root)
    try:
        out = _finish(_run(env, "on-cluster", "--dask", cluster.address))
        # scored again on the cluster with nothing kept (no gold build, no score beside it,
        # none in the score store): the gold builds and the scorings cost dbt commands on
        # the workers, counted there and summed here
        shutil.rmtree(Path(env["BENCHFORGE_ARTIFACT_ROOT"]) / "work" / "scoring")
        rescore = subprocess.run(
            [sys.executable, "-m", "benchforge.cli", "score-run", "on-cluster", "--rescore",
             "--fresh", "--dask", cluster.address],
            cwd=REPO_ROOT, env=env, text=True, capture_output=True, timeout=900,
        )  # fmt: skip
    finally:
        cluster.stop()
    assert "6 trials, 0 already done, 6 run (0 infrastructure errors)" in out
    local, remote = _scores(env, "local"), _scores(env, "on-cluster")
    assert len(local) == 6 and set(local) == set(remote)
    assert {slug: _same(s) for slug, s in remote.items()} == {
        slug: _same(s) for slug, s in local.items()
    }
    assert sorted(s.metrics["sr"] for s in remote.values()) == [0, 0, 100, 100, 100, 100]
    # every chunk ran on a worker of the cluster: their logs show the trials and the scoring
    worker_logs = "".join((root / f"worker-{i}.log").read_text() for i in range(2))
    assert "trial-chunk" in worker_logs and "score-chunk" in worker_logs
    assert rescore.returncode == 0, rescore.stdout[-3000:] + rescore.stderr[-3000:]
    assert "scored 6 trials" in rescore.stdout
    spent = re.search(
        r"dbt invocations (\d+), judge requests 0, kept scores used 0", rescore.stdout
    )
    assert spent and int(spent.group(1)) > 0, rescore.stdout
    rescored = _scores(env, "on-cluster")
    assert {slug: _same(s) for slug, s in rescored.items()} == {
        slug: _same(s) for slug, s in local.items()
    }


def test_a_worker_killed_mid_run_loses_no_trial(setup: tuple[Path, dict[str, str]]) -> None:
    root, env = setup
    cluster = Cluster(env, root)
    try:
        proc = _run(env, "killed", "--dask", cluster.address)
        run = RunStore(open_store(env["BENCHFORGE_ARTIFACT_ROOT"]), "killed")
        deadline = time.monotonic() + 600
        while not run.finished_slugs() and time.monotonic() < deadline:
            time.sleep(0.5)
        done_before = {slug: run.read_result(slug) for slug in run.finished_slugs()}
        assert done_before, "no trial finished"
        cluster.kill_worker(0)
        out = _finish(proc)
    finally:
        cluster.stop()
    # (six one-trial chunks on two one-thread workers: when the first trial finishes, both
    # workers are busy, so the killed one held a chunk; the scheduler saw it go)
    assert "Remove worker addr" in (root / "scheduler.log").read_text()
    finished = run.finished_slugs()
    assert len(finished) == len(set(finished)) == 6, out[-3000:]
    results = {slug: run.read_result(slug) for slug in finished}
    assert all(r.status == "completed" for r in results.values()), out[-3000:]
    # what finished before the kill was not run again (its chunk, recomputed elsewhere, skips it)
    for slug, before in done_before.items():
        assert results[slug].started_at == before.started_at, slug
    assert len(_scores(env, "killed")) == 6

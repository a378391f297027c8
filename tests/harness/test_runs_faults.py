"""Faults at run level: kill -9 of a running run_suite, and hostile agent code through the
``command`` agent contract. Each must be contained and lose nothing."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from benchforge.agents.mock_llm import FaultConfig, MockServerConfig, run_server
from benchforge.core.artifacts import open_store
from benchforge.core.records import AgentLimits
from benchforge.flows.runs import run_suite
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES
from tests.paths import REPO_ROOT as PROJECT_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")
ARCH = "mini-arch-retention"
GOLD_V2 = (
    FIXTURES
    / "task_specs"
    / "de-mini"
    / "mini-evol-won-by-industry"
    / "gold_v2"
    / "models"
    / "marts"
    / "fct_won_revenue_by_industry.sql"
)


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "artifacts"
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    return root


@pytest.fixture
def fake_dataset(tmp_path: Path) -> Path:
    """The agents here read no data; a dataset record is all run_suite needs."""
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "dataset.json").write_text("{}")
    (folder / "secret-data.txt").write_text("read-only data\n")
    return folder


@pytest.fixture
def slow_mock(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with run_server(config=MockServerConfig(faults=FaultConfig(latency_ms=400))) as server:
        monkeypatch.setenv("BENCHFORGE_OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("BENCHFORGE_OPENAI_API_KEY", "test-key")
        yield server.url


def test_kill_9_then_rerun_loses_redoes_and_duplicates_nothing(
    artifacts: Path, fake_dataset: Path, slow_mock: str
) -> None:
    epochs = 24
    command = [
        sys.executable,
        "-m",
        "benchforge.cli",
        "run",
        "--suite",
        "de-mini",
        "--tasks-root",
        TASKS_ROOT,
        "--task",
        ARCH,
        "--agent",
        "single-call",
        "--model",
        "mock-script:single-call",
        "--epochs",
        str(epochs),
        "--run-id",
        "killed",
        "--concurrency",
        "2",
        "--chunk-size",
        "4",
        "--no-score",
        "--dataset",
        f"mini={fake_dataset}",
    ]
    proc = subprocess.Popen(
        command,
        env=dict(os.environ),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    trials = artifacts / "runs" / "killed" / "trials"
    deadline = time.monotonic() + 120
    try:
        while len(list(trials.rglob("result.json"))) < 5:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run never finished 5 trials"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = {p: p.read_bytes() for p in trials.rglob("result.json")}
    assert 5 <= len(before) < epochs

    summary = run_suite(
        suites=["de-mini"],
        agents=["single-call"],
        models=["mock-script:single-call"],
        epochs=epochs,
        run_id="killed",
        tasks_root=TASKS_ROOT,
        task_ids=[ARCH],
        datasets={"mini": str(fake_dataset)},
        concurrency=4,
    )
    after = {p: p.read_bytes() for p in trials.rglob("result.json")}
    assert summary.skipped == len(before) and summary.ran == epochs - len(before)
    assert len(after) == epochs  # none lost, none duplicated (one result per trial key)
    assert all(after[p] == content for p, content in before.items())  # none redone
    run = RunStore(open_store(str(artifacts)), "killed")
    epochs_done = sorted(run.read_result(s).key.epoch for s in run.finished_slugs())
    assert epochs_done == list(range(epochs))
    leftovers = artifacts / "work" / "workspaces" / "killed"
    assert not leftovers.exists() or not any(leftovers.rglob("TASK.md"))


HOSTILE = {
    "read-gold": f"""
import pathlib
found = []
for p in {[str(GOLD_V2), str(PROJECT_ROOT / "dbt_projects" / "crm" / "dbt_project.yml")]!r}:
    try:
        found.append(pathlib.Path(p).read_text())
    except OSError as e:
        found.append(f"blocked: {{e}}")
pathlib.Path("answer.txt").write_text("\\n".join(found))
""",
    "write-outside": """
import pathlib, sys
for p in sys.argv[1:]:
    try:
        pathlib.Path(p).write_text("pwned")
    except OSError:
        pass
pathlib.Path("inside.txt").write_text("ok")
""",
    "fork-bomb": """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
""",
    "infinite-loop": "while True:\n    pass\n",
    "allocate-8gb": """
block = bytearray(8 * 2**30)
block[::4096] = b"x" * len(block[::4096])
""",
    "network": """
import pathlib, socket, sys
outcomes = []
for host, port in [("127.0.0.1", int(sys.argv[1])), ("8.8.8.8", 53)]:
    try:
        socket.create_connection((host, port), timeout=2).close()
        outcomes.append(f"connected {host}")
    except OSError as e:
        outcomes.append(f"blocked {host}: {e}")
pathlib.Path("answer.txt").write_text("\\n".join(outcomes))
""",
}


def test_hostile_agents_are_contained_and_the_run_goes_on(
    artifacts: Path, fake_dataset: Path, tmp_path: Path
) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    outside = tmp_path / "outside.txt"
    in_repo = PROJECT_ROOT / "HOSTILE_WRITE.txt"
    extra = {
        "write-outside": [str(outside), str(in_repo), "/etc/benchforge-hostile"],
        "network": [str(port)],
    }
    agents = []
    for name, code in HOSTILE.items():
        script = tmp_path / f"{name}.py"
        script.write_text(code)
        config = tmp_path / f"{name}.yaml"
        wall = {"infinite-loop": 3, "fork-bomb": 8}.get(name)
        config.write_text(
            yaml.safe_dump(
                {
                    "name": name,
                    "argv": ["python3", str(script), *extra.get(name, [])],
                    "read_only": [str(script)],
                    **({"wall_s": wall} if wall else {}),
                }
            )
        )
        agents.append(f"command={config}")
    agents.append("null")
    t0 = time.monotonic()
    summary = run_suite(
        suites=["de-mini"],
        agents=agents,
        run_id="hostile",
        tasks_root=TASKS_ROOT,
        task_ids=[ARCH],
        datasets={"mini": str(fake_dataset)},
        concurrency=8,
        limits=AgentLimits(wall_s=60, memory_mb=512, max_processes=64),
    )
    listener.close()
    assert summary.ran == len(HOSTILE) + 1 and summary.infra_errors == 0
    assert time.monotonic() - t0 < 60
    run = RunStore(open_store(str(artifacts)), "hostile")
    results = {run.read_result(s).key.agent: run.read_result(s) for s in run.finished_slugs()}

    gold = results["read-gold"].answer or ""
    assert GOLD_V2.read_text() not in gold and "blocked" in gold
    assert not outside.exists() and not in_repo.exists()
    assert not Path("/etc/benchforge-hostile").exists()
    assert "inside.txt" in results["write-outside"].output_files
    assert results["fork-bomb"].termination in ("wall_clock", "agent_error")
    assert results["infinite-loop"].termination == "wall_clock"
    assert results["allocate-8gb"].termination == "agent_error"
    network = results["network"].answer or ""
    assert "connected" not in network and network.count("blocked") == 2
    assert results["null"].termination == "finished"

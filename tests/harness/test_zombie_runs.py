"""No zombie runs: a ``benchforge run`` killed with SIGKILL leaves its flow run RUNNING; the next
Benchforge command marks it CRASHED (its process is gone), and resuming the run id completes
it with every trial exactly once. A run on another host is judged by its heartbeat."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import UUID

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName
from prefect.client.schemas.objects import FlowRun
from prefect.states import Running

from benchforge.agents.mock_llm import FaultConfig, MockServerConfig, run_server
from benchforge.core.artifacts import open_store
from benchforge.flows.liveness import mark_dead_runs
from benchforge.harness.liveness import (
    LABEL_HEARTBEAT,
    LABEL_HOST,
    LABEL_PID,
    LABEL_STARTED,
    ProcessRecord,
    why_dead,
)
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES, REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")
ARCH = "mini-arch-retention"
EPOCHS = 16


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "artifacts"
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    return root


@pytest.fixture
def fake_dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "dataset.json").write_text("{}")
    return folder


@pytest.fixture
def slow_mock(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with run_server(config=MockServerConfig(faults=FaultConfig(latency_ms=400))) as server:
        monkeypatch.setenv("BENCHFORGE_OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("BENCHFORGE_OPENAI_API_KEY", "test-key")
        yield server.url


def flow_runs(name: str) -> list[FlowRun]:
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name]))
        )
    return sorted(runs, key=lambda run: run.created or datetime.min.replace(tzinfo=UTC))


def state_of(flow_run_id: UUID) -> str:
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(flow_run_id).state
    assert state is not None
    return state.type.value


def test_a_killed_run_is_marked_crashed_by_the_next_command_and_resumes(
    artifacts: Path, fake_dataset: Path, slow_mock: str
) -> None:
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
        str(EPOCHS),
        "--run-id",
        "zombie",
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
        cwd=REPO_ROOT,
        env=dict(os.environ),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    trials = artifacts / "runs" / "zombie" / "trials"
    deadline = time.monotonic() + 180
    try:
        while len(list(trials.rglob("result.json"))) < 3:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run never finished 3 trials"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = {p: p.read_bytes() for p in trials.rglob("result.json")}
    assert len(before) < EPOCHS
    [killed] = flow_runs("run-suite-zombie")
    assert state_of(killed.id) == "RUNNING"  # what the server is left with
    assert killed.labels[LABEL_PID] == str(proc.pid)

    # the next command (here: the resume itself) marks it CRASHED, then runs the rest
    resumed = subprocess.run(
        command, cwd=REPO_ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "flow run run-suite-zombie marked CRASHED" in resumed.stderr
    assert f"process {proc.pid} on {socket.gethostname()} has exited" in resumed.stderr
    assert state_of(killed.id) == "CRASHED"
    runs = flow_runs("run-suite-zombie")
    assert [state_of(run.id) for run in runs] == ["CRASHED", "COMPLETED"]

    after = {p: p.read_bytes() for p in trials.rglob("result.json")}
    assert len(after) == EPOCHS  # none lost, none duplicated
    assert all(after[p] == content for p, content in before.items())  # none redone
    run = RunStore(open_store(str(artifacts)), "zombie")
    epochs = sorted(run.read_result(s).key.epoch for s in run.finished_slugs())
    assert epochs == list(range(EPOCHS))


@flow(name="liveness-probe")
def probe() -> None:
    """Only here to own the flow runs this test creates by hand."""


def running_flow_run(labels: dict[str, str | int | float | bool]) -> UUID:
    with get_client(sync_client=True) as client:
        run = client.create_flow_run(probe, name=f"probe-{time.monotonic_ns()}")
        client.set_flow_run_state(run.id, Running(), force=True)
        client.update_flow_run_labels(run.id, labels)
    return run.id


def test_another_hosts_run_is_judged_by_its_heartbeat() -> None:
    now = datetime.now(UTC)
    elsewhere = {LABEL_HOST: "some-other-host", LABEL_PID: "4242", LABEL_STARTED: "1.0"}
    stale = running_flow_run({**elsewhere, LABEL_HEARTBEAT: (now - timedelta(hours=1)).isoformat()})
    fresh = running_flow_run({**elsewhere, LABEL_HEARTBEAT: now.isoformat()})
    mine = running_flow_run(ProcessRecord.current().labels())  # this process: alive
    unlabelled = running_flow_run({})

    crashed = {run.id for run in mark_dead_runs(stale_after_s=300)}
    assert stale in crashed and not crashed & {fresh, mine, unlabelled}
    assert state_of(stale) == "CRASHED"
    assert {state_of(i) for i in (fresh, mine, unlabelled)} == {"RUNNING"}


def test_a_reused_pid_is_not_the_recorded_process() -> None:
    me = ProcessRecord.current()
    labels: dict[str, object] = {**me.labels(), LABEL_STARTED: str(me.started - 3600)}
    assert "another process's now" in (why_dead(labels) or "")
    assert why_dead(dict(me.labels())) is None

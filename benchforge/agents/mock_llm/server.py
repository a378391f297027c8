"""Run the mock server: in a background thread (tests, demos) or in the foreground (CLI)."""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Self

import uvicorn

from benchforge.agents.mock_llm.app import MockState, MockStats, create_app
from benchforge.agents.mock_llm.config import FaultConfig, MockServerConfig
from benchforge.agents.mock_llm.policies import Policy
from benchforge.core.errors import BenchforgeError


class MockServerHandle:
    """A running mock server. ``url`` is the OpenAI base URL (ends in ``/v1``)."""

    def __init__(
        self,
        server: uvicorn.Server,
        thread: threading.Thread,
        state: MockState,
        host: str,
        port: int,
    ) -> None:
        self._server = server
        self._thread = thread
        self.state = state
        self.host = host
        self.port = port
        self.url = f"http://{host}:{port}/v1"

    def stats(self) -> MockStats:
        return self.state.stats()

    def reset(self) -> None:
        """Zero the counters and restart fault decisions from arrival 0."""
        self.state.reset()

    def stop(self, timeout_s: float = 10.0) -> None:
        self.state.stopping.set()
        self._server.should_exit = True
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            raise BenchforgeError(f"mock LLM server at {self.url} did not stop in {timeout_s}s")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise BenchforgeError(f"mock LLM server cannot listen on {host}:{port}: {exc}") from exc
    sock.listen(2048)
    sock.setblocking(False)
    return sock


def _uvicorn_server(
    config: MockServerConfig, policies: Mapping[str, Policy] | None
) -> tuple[uvicorn.Server, MockState]:
    app = create_app(config, policies=policies)
    state: MockState = app.state.mock
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            # uvicorn's own dictConfig would replace the process's logging handlers (inside a
            # Prefect flow that deadlocks on Prefect's API log handler); keep the host's.
            log_config=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
    )
    return server, state


def run_server(
    host: str = "127.0.0.1",
    port: int = 0,
    config: MockServerConfig | None = None,
    *,
    policies: Mapping[str, Policy] | None = None,
    startup_timeout_s: float = 10.0,
) -> MockServerHandle:
    """Start the mock in a background thread and return once it accepts connections.
    ``port=0`` picks a free port (see ``handle.port``)."""
    config = config or MockServerConfig()
    server, state = _uvicorn_server(config, policies)
    sock = _bind(host, port)
    bound_port = int(sock.getsockname()[1])
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"mock-llm-{bound_port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise BenchforgeError(f"mock LLM server on {host}:{bound_port} did not start")
        time.sleep(0.01)
    return MockServerHandle(server, thread, state, host, bound_port)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The mock's options, for ``python -m benchforge.agents.mock_llm`` and ``benchforge
    mock-llm``."""
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--latency-ms", default="0", help="fixed latency, or a range MIN-MAX (uniform)"
    )
    parser.add_argument(
        "--rate-429", type=float, default=0.0, help="share of requests answered 429"
    )
    parser.add_argument("--rate-500", type=float, default=0.0, help="share answered 500")
    parser.add_argument(
        "--rate-timeout", type=float, default=0.0, help="share stalled past the client's timeout"
    )
    parser.add_argument("--retry-after-s", type=float, default=1.0, help="Retry-After of 429s")
    parser.add_argument("--timeout-sleep-s", type=float, default=30.0, help="stall of a timeout")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault decisions")
    parser.add_argument("--scripts-dir", default=None, help="folder of mock scripts (yaml/json)")
    parser.add_argument(
        "--no-builtin-scripts",
        action="store_true",
        help="do not load the scripts shipped in agents/mock_llm/scripts",
    )
    parser.add_argument(
        "--fallback-model",
        default=None,
        help="answer non-mock model names as this mock model, e.g. mock-echo",
    )


def config_from_args(args: argparse.Namespace) -> MockServerConfig:
    low, dash, high = str(args.latency_ms).partition("-")
    faults = FaultConfig(
        latency_ms=float(low),
        latency_ms_max=float(high) if dash else None,
        rate_429=args.rate_429,
        rate_500=args.rate_500,
        rate_timeout=args.rate_timeout,
        retry_after_s=args.retry_after_s,
        timeout_sleep_s=args.timeout_sleep_s,
        seed=args.seed,
    )
    return MockServerConfig(
        faults=faults,
        scripts_dir=args.scripts_dir,
        builtin_scripts=not getattr(args, "no_builtin_scripts", False),
        fallback_model=args.fallback_model,
    )


def serve(args: argparse.Namespace) -> int:
    """Run in the foreground until Ctrl-C (uvicorn handles the signals)."""
    config = config_from_args(args)
    server, _ = _uvicorn_server(config, None)
    sock = _bind(args.host, args.port)
    port = int(sock.getsockname()[1])
    print(f"benchforge mock LLM: base URL http://{args.host}:{port}/v1", flush=True)
    server.run(sockets=[sock])
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchforge.agents.mock_llm",
        description="A local OpenAI-compatible chat-completions server with scripted policies "
        "and fault injection, for tests and the offline demo.",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return serve(args)
    except (BenchforgeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

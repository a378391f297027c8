"""Benchmark: orchestration overhead of ``run_suite`` against a bare asyncio loop.

Both sides run the ``single-call`` agent (one chat completion per trial) against the Benchforge
mock server on loopback, with the same trial concurrency:

(a) --trials (2,000) trials at zero latency: wall time through ``run_suite`` (Prefect flow,
    chunked tasks, private workspaces, sandbox-ready environment, submission + result artifacts
    per trial) and through a bare asyncio loop calling the same agent (the floor). Prints the
    orchestration overhead per trial = (suite - floor) / trials; target <= 2 ms. For scale, one
    Prefect task per trial costs about 8 ms here.
(b) the same at 250 ms latency and concurrency 32: throughput through ``run_suite`` over the
    bare loop's; target >= 0.8.

The trials are the two de-mini fixture tasks x N epochs; a Prefect server is started and warmed
before timing, so its start-up is not counted. Usage: python bench/fanout.py [--trials 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prefect import flow  # noqa: E402

from benchforge.agents.builtin.single_call import SingleCallAgent  # noqa: E402
from benchforge.agents.mock_llm import FaultConfig, MockServerConfig, run_server  # noqa: E402
from benchforge.agents.protocol import TaskEnvironment, Trajectory  # noqa: E402
from benchforge.core.artifacts import LAYOUT  # noqa: E402
from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig  # noqa: E402
from benchforge.core.records import AgentLimits, TrialKey  # noqa: E402
from benchforge.core.sandbox import default_backend  # noqa: E402

TASKS_ROOT = str(ROOT / "tests" / "fixtures" / "task_specs")
TASK_IDS = ["mini-evol-won-by-industry", "mini-arch-retention"]
MODEL = "mock-script:single-call"
OVERHEAD_TARGET_MS = 2.0
CHUNK_SIZE = 100  # trials per Prefect task
THROUGHPUT_TARGET = 0.8


@flow(name="warm-up")
def _warm_up() -> int:
    return 1


async def bare_loop(base_url: str, trials: int, concurrency: int, scratch: Path) -> float:
    """The floor: the same agent and client, no orchestration at all."""
    agent = SingleCallAgent()
    config = LlmConfig(
        role="agent", model=MODEL, base_url=base_url, api_key="bench", concurrency=concurrency
    )
    workspace = scratch / "floor"
    workspace.mkdir(parents=True, exist_ok=True)
    slots = asyncio.Semaphore(concurrency)
    sandbox = default_backend()
    async with LlmClient(config) as llm:

        async def one(i: int) -> None:
            key = TrialKey(
                suite="bench",
                task_id="t",
                task_version="1",
                agent="single-call",
                agent_config_hash="0",
                model=MODEL,
                epoch=i,
            )
            trajectory = Trajectory()  # the model step is recorded, as in a trial
            env = TaskEnvironment(
                key=key,
                family="de_evol",
                prompt="Say done.",
                workspace_path=workspace,
                data_dir=None,
                tools=[],
                limits=AgentLimits(),
                sandbox=sandbox,
                llm=LlmClientView(llm, steps=trajectory, epoch=i),
                trajectory=trajectory,
            )
            async with slots:
                await agent.run(env)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(trials)))
        return time.perf_counter() - t0


def through_run_suite(trials: int, concurrency: int, dataset: Path, run_id: str) -> float:
    from benchforge.flows.runs import run_suite

    epochs = trials // len(TASK_IDS)
    t0 = time.perf_counter()
    summary = run_suite(
        suites=["de-mini"],
        agents=["single-call"],
        models=[MODEL],
        epochs=epochs,
        concurrency=concurrency,
        llm_concurrency=concurrency,
        chunk_size=CHUNK_SIZE,
        workers=2,
        run_id=run_id,
        tasks_root=TASKS_ROOT,
        task_ids=TASK_IDS,
        datasets={"mini": str(dataset)},
    )
    seconds = time.perf_counter() - t0
    if summary.ran != epochs * len(TASK_IDS) or summary.infra_errors:
        raise SystemExit(f"run_suite ran {summary.ran} trials, {summary.infra_errors} infra errors")
    return seconds


def measure(
    label: str, latency_ms: float, trials: int, concurrency: int, root: Path
) -> tuple[float, float]:
    config = MockServerConfig(faults=FaultConfig(latency_ms=latency_ms))
    with run_server(config=config) as server:
        os.environ["BENCHFORGE_OPENAI_BASE_URL"] = server.url
        os.environ["BENCHFORGE_OPENAI_API_KEY"] = "bench"
        floor = asyncio.run(bare_loop(server.url, trials, concurrency, root / label))
        suite = through_run_suite(trials, concurrency, root / "dataset", f"bench-{label}")
    return floor, suite


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip-latency", action="store_true", help="only part (a)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="benchforge-fanout-") as tmp:
        root = Path(tmp)
        os.environ["BENCHFORGE_ARTIFACT_ROOT"] = str(root / "artifacts")
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "CRITICAL")
        (root / "dataset").mkdir()
        LAYOUT.dataset_record_file(root / "dataset").write_text("{}")  # the agent reads no data
        _warm_up()  # starts Prefect's ephemeral server outside the timings
        iso = default_backend().isolation()
        print(f"sandbox backend: {iso.backend} (not used by single-call: no tool calls)")
        print(f"(a) {args.trials} trials, zero latency, concurrency {args.concurrency}")
        floor, suite = measure("a", 0.0, args.trials, args.concurrency, root)
        overhead_ms = (suite - floor) / args.trials * 1000
        print(f"    bare asyncio loop   {floor:8.2f} s  ({args.trials / floor:7.1f} trials/s)")
        print(f"    run_suite           {suite:8.2f} s  ({args.trials / suite:7.1f} trials/s)")
        verdict = "met" if overhead_ms <= OVERHEAD_TARGET_MS else "MISSED"
        print(
            f"    overhead per trial  {overhead_ms:8.3f} ms (target <= "
            f"{OVERHEAD_TARGET_MS} ms: {verdict}; one Prefect task per trial ~ 8 ms)"
        )
        if args.skip_latency:
            return
        print(f"(b) {args.trials} trials, 250 ms latency, concurrency {args.concurrency}")
        floor, suite = measure("b", 250.0, args.trials, args.concurrency, root)
        ratio = floor / suite
        print(f"    bare asyncio loop   {floor:8.2f} s  ({args.trials / floor:7.1f} trials/s)")
        print(f"    run_suite           {suite:8.2f} s  ({args.trials / suite:7.1f} trials/s)")
        verdict = "met" if ratio >= THROUGHPUT_TARGET else "MISSED"
        print(f"    throughput ratio    {ratio:8.3f}    (target >= {THROUGHPUT_TARGET}: {verdict})")


if __name__ == "__main__":
    main()

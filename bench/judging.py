"""Benchmark: judging analysis reports (the da_open judges) against the mock server's judge.

On the da-crm tasks (crm at --scale, seed 7; the dataset is synthesized and the gold built
once): each task's reference report and its baselines are judged (rubric + GSB) in per-item
mode, then the references in batched mode, then the references again per item from the
response cache. The mock judge answers after --latency-ms, a stand-in for a real endpoint's
round trip. Prints, per mode: judge requests and seconds per report; the batched / per-item
ratios (requests, time); how often the two modes agree item by item; and the re-judge's
requests (0: every reply comes from the cache) and time.

Usage: python bench/judging.py [--scale 0.05] [--latency-ms 50] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchforge.agents.mock_llm import FaultConfig, MockServerConfig, run_server  # noqa: E402
from benchforge.core.llm import LlmConfig  # noqa: E402
from benchforge.evaluation.da.gold import DaGold  # noqa: E402
from benchforge.evaluation.families.da import DaOpenFamily  # noqa: E402
from benchforge.evaluation.judges.client import Judge, JudgeSettings  # noqa: E402
from benchforge.evaluation.judges.rubric import compare_modes  # noqa: E402
from benchforge.evaluation.tasks import LoadedTask, load_tasks  # noqa: E402
from benchforge.harness.judging import open_judge  # noqa: E402
from benchforge.synthesis.dataset import build_dataset  # noqa: E402
from benchforge.synthesis.spec import load_domain  # noqa: E402


def judged(
    family: DaOpenFamily, items: list[tuple[LoadedTask, DaGold, str]], judge: Judge
) -> tuple[list, float, int]:
    t0 = time.perf_counter()
    before = judge.client_totals()
    reports = [family.judge_report(task, text, gold, judge) for task, gold, text in items]
    requests = judge.client_totals().sent - before.sent
    return reports, time.perf_counter() - t0, requests


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=0.05)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    family = DaOpenFamily()
    tasks = load_tasks(ROOT / "task_specs" / "da-crm")
    with tempfile.TemporaryDirectory(prefix="bench-judging-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        dataset = work / "crm"
        build_dataset(load_domain("crm"), scale=args.scale, seed=7, out=str(dataset))
        golds = {t.key: family.prepare_gold(t, dataset, work / "scoring") for t in tasks}
        print(
            f"prepared {len(tasks)} da-crm tasks (crm scale {args.scale:g}, seed 7) "
            f"in {time.perf_counter() - t0:.1f}s"
        )
        references = [(t, golds[t.key], golds[t.key].reference) for t in tasks]
        baselines = [
            (t, golds[t.key], text) for t in tasks for text in golds[t.key].baselines.values()
        ]
        faults = FaultConfig(latency_ms=args.latency_ms)
        with run_server(config=MockServerConfig(faults=faults)) as server, ExitStack() as stack:

            def judge_of(mode: str, cache: Path) -> Judge:
                config = LlmConfig(
                    role="judge",
                    model="mock-judge",
                    base_url=server.url,
                    api_key="bench",
                    concurrency=args.concurrency,
                    cache_dir=cache,
                )
                return stack.enter_context(open_judge(config, JudgeSettings(mode=mode)))

            per_item = judge_of("per_item", work / "cache-per-item")
            batched = judge_of("batched", work / "cache-batched")
            ref_items, ref_s, ref_req = judged(family, references, per_item)
            _, base_s, base_req = judged(family, baselines, per_item)
            bat_items, bat_s, bat_req = judged(family, references, batched)
            _, again_s, again_req = judged(family, references, per_item)

    n = len(references)
    agree = compared = 0
    for a, b in zip(ref_items, bat_items, strict=True):
        if a.rubric is not None and b.rubric is not None:
            agreement = compare_modes(a.rubric, b.rubric)
            agree += agreement.agreed
            compared += agreement.compared
    scores = [r.score.metrics.get("score_da", 0.0) for r in ref_items]
    print(f"mock judge latency {args.latency_ms:g} ms, {args.concurrency} calls at once")
    print(f"reference reports            {n}, score_da min {min(scores):.1f}")
    print(f"per-item: requests / report  {ref_req / n:.1f}")
    print(f"per-item: seconds / report   {ref_s / n:.2f}")
    print(
        f"baselines: seconds / report  {base_s / max(1, len(baselines)):.2f} "
        f"({base_req} requests for {len(baselines)} reports)"
    )
    print(f"batched: requests / report   {bat_req / n:.1f}")
    print(f"batched: seconds / report    {bat_s / n:.2f}")
    print(
        f"ratio batched / per-item     requests {bat_req / max(1, ref_req):.2f}, "
        f"time {bat_s / max(ref_s, 1e-9):.2f}"
    )
    rate = agree / compared if compared else float("nan")
    print(f"per-item vs batched agree    {agree}/{compared} items ({100 * rate:.1f}%)")
    print(f"re-judge from the cache      {again_req} requests, {again_s / n:.3f} s / report")


if __name__ == "__main__":
    main()

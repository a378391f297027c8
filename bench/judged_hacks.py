"""The judged reward-hack catalogue on the shipped da tasks, the whole matrix: every entry of
``task_specs/hacks/judged.yaml`` on every task of the given suites, with the faithful and the
obedient mock judge, per item and batched (``evaluation/families/da_hacks.py``: the honest
source is the reference without its anchored lines).

For each suite the domain's dataset is synthesized at --scale (seed 7) and the gold built once
under --work (kept between runs). Prints one line per task, judge and mode: the honest source's
score_da, the entries that held, the seconds taken, and every entry that did not hold; then the
totals. Exit status 1 when any entry failed.

Usage: python bench/judged_hacks.py [--suites da-crm da-ads da-enterprise] [--scale 0.02]
       [--work /tmp/judged-hacks]
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchforge.agents.mock_llm import run_server  # noqa: E402
from benchforge.core.llm import LlmConfig  # noqa: E402
from benchforge.evaluation.da.gold import DaGold  # noqa: E402
from benchforge.evaluation.families import family_of  # noqa: E402
from benchforge.evaluation.families.da import DaOpenFamily, JudgedReport  # noqa: E402
from benchforge.evaluation.families.da_hacks import run_judged_hacks  # noqa: E402
from benchforge.evaluation.judges.client import Judge, JudgeSettings  # noqa: E402
from benchforge.evaluation.judges.hacks import load_judged_hacks  # noqa: E402
from benchforge.evaluation.tasks import LoadedTask, load_tasks  # noqa: E402
from benchforge.harness.judging import open_judge  # noqa: E402
from benchforge.synthesis.dataset import build_dataset  # noqa: E402

JUDGES = ("mock-judge", "mock-judge-obedient")


def _judge_report(
    family: DaOpenFamily, task: LoadedTask, gold: DaGold, judge: Judge, text: str
) -> JudgedReport:
    return family.judge_report(task, text, gold, judge)


MODES = ("per_item", "batched")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", nargs="+", default=["da-crm", "da-ads", "da-enterprise"])
    parser.add_argument("--scale", type=float, default=0.02)
    parser.add_argument("--work", type=Path, default=Path("/tmp/judged-hacks"))
    args = parser.parse_args()
    hacks = load_judged_hacks()
    server = run_server("127.0.0.1", 0)
    held = tried = 0
    failures: list[str] = []
    try:
        for suite in args.suites:
            domain = suite.removeprefix("da-")
            dataset = args.work / f"{domain}-{args.scale:g}-7"
            if not (dataset / "_SUCCESS").exists() and not dataset.exists():
                build_dataset(domain, scale=args.scale, seed=7, out=str(dataset), validate=False)
            for task in load_tasks(ROOT / "task_specs" / suite):
                family = family_of(task)
                assert isinstance(family, DaOpenFamily)
                gold = family.prepare_gold(task, dataset, args.work / "scoring")
                assert isinstance(gold, DaGold)
                for model in JUDGES:
                    for mode in MODES:
                        config = LlmConfig(
                            role="judge",
                            model=model,
                            base_url=server.url,
                            api_key="mock",
                            max_retries=0,
                        )
                        start = time.monotonic()
                        with open_judge(config, JudgeSettings(mode=mode)) as judge:
                            run = run_judged_hacks(
                                partial(_judge_report, family, task, gold, judge),
                                task,
                                gold,
                                judge,
                                hacks,
                            )
                        held += run.held
                        tried += len(run.outcomes)
                        print(
                            f"{task.spec.id:40s} {model:20s} {mode:9s} honest {run.honest:5.1f}"
                            f"  held {run.held}/{len(run.outcomes)}"
                            f"  {time.monotonic() - start:5.1f} s",
                            flush=True,
                        )
                        for outcome in run.failed:
                            line = f"{task.spec.id} {model} {mode} {outcome.hack_id}: "
                            failures.append(line + "; ".join(outcome.problems))
                            print("    FAILED " + failures[-1], flush=True)
    finally:
        server.stop()
    print(f"\n{len(hacks)} entries; {held} of {tried} runs held; {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

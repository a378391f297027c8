"""Benchmark: how a nightly's run and score stages grow with the number of trials.

The nightly's DE kind (the de-crm suite; agents oracle, null and react-de on its mock script,
mock latency 0, scored on the crm dataset at each --scales value) is run and scored at each
--trials size (epochs chosen to reach it: 7 tasks x 3 agents x epochs). Every size starts from
the same state: a run of its own, no kept score (the score store, the DE score caches and the
judge's response cache are emptied before it) and the gold builds already made (the nightly's
gold stage is not timed here), so every size scores its distinct submissions afresh.

Printed per size: wall time of the run and score stages and per trial, the distinct
submissions scored, dbt invocations per distinct submission, and the kept scores used and
judge requests; then the ratio of the largest size's wall time to the next-largest's, against
its trial ratio (linear growth; target: the 500-trial over the 100-trial wall <= 5), with
PASS / FAIL. Repeated submissions (the agents' epochs) must be free: dbt invocations grow with
distinct submissions, not with trials.

Usage: python bench/nightly.py [--trials 21,105,504] [--scales 0.1,1] [--tasks N]
(``--tasks N``: the suite's first N tasks only, a quick smoke run.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prefect import flow  # noqa: E402

from benchforge.evaluation.de.score_cache import CACHE_SUFFIX  # noqa: E402

SUITE = "de-crm"
AGENTS = ["oracle", "null", "react-de"]
MODEL = "mock-script:react-de-crm-sla-solve"
GROWTH_TARGET = 5.0  # wall(500 trials) / wall(100 trials)


@flow(name="warm-up")
def _warm_up() -> int:
    return 1


@dataclass
class Figures:
    trials: int
    run_s: float
    score_s: float
    distinct: int
    dbt: int
    kept_used: int
    judge_requests: int

    @property
    def wall(self) -> float:
        return self.run_s + self.score_s

    def line(self) -> str:
        per_trial = self.wall / self.trials * 1000
        dbt_each = self.dbt / self.distinct if self.distinct else 0.0
        return (
            f"  {self.trials:5d} trials: run {self.run_s:7.1f} s, score {self.score_s:7.1f} s, "
            f"{per_trial:7.1f} ms/trial; {self.distinct} distinct submissions, "
            f"{dbt_each:.2f} dbt invocations each; kept scores used {self.kept_used}, "
            f"judge requests {self.judge_requests}"
        )


def _task_ids(first: int | None) -> list[str]:
    from benchforge.evaluation.tasks import load_tasks

    ids = sorted(t.spec.id for t in load_tasks(ROOT / "task_specs" / SUITE))
    return ids[:first] if first else ids


def _dataset(scale: float, root: Path) -> Path:
    out = root / f"crm-{scale:g}"
    if not out.exists():
        command = ["benchforge", "synth", "crm", "--scale", f"{scale:g}", "--seed", "7"]
        subprocess.run([*command, "--out", str(out)], check=True, capture_output=True)
    return out


def _forget_scores(artifacts: Path) -> None:
    """Every kept score: the score store, DE's score caches, the judge's response cache."""
    from benchforge.core.artifacts import LAYOUT, open_store

    open_store(str(artifacts)).delete_prefix(LAYOUT.SCORE_STORE)
    work = artifacts / "work"
    for kept in [*work.rglob(f"*{CACHE_SUFFIX}"), work / "llm-cache"]:
        shutil.rmtree(kept, ignore_errors=True)


def measure(epochs: int, dataset: Path, root: Path, label: str, task_ids: list[str]) -> Figures:
    from benchforge.core.artifacts import open_store
    from benchforge.flows.runs import run_suite, score_run
    from benchforge.harness.store import RunStore

    _forget_scores(root / "artifacts")
    t0 = time.perf_counter()
    summary = run_suite(
        suites=[SUITE],
        agents=list(AGENTS),
        models=[MODEL],
        epochs=epochs,
        run_id=label,
        task_ids=task_ids,
        datasets={"crm": str(dataset)},
    )
    run_s = time.perf_counter() - t0
    if summary.infra_errors:
        raise SystemExit(f"{label}: {summary.infra_errors} infrastructure errors")
    t0 = time.perf_counter()
    scored = score_run(run_id=label)
    score_s = time.perf_counter() - t0
    run = RunStore(open_store(os.environ["BENCHFORGE_ARTIFACT_ROOT"]), label)
    results = [run.read_result(slug) for slug in run.finished_slugs()]
    distinct = {(r.key.task_id, r.submission) for r in results}  # per task: its own gold
    return Figures(
        trials=summary.trials,
        run_s=run_s,
        score_s=score_s,
        distinct=len(distinct),
        dbt=scored.dbt_invocations,
        kept_used=scored.kept_scores_used,
        judge_requests=scored.judge.requests if scored.judge is not None else 0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--trials", default="21,105,504", help="trial counts, comma-separated")
    parser.add_argument("--scales", default="0.1,1", help="crm scales, comma-separated")
    parser.add_argument("--tasks", type=int, help="the suite's first N tasks only")
    args = parser.parse_args()
    task_ids = _task_ids(args.tasks)
    per_epoch = len(task_ids) * len(AGENTS)
    sizes = sorted({max(1, round(int(t) / per_epoch)) for t in args.trials.split(",")})
    with tempfile.TemporaryDirectory(prefix="benchforge-nightly-bench-") as tmp:
        root = Path(tmp)
        os.environ["BENCHFORGE_CACHE_DIR"] = str(root / "cache")
        os.environ.pop("BENCHFORGE_OPENAI_API_KEY", None)
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "CRITICAL")
        os.environ["BENCHFORGE_ARTIFACT_ROOT"] = str(root / "artifacts")  # work/: gold builds
        _warm_up()  # Prefect's ephemeral server starts outside the timings
        verdicts = []
        for scale in (float(s) for s in args.scales.split(",")):
            dataset = _dataset(scale, root)
            print(f"crm scale {scale:g} ({SUITE}: {per_epoch} trials per epoch)")
            measure(1, dataset, root, f"warm-{scale:g}", task_ids)  # the gold builds, untimed
            figures = [measure(e, dataset, root, f"s{scale:g}-e{e}", task_ids) for e in sizes]
            for f in figures:
                print(f.line())
            if len(figures) >= 2:
                small, large = figures[-2], figures[-1]
                growth, trials = large.wall / small.wall, large.trials / small.trials
                allowed = GROWTH_TARGET * trials / 5  # the target's 500 / 100 trials
                ok = growth <= allowed and large.dbt <= small.dbt * 1.05 + 2
                verdicts.append(ok)
                print(
                    f"  growth {large.trials}/{small.trials} trials: wall x{growth:.2f} for "
                    f"x{trials:.2f} trials (target <= x{allowed:.2f}, dbt invocations "
                    f"{small.dbt} -> {large.dbt}: repeats free): {'PASS' if ok else 'FAIL'}"
                )
        print("nightly cost growth:", "PASS" if verdicts and all(verdicts) else "FAIL")


if __name__ == "__main__":
    main()

"""Benchmark: scoring a distinct DE submission (CS + CFS + SR) against one `dbt build` of the gold.

On the crm domain at scale 1 (seed 7): synthesizes the dataset (no validation) unless --dataset
is given, times one `dbt build` of dbt_projects/crm (models + tests) on a copy of its
warehouse, prepares that gold for scoring once (each gold relation exported for the isolated
runs; a nightly does this once per gold, for all its submissions), then times the held-out
scoring of two distinct submissions, each printed with its breakdown by step and its ratio to
the gold build (target <= 1.3):

- a correct one (the gold repository as a candidate): every node's CS is taken from its CFS
  (its output and inputs are exactly the gold's), so no node runs alone;
- a broken one (the staging model with the most descendants drops a tenth of its rows): every
  node downstream of it runs alone on the gold inputs, the rest as above.

Usage: python bench/de_scoring.py [--domain crm] [--scale 1] [--dataset DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchforge.core.records import GOLD_DB  # noqa: E402
from benchforge.evaluation.dbt.manifest import load_manifest  # noqa: E402
from benchforge.evaluation.de.component import export_relations  # noqa: E402
from benchforge.evaluation.de.scoring import score_candidate  # noqa: E402
from benchforge.evaluation.gold import build_gold  # noqa: E402
from benchforge.evaluation.tasks.models import DeScoring  # noqa: E402
from benchforge.synthesis.dataset import build_dataset  # noqa: E402

TARGET = 1.3


def broken_candidate(repo: Path, gold_folder: Path, out: Path) -> str:
    """A copy of ``repo`` whose staging model with the most descendants drops a tenth of its
    rows (by a hash of the row); returns that model's name."""
    manifest = load_manifest(gold_folder / "manifest.json")
    staging = [n for n, m in manifest.models.items() if n.startswith("stg_")] or list(
        manifest.models
    )
    name = max(staging, key=lambda n: (len(manifest.descendants(n)), n))
    shutil.copytree(repo, out, ignore=shutil.ignore_patterns("target", "logs", "dbt_packages"))
    path = out / manifest.models[name].original_file_path
    path.write_text(
        f"with __kept as (\n{path.read_text()}\n)\n"
        "select * from __kept where hash(__kept) % 10 <> 0\n"
    )
    return name


def timed_scoring(label: str, candidate: Path, work: Path, dataset: Path, build_s: float) -> bool:
    t0 = time.perf_counter()
    result = score_candidate(candidate, work / "gold", dataset, work / label, DeScoring())
    seconds = time.perf_counter() - t0
    ratio = seconds / build_s
    print(f"\n{label}: {seconds:.1f} s -> {result.summary()}")
    for step, took in result.seconds.items():
        print(f"  {step:<14}{took:>7.1f} s")
    alone = len(result.nodes) - len(result.cs_from_cfs)
    print(f"  nodes run alone for CS: {alone} of {len(result.nodes)}")
    ok = ratio <= TARGET
    print(f"  ratio scoring / gold build: {ratio:.2f}  (target <= {TARGET:g}: "
          f"{'PASS' if ok else 'FAIL'})")  # fmt: skip
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--domain", default="crm")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dataset", type=Path, help="an existing dataset folder")
    parser.add_argument("--keep", type=Path, help="work folder to keep")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-de-"))
    repo = ROOT / "dbt_projects" / args.domain
    dataset = args.dataset
    if dataset is None:
        dataset = work / "dataset"
        t0 = time.perf_counter()
        build_dataset(
            args.domain, scale=args.scale, seed=args.seed, out=str(dataset), validate=False
        )
        print(f"dataset {args.domain} scale {args.scale:g}: {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    gold = build_gold(args.domain, repo, dataset, work / "gold", docs=False)
    build_s = time.perf_counter() - t0
    print(f"gold dbt build ({gold.models} models, {gold.tests} tests): {build_s:.1f} s")
    t0 = time.perf_counter()
    export_relations(work / "gold" / GOLD_DB, work / "gold" / "relations")
    print(f"gold prepared for scoring, once per gold: {time.perf_counter() - t0:.1f} s")
    broken = broken_candidate(repo, work / "gold", work / "broken-repo")
    results = [
        timed_scoring("a correct submission", repo, work, dataset, build_s),
        timed_scoring(f"a submission broken at {broken}", work / "broken-repo", work, dataset,
                      build_s),
    ]  # fmt: skip
    print(f"\nheld-out scoring of a distinct submission <= {TARGET:g}x the gold build: "
          f"{'PASS' if all(results) else 'FAIL'}")  # fmt: skip
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Benchmark: scoring a repository (CS + CFS + SR) against one `dbt build` of the gold repo.

On the crm domain at scale 1 (seed 7): synthesizes the dataset (no validation) unless --dataset
is given, times one `dbt build` of dbt_projects/crm (models + tests) on a copy of its
warehouse, then times scoring the gold repository as a candidate (dbt compile + the
end-to-end build for CFS, every node's CS query in the sandbox on a fresh database holding only
its gold inputs, all comparisons). Prints both wall times and their ratio (target <= 2). A
trial is scored on the held-out seed and the visible one: that is two such scorings against two
gold builds, each built once and cached, so the ratio per scoring is the figure that counts.

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

from benchforge.evaluation.de.scoring import score_candidate  # noqa: E402
from benchforge.evaluation.gold import build_gold  # noqa: E402
from benchforge.evaluation.tasks.models import DeScoring  # noqa: E402
from benchforge.synthesis.dataset import build_dataset  # noqa: E402

TARGET = 2.0


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
    result = score_candidate(repo, work / "gold", dataset, work / "score", DeScoring())
    score_s = time.perf_counter() - t0
    parts = ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items())
    print(f"scoring the gold repo as a candidate: {score_s:.1f} s ({parts}) -> {result.summary()}")
    iso = result.isolation
    if iso is not None:
        print(
            f"candidate code ran in the {iso.backend} sandbox (filesystem {iso.filesystem}, "
            f"network {iso.network})"
        )
    ratio = score_s / build_s
    print(
        f"\nratio scoring / gold build: {ratio:.2f}  (target <= {TARGET:g}: "
        f"{'ok' if ratio <= TARGET else 'MISSED'})"
    )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

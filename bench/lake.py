"""Benchmark of the ``lake`` step (:mod:`benchforge.synthesis.lake`) on the shipped crm spec
(``task_specs/lake-crm/lake.yaml``).

Prints, in one run:
- the wall time of ``build_lake`` (best of ``--repeat``) and of ``obscure`` on crm at
  ``--scale`` (default 0.1, seed 7, synthesized once without validation and cached in
  ``--data``), and their files, rows and bytes (by format);
- the floor: the same files' rows (every record query) copied by plain DuckDB ``COPY ... TO``
  CSV from the same in-memory working copy, the least a lake writer must do, and the ratio;
- PASS / FAIL against ``TARGETS``: the brief's "a few MB, built in seconds" at scale 0.1.

Usage: python bench/lake.py [--scale 0.1] [--repeat 3] [--data DIR] [--dataset DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchforge.core.sql import literal  # noqa: E402
from benchforge.synthesis.dataset import build_dataset  # noqa: E402
from benchforge.synthesis.engine.generate import WAREHOUSE  # noqa: E402
from benchforge.synthesis.lake import LAKE_DIR, build_lake, load_lake_spec, obscure  # noqa: E402
from benchforge.synthesis.lake.working import open_lake_copy  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "benchforge-bench-lake"
SPEC = ROOT / "task_specs" / "lake-crm" / "lake.yaml"
TARGETS = {"lake_mb": 8.0, "build_s": 10.0, "obscure_s": 30.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=CACHE)
    parser.add_argument("--dataset", type=Path, help="an existing crm dataset folder instead")
    args = parser.parse_args()
    dataset = args.dataset or args.data / f"crm-{args.scale}"
    if not (dataset / "dataset.json").exists():
        started = time.perf_counter()
        build_dataset("crm", scale=args.scale, seed=7, out=str(dataset), validate=False)
        print(f"synthesized crm scale {args.scale} in {time.perf_counter() - started:.1f} s")
    spec = load_lake_spec(SPEC)
    work = Path(tempfile.mkdtemp(prefix="bench-lake-"))
    try:
        builds = []
        for _ in range(args.repeat):
            shutil.rmtree(work / "lake", ignore_errors=True)
            started = time.perf_counter()
            record = build_lake(dataset, spec, work / "lake", seed=1)
            builds.append(time.perf_counter() - started)
        started = time.perf_counter()
        obscure(dataset, spec, work / "obscured", seed=1)
        obscure_s = time.perf_counter() - started
        files = [p for p in (work / "lake" / LAKE_DIR).rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        by_format = Counter(f.format for f in record.files)
        floor_s = _floor(dataset, [f.query for f in record.files], work / "floor")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    build_s = min(builds)
    rows = sum(f.rows for f in record.files)
    print(f"crm scale {args.scale}: {len(record.files)} files, {rows:,} rows, {size / 1e6:.2f} MB")
    print("  by format: " + ", ".join(f"{k} {v}" for k, v in sorted(by_format.items())))
    print(
        f"  build_lake: {build_s:.2f} s (best of {args.repeat}: "
        + ", ".join(f"{b:.2f}" for b in builds)
        + ")"
    )
    print(f"  obscure:    {obscure_s:.2f} s (mapping, then the same build)")
    print(
        f"  floor (DuckDB COPY of every file's rows to CSV): {floor_s:.2f} s; "
        f"build / floor {build_s / floor_s:.1f}x"
    )
    checks = {
        "lake_mb": size / 1e6 <= TARGETS["lake_mb"],
        "build_s": build_s <= TARGETS["build_s"],
        "obscure_s": obscure_s <= TARGETS["obscure_s"],
    }
    for name, ok in checks.items():
        print(f"  {name} <= {TARGETS[name]}: {'PASS' if ok else 'FAIL'}")
    return 0 if all(checks.values()) else 1


def _floor(dataset: Path, queries: list[str], out: Path) -> float:
    out.mkdir(parents=True)
    with open_lake_copy(dataset / WAREHOUSE) as con:
        started = time.perf_counter()
        for i, query in enumerate(queries):
            con.execute(f"COPY ({query}) TO {literal(str(out / f'{i}.csv'))} (HEADER)")
        return time.perf_counter() - started


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark of :func:`benchforge.synthesis.explore_env.build_environment` on the shipped
enterprise spec (``task_specs/explore-enterprise/environment.yaml``).

Prints, in one run, per scale (``--scales``, default 0.1 and 1; the enterprise dataset
synthesized once per scale, seed 7, in ``--data``):
- the build's wall time (best of ``--repeat``), its files and bytes;
- the floor: plain DuckDB ``COPY raw.<table> TO ... (FORMAT csv)`` of the same tables (no noise,
  no derived tables, no documents), and the ratio build / floor;
- PASS / FAIL of the build at scale 0.1 against ``TARGETS["seconds_at_0.1"]`` (an environment
  an agent task can rebuild in seconds) and of the growth from the smallest to the largest scale
  against ``TARGETS["growth_per_rows"]`` (time grows no faster than the rows: the build is linear).

Usage: python bench/explore_env.py [--scales 0.1,1] [--repeat 2] [--data DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from benchforge.core.records import DatasetRecord
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.explore_env import (
    EnvironmentSpec,
    build_environment,
    load_environment_spec,
)

SPEC = (
    Path(__file__).resolve().parent.parent
    / "task_specs"
    / "explore-enterprise"
    / "environment.yaml"
)
TARGETS = {"seconds_at_0.1": 10.0, "growth_per_rows": 1.5}


def _dataset(data: Path, scale: float) -> tuple[Path, int]:
    folder = data / f"enterprise-{scale}"
    if not (folder / "dataset.json").is_file():
        build_dataset("enterprise", scale=scale, seed=7, out=str(folder), validate=False)
    record = DatasetRecord.model_validate_json((folder / "dataset.json").read_text())
    return folder, record.total_rows


def _best(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _measure(
    dataset: Path, spec: EnvironmentSpec, out: Path, floor_dir: Path, repeat: int
) -> tuple[float, float, int, int]:
    """Build seconds, floor seconds, files and bytes of the environment."""
    build = _best(repeat, lambda: build_environment(dataset, spec, out, seed=1))
    files = [p for p in (out / "environment").rglob("*") if p.is_file()]
    floor_dir.mkdir()

    def floor() -> None:
        with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
            for table in spec.folder_of():
                con.execute(f"COPY raw.{table} TO '{floor_dir / table}.csv' (FORMAT csv)")

    return build, _best(repeat, floor), len(files), sum(p.stat().st_size for p in files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", default="0.1,1")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "bench-explore")
    args = parser.parse_args()
    spec = load_environment_spec(SPEC)
    results: list[tuple[float, int, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-explore-") as tmp:
        for scale in (float(s) for s in args.scales.split(",")):
            dataset, rows = _dataset(args.data, scale)
            build, floor_seconds, files, size = _measure(
                dataset, spec, Path(tmp) / f"env-{scale}", Path(tmp) / f"floor-{scale}", args.repeat
            )
            print(
                f"scale {scale}: {rows:,} rows -> {files:,} files, {size / 1e6:.1f} MB; "
                f"build {build:.2f} s, DuckDB CSV floor {floor_seconds:.2f} s, "
                f"ratio {build / floor_seconds:.1f}x"
            )
            results.append((scale, rows, build))
    verdicts = []
    small = [r for r in results if r[0] == 0.1]
    if small:
        ok = small[0][2] <= TARGETS["seconds_at_0.1"]
        verdicts.append(ok)
        print(
            f"build at scale 0.1: {small[0][2]:.2f} s (target <= {TARGETS['seconds_at_0.1']} s) "
            f"{'PASS' if ok else 'FAIL'}"
        )
    if len(results) > 1:
        (_, rows_a, time_a), (_, rows_b, time_b) = results[0], results[-1]
        growth = (time_b / time_a) / (rows_b / rows_a)
        ok = growth <= TARGETS["growth_per_rows"]
        verdicts.append(ok)
        print(
            f"time x{time_b / time_a:.2f} for rows x{rows_b / rows_a:.2f}: {growth:.2f} per row "
            f"(target <= {TARGETS['growth_per_rows']}) {'PASS' if ok else 'FAIL'}"
        )
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())

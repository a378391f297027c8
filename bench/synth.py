"""Benchmark of the synthesis engine on the crm domain.

Prints, in one run:
- engine rows/s at a scale of >= 5 M rows (generation + stress pass + warehouse + Parquet,
  no validation), with the one-off Faker pool build time shown apart;
- a Faker row-by-row baseline generating the same columns (a sample, extrapolated);
- the DuckDB-native floor: range()/random()/hash() tables of the same column types and row
  counts, written to the same outputs (a DuckDB file + Parquet);
- the ratios, and peak RSS of a generation at scale 1 and at scale 10 (separate processes).

Usage: python bench/synth.py [--scale 10] [--small-scale 1] [--faker-sample 6000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict
from datetime import datetime
from datetime import time as dtime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchforge.synthesis.engine import generate_dataset, read_manifest  # noqa: E402
from benchforge.synthesis.spec import DomainSpec, load_domain  # noqa: E402
from benchforge.synthesis.spec import generators as g  # noqa: E402

TARGETS = {"faker": 100.0, "floor": 0.2, "rss": 2.0}


def child(scale: float, out: Path, seed: int, mode: str) -> None:
    """Runs one generation in this (fresh) process and prints JSON figures."""
    from benchforge.synthesis.engine import pools
    from benchforge.synthesis.engine.generate import generate_without_outputs

    spec = load_domain("crm")
    t0 = time.perf_counter()
    for table in spec.tables:  # pools are built once per machine; time them apart
        for col in table.columns:
            if isinstance(col.generator, g.FakerGen):
                for loc in col.generator.locales or [col.generator.locale]:
                    pools.build_pool(col.generator, loc, spec.faker_today())
    pool_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    if mode == "memory":
        rows = generate_without_outputs(spec, scale=scale, seed=seed)
    else:
        rows = generate_dataset(spec, scale=scale, seed=seed, out=out).total_rows
    gen_s = time.perf_counter() - t1
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"rows": rows, "seconds": gen_s, "pool_seconds": pool_s, "rss_mb": rss_mb}))


def run_child(scale: float, out: Path, seed: int = 7, mode: str = "files") -> dict[str, float]:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--scale",
        str(scale),
        "--out",
        str(out),
        "--seed",
        str(seed),
        "--mode",
        mode,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"generation at scale {scale} failed:\n{proc.stderr[-3000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


# -- Faker row by row ----------------------------------------------------------------------


class FakerRowGenerator:
    """What a hand-written generator does: one Faker/random call per column per row."""

    def __init__(self, spec: DomainSpec, rows: dict[str, int], seed: int):
        from faker import Faker

        locales = sorted(
            {
                loc
                for t in spec.tables
                for c in t.columns
                if isinstance(c.generator, g.FakerGen)
                for loc in c.generator.locales
            }
            | {"en_US"}
        )
        self.fake = Faker(locales)
        Faker.seed(seed)
        self.rnd = random.Random(seed)
        self.spec, self.rows = spec, rows
        self.samples: dict[str, list[dict[str, Any]]] = {}

    def value(self, gen: Any, row: dict[str, Any], i: int) -> Any:
        f, r = self.fake, self.rnd
        if isinstance(gen, g.SequenceGen):
            n = gen.start + gen.step * i
            return f"{gen.prefix}{n:0{gen.width}d}" if gen.prefix else n
        if isinstance(gen, g.FakerGen):
            loc = row.get(gen.locale_from) if gen.locale_from else gen.locale
            return getattr(f[loc] if loc in f.locales else f["en_US"], gen.provider)(**gen.args)
        if isinstance(gen, g.UniformGen):
            return (
                f.pyfloat(min_value=gen.low, max_value=gen.high) if gen.high > gen.low else gen.low
            )
        if isinstance(gen, g.NormalGen):
            return r.gauss(gen.mean, gen.std)
        if isinstance(gen, g.LognormalGen):
            return r.lognormvariate(gen.mu, gen.sigma)
        if isinstance(gen, g.ZipfGen):
            return min(gen.n, int(r.paretovariate(gen.s)))
        if isinstance(gen, g.PoissonGen):
            return gen.offset + sum(1 for _ in range(int(gen.lam * 3)) if r.random() < 1 / 3)
        if isinstance(gen, g.CategoricalGen):
            weights = gen.weights or [1.0] * len(gen.values)
            return f.random_element(OrderedDict(zip(gen.values, weights, strict=True)))
        if isinstance(gen, g.BooleanGen):
            return f.pybool(truth_probability=int(gen.p_true * 100))
        if isinstance(gen, g.LookupKeyGen):
            lookup = self.spec.lookups[gen.lookup]
            return f.random_element(lookup.values(lookup.columns[0]))
        if isinstance(gen, g.LookupGen):
            lookup = self.spec.lookups[gen.lookup]
            keys = lookup.values(lookup.columns[0])
            return dict(zip(keys, lookup.values(gen.value), strict=True)).get(row.get(gen.via))
        if isinstance(gen, g.ForeignKeyGen):
            parents = self.samples.get(gen.table) or [{}]
            return f.random_element(parents).get(self.spec.table_map[gen.table].primary_key)
        if isinstance(gen, g.ParentGen):
            return row.get(gen.column)
        if isinstance(gen, g.DateGen):
            cal = self.spec.calendars[gen.calendar]
            start = datetime.combine(gen.start or cal.start, dtime())
            end = datetime.combine(gen.end or cal.end, dtime())
            return f.date_time_between(start_date=start, end_date=end)
        if isinstance(gen, g.ExpressionGen):
            return "|".join(str(v) for v in list(row.values())[-2:])
        if isinstance(gen, g.ConditionalGen):
            case = gen.cases.get(str(row.get(gen.on)), gen.default)
            return self.value(case, row, i)
        return None

    def run(self, sample_total: int) -> tuple[int, float]:
        from benchforge.synthesis.engine.columns import topological_columns

        total = sum(self.rows.values())
        done, t0 = 0, time.perf_counter()
        for table in self.spec.generation_order():
            if table.derived_sql:
                continue
            n = max(20, round(sample_total * self.rows[table.name] / total))
            cols = topological_columns(table)
            out = []
            for i in range(n):
                row: dict[str, Any] = {}
                for col in cols:
                    row[col.name] = self.value(col.generator, row, i)
                out.append(row)
            self.samples[table.name] = out
            done += n
        return done, time.perf_counter() - t0


# -- DuckDB-native floor --------------------------------------------------------------------

FLOOR_SQL = {
    "varchar": "'v' || CAST(hash(range + {k}) % 100000 AS VARCHAR)",
    "bigint": "CAST(hash(range + {k}) % 1000000 AS BIGINT)",
    "integer": "CAST(hash(range + {k}) % 1000 AS INTEGER)",
    "double": "random() * 1000",
    "date": "DATE '2020-01-01' + CAST(hash(range + {k}) % 1500 AS INTEGER)",
    "timestamp": (
        "TIMESTAMP '2020-01-01' + to_seconds(CAST(hash(range + {k}) % 100000000 AS BIGINT))"
    ),
    "boolean": "random() < 0.5",
}


def duckdb_floor(
    spec: DomainSpec, rows: dict[str, int], out: Path, outputs: bool
) -> tuple[int, float]:
    """With ``outputs`` the tables go to a DuckDB file and Parquet (like the engine's outputs);
    without, to an in-memory database (like the engine's generation alone)."""
    import duckdb

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    con = duckdb.connect(str(out / "floor.duckdb") if outputs else ":memory:")
    con.execute(f"SET memory_limit = '1GB'; SET temp_directory = '{out / 'spill'}'")
    con.execute("CREATE SCHEMA raw")
    t0, total = time.perf_counter(), 0
    for table in spec.tables:
        cols = [(c.name, c.type) for c in table.columns]
        if table.scd:
            cols += [
                (table.scd.entity_key, "varchar"),
                ("valid_from", "timestamp"),
                ("valid_to", "timestamp"),
                ("is_current", "boolean"),
            ]
        select = ", ".join(
            FLOOR_SQL[ty].format(k=7919 * i) + f' AS "{name}"' for i, (name, ty) in enumerate(cols)
        )
        con.execute(
            f"CREATE TABLE raw.{table.name} AS SELECT {select} FROM range({rows[table.name]})"
        )
        con.execute(
            f"COPY raw.{table.name} TO '{out / table.name}.parquet' "
            "(FORMAT parquet, COMPRESSION zstd)"
        )
        total += rows[table.name]
    con.close()
    return total, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=10.0, help="throughput + RSS scale (>= 5)")
    parser.add_argument("--small-scale", type=float, default=1.0, help="RSS baseline scale")
    parser.add_argument("--faker-sample", type=int, default=6000, help="rows made by Faker")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="files", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temp folder)")
    args = parser.parse_args()
    if args.child:
        child(args.scale, args.out, args.seed, args.mode)
        return

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-synth-"))
    spec = load_domain("crm")
    print(f"bench/synth.py: crm domain, {len(spec.tables)} tables; work folder {work}")
    small = run_child(args.small_scale, work / "small")
    big = run_child(args.scale, work / "big")
    memory = run_child(args.scale, work / "memory", mode="memory")
    rows = {n: t.rows for n, t in read_manifest(work / "big").tables.items()}
    floor_files = duckdb_floor(spec, rows, work / "floor", outputs=True)
    floor_memory = duckdb_floor(spec, rows, work / "floor-mem", outputs=False)
    faker_rows, faker_s = FakerRowGenerator(spec, rows, args.seed).run(args.faker_sample)

    def rate(n: float, s: float) -> float:
        return n / s if s > 0 else float("inf")

    engine_files = rate(big["rows"], big["seconds"])
    engine_memory = rate(memory["rows"], memory["seconds"])
    floor_files_rate = rate(*floor_files)
    floor_memory_rate = rate(*floor_memory)
    faker_rate = rate(faker_rows, faker_s)
    print(f"Faker pools (built once per machine, cached): {small['pool_seconds']:.1f} s")
    header = f"rows/s at scale {args.scale:g} ({big['rows']:,.0f} rows)"
    print(f"\n{header:<44}{'in memory':>14}{'+ warehouse + Parquet':>24}")
    print(f"{'engine':<44}{engine_memory:>14,.0f}{engine_files:>24,.0f}")
    print(
        f"{'DuckDB-native floor (same tables and types)':<44}{floor_memory_rate:>14,.0f}"
        f"{floor_files_rate:>24,.0f}"
    )
    print(
        f"{'Faker row by row (' + format(faker_rows, ',') + '-row sample)':<44}"
        f"{faker_rate:>14,.0f}{'-':>24}"
    )
    print(
        f"  Faker extrapolated to {big['rows']:,.0f} rows: {big['rows'] / faker_rate / 60:,.1f} min"
    )
    print(
        f"\npeak RSS: scale {args.small_scale:g} {small['rss_mb']:,.0f} MB, "
        f"scale {args.scale:g} {big['rss_mb']:,.0f} MB"
    )
    ratios = [
        (
            "engine / Faker row-by-row (in memory)",
            engine_memory / faker_rate,
            TARGETS["faker"],
            ">=",
        ),
        (
            "engine / Faker row-by-row (engine with outputs)",
            engine_files / faker_rate,
            TARGETS["faker"],
            ">=",
        ),
        (
            "engine / DuckDB floor (in memory)",
            engine_memory / floor_memory_rate,
            TARGETS["floor"],
            ">=",
        ),
        (
            "engine / DuckDB floor (with outputs)",
            engine_files / floor_files_rate,
            TARGETS["floor"],
            ">=",
        ),
        (
            f"peak RSS scale {args.scale:g} / scale {args.small_scale:g}",
            big["rss_mb"] / small["rss_mb"],
            TARGETS["rss"],
            "<=",
        ),
    ]
    print(f"\n{'ratio':<50}{'value':>9}   target")
    for name, value, target, op in ratios:
        ok = value >= target if op == ">=" else value <= target
        print(f"{name:<50}{value:>9.2f}   {op} {target:<5g} {'ok' if ok else 'MISSED'}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Benchmark of ``benchforge dataset import``'s hot path,
:func:`benchforge.synthesis.importer.import_dataset`.

Prints, in one run:
- rows/s of ``import_dataset`` from a folder of CSV files, a folder of Parquet files and a DuckDB
  file, with validation (profile + Great Expectations suite, the command's default) and without
  (``--no-validate``), best of ``--repeat`` (the table of runs; the ratios are paired, see
  below); a validated import also shows its profile and GE times apart. The data: ``--rows``
  rows over 3 tables (customers <- orders <- order_lines,
  foreign keys between them; integers, decimals, dates, timestamps, short and low-cardinality
  text, nullable columns), made once with DuckDB (``COPY ... TO`` CSV / Parquet, and a DuckDB
  file with the same tables in schema ``raw``) and cached in ``--data``;
- the DuckDB floor of each source: the same data loaded with plain DuckDB into a database file
  (``CREATE TABLE raw.t AS SELECT * FROM read_csv(...)`` / ``read_parquet`` / the source table,
  under the importer's memory limit) then ``COPY raw.t TO`` Parquet (zstd): the least any importer
  must do. The importer does more: it checks that a CSV file's sampled types are the whole
  file's (reading integer columns as text; a file that fails the check is sniffed whole and
  read again), counts rows, hashes each Parquet file, writes a manifest and publishes;
- the ratios import / floor for each source, with and without validation, each the median over
  the repeats of one back-to-back pair (the floor and the import one after the other, their
  order alternating from one repeat to the next, so a change of load between repeats moves both
  sides of a pair alike: the machine is shared), and the share of a validated import spent
  validating; PASS / FAIL for a validated import from CSV against ``TARGETS["validated"]`` (at
  least half the floor's rows/s), the median of ``--pairs`` pairs (extra pairs of CSV alone
  after the ``--repeat`` rounds of every source);
- peak RSS of each pass (import with and without validation, floor) at ``--rows`` and at
  ``--small-rows`` (rows / 10 by default), and their ratio: an import streams, its memory should
  not grow with the data. DuckDB's buffer pool does fill toward its ``memory_limit`` as the data
  grows, in the floor as in the import, so the import's growth is shown next to the floor's and
  the import's excess over the floor at both sizes; PASS / FAIL against ``TARGETS["rss"]``;
- with ``--postgres URL`` the same from a PostgreSQL schema (``bench_import_<rows>``, created and
  loaded once from the CSV files; the URL's user needs CREATE there). Its floor streams each
  table out with ``COPY ... TO STDOUT`` into a CSV file that DuckDB then loads and exports.

Every measurement runs in a fresh process forked from this one once the modules are imported:
the few seconds Great Expectations takes to import are paid once and shown apart, and each
process's peak RSS is its own (``os.wait4``: the kernel's rusage of that one child, what
``RUSAGE_CHILDREN`` reports when a process has a single child). Quick smoke run:
``--rows 20000 --small-rows 2000 --repeat 1``.

Usage: python bench/dataset_import.py [--rows 5000000] [--small-rows N] [--repeat 2]
       [--pairs 3] [--budget-minutes 10] [--data DIR] [--postgres URL] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CACHE = Path(tempfile.gettempdir()) / "benchforge-bench-import"
DATA_VERSION = 1  # bump when the generated tables change: cached data is then made again
READY = "data.json"  # written last: a cached folder without it is incomplete
MEMORY_LIMIT = "1GB"  # stage_import's default; the floor runs under the same
VALIDATE_LIMIT = "512MB"  # validate_warehouse's default
# Peak RSS at --rows / at --small-rows, for 10x the rows (as bench/synth.py, bench/anonymize.py);
# a validated import from CSV in rows/s, at least this share of the DuckDB floor's.
TARGETS = {"rss": 2.0, "validated": 0.5}
TARGET_SOURCE = "csv"
NAME = "bench"


# -- the generated data ------------------------------------------------------------------------


def h(salt: int, modulo: int | str) -> str:
    """A deterministic pseudo-random BIGINT in [0, modulo) per row (``range`` is the row)."""
    return f"CAST(hash(range + {salt}) % {modulo} AS BIGINT)"


def pick(salt: int, values: list[str]) -> str:
    items = ", ".join(f"'{v}'" for v in values)
    return f"list_element([{items}], 1 + {h(salt, len(values))})"


def moment(salt: int) -> str:
    return f"TIMESTAMP '2020-01-01' + to_seconds({h(salt, 150_000_000)})"


@dataclass(frozen=True)
class Column:
    name: str
    duck: str  # the DuckDB type it is generated as
    pg: str  # its PostgreSQL type (--postgres)
    sql: str  # DuckDB expression over range(); {customers} / {orders}: those tables' rows


@dataclass(frozen=True)
class Table:
    name: str
    share: int  # tenths of the rows
    columns: tuple[Column, ...]


TABLES = (
    Table(
        "customers",
        1,
        (
            Column("customer_id", "BIGINT", "bigint", "range + 1"),
            Column(
                "name",
                "VARCHAR",
                "text",
                pick(1, ["Ana", "Bo", "Chen", "Dana", "Eli", "Femi", "Gus", "Hana", "Ivo", "Jun"])
                + " || ' ' || "
                + pick(2, ["Smith", "Li", "Kaur", "Moreau", "Rossi", "Novak", "Sato", "Silva"]),
            ),
            Column("country", "VARCHAR", "text", pick(3, ["FR", "DE", "US", "GB", "ES", "IT"])),
            Column(
                "signup_date", "DATE", "date", f"DATE '2015-01-01' + CAST({h(4, 3000)} AS INTEGER)"
            ),
            Column("credit_limit", "DECIMAL(10,2)", "numeric(10,2)", f"{h(5, 1_000_000)} / 100.0"),
            Column(
                "phone",
                "VARCHAR",
                "text",
                f"CASE WHEN {h(6, 5)} = 0 THEN NULL "
                f"ELSE '+33 6' || lpad(CAST({h(7, 100_000_000)} AS VARCHAR), 8, '0') END",
            ),
        ),
    ),
    Table(
        "orders",
        3,
        (
            Column("order_id", "BIGINT", "bigint", "range + 1"),
            Column("customer_id", "BIGINT", "bigint", f"1 + {h(8, '{customers}')}"),
            Column("ordered_at", "TIMESTAMP", "timestamp", moment(9)),
            Column(
                "status",
                "VARCHAR",
                "text",
                pick(10, ["placed", "paid", "shipped", "delivered", "returned", "cancelled"]),
            ),
            Column("total", "DECIMAL(12,2)", "numeric(12,2)", f"{h(11, 5_000_000)} / 100.0"),
            Column(
                "discount_code",
                "VARCHAR",
                "text",
                f"CASE WHEN {h(12, 10)} < 7 THEN NULL ELSE 'PROMO' || {h(13, 50)} END",
            ),
        ),
    ),
    Table(
        "order_lines",
        6,
        (
            Column("line_id", "BIGINT", "bigint", "range + 1"),
            Column("order_id", "BIGINT", "bigint", f"1 + {h(14, '{orders}')}"),
            Column(
                "sku",
                "VARCHAR",
                "text",
                f"'SKU-' || lpad(CAST({h(15, 20_000)} AS VARCHAR), 5, '0')",
            ),
            Column("quantity", "INTEGER", "integer", f"1 + {h(16, 9)}"),
            Column("unit_price", "DECIMAL(10,2)", "numeric(10,2)", f"{h(17, 100_000)} / 100.0"),
            Column(
                "shipped_at",
                "TIMESTAMP",
                "timestamp",
                f"CASE WHEN {h(18, 4)} = 0 THEN NULL ELSE {moment(19)} END",
            ),
        ),
    ),
)


def table_rows(total: int) -> dict[str, int]:
    """Rows per table: a tenth customers, three tenths orders, the rest order lines."""
    customers = max(1, total // 10)
    orders = max(1, 3 * total // 10)
    return {"customers": customers, "orders": orders, "order_lines": total - customers - orders}


def generate(total: int, folder: Path) -> dict[str, Any]:
    """``folder``/source.duckdb (schema raw), csv/<table>.csv and parquet/<table>.parquet."""
    import duckdb

    sizes = table_rows(total)
    (folder / "csv").mkdir(parents=True)
    (folder / "parquet").mkdir()
    t0 = time.perf_counter()
    with duckdb.connect(str(folder / "source.duckdb")) as con:
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'; SET preserve_insertion_order = true")
        con.execute(f"SET temp_directory = '{folder / 'spill'}'")
        con.execute("CREATE SCHEMA raw")
        for table in TABLES:
            select = ", ".join(
                f"CAST({c.sql.format(**sizes)} AS {c.duck}) AS {c.name}" for c in table.columns
            )
            con.execute(
                f"CREATE TABLE raw.{table.name} AS SELECT {select} FROM range({sizes[table.name]})"
            )
            con.execute(f"COPY raw.{table.name} TO '{folder / 'csv' / table.name}.csv' (HEADER)")
            con.execute(
                f"COPY raw.{table.name} TO '{folder / 'parquet' / table.name}.parquet' "
                "(FORMAT parquet)"
            )
    shutil.rmtree(folder / "spill", ignore_errors=True)
    return {"rows": sizes, "seconds": time.perf_counter() - t0}


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def is_ready(folder: Path) -> bool:
    ready = folder / READY
    return ready.is_file() and json.loads(ready.read_text()).get("version") == DATA_VERSION


def ensure_data(total: int, cache: Path, logs: Path) -> tuple[Path, str]:
    """The cached data of ``total`` rows, made once (in a child, into a fresh folder renamed
    into place, so concurrent runs never see half a dataset)."""
    folder = cache / f"rows-{total}"
    if is_ready(folder):
        return folder, "cached"
    cache.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".rows-{total}-", dir=cache))
    shutil.rmtree(fresh)
    made = in_child(lambda: generate(total, fresh), logs / f"generate-{total}.log")
    (fresh / READY).write_text(json.dumps({"version": DATA_VERSION, "rows": made["rows"]}))
    if not is_ready(folder):  # stale (an older DATA_VERSION) or incomplete
        shutil.rmtree(folder, ignore_errors=True)
    try:
        fresh.rename(folder)
    except OSError:  # another run put it in place first
        shutil.rmtree(fresh, ignore_errors=True)
    return folder, f"made in {made['seconds']:.1f} s"


# -- sources and the measured passes -----------------------------------------------------------


@dataclass(frozen=True)
class Source:
    kind: str  # csv, parquet, duckdb, postgres
    location: str  # a folder, a DuckDB file or a URL
    db_schema: str | None = None


def sources_of(folder: Path) -> list[Source]:
    return [
        Source("csv", str(folder / "csv")),
        Source("parquet", str(folder / "parquet")),
        Source("duckdb", str(folder / "source.duckdb")),
    ]


def import_pass(source: Source, out: Path, validate: bool) -> dict[str, Any]:
    """One ``import_dataset`` call; with validation, its profile and GE steps timed apart, and
    the process's peak RSS when each step starts and ends (the load + export before them)."""
    from benchforge.synthesis.importer import build

    # import_dataset looks its steps up in its module when it runs: wrapping them there (in
    # this forked process only) measures them inside the very call that is measured.
    steps: dict[str, float] = {"profile_seconds": 0.0, "validate_seconds": 0.0}

    def measured(key: str, step: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            steps.setdefault("rss_stage_mb", peak_mb())
            t = time.perf_counter()
            try:
                return step(*args, **kwargs)
            finally:
                steps[f"{key}_seconds"] += time.perf_counter() - t
                steps[f"rss_{key}_mb"] = peak_mb()

        return run

    setattr(build, "profile_step", measured("profile", build.profile_step))  # noqa: B010
    setattr(build, "validate_step", measured("validate", build.validate_step))  # noqa: B010
    t0 = time.perf_counter()
    build.import_dataset(
        source.location, name=NAME, out=str(out), db_schema=source.db_schema, validate=validate
    )
    seconds = time.perf_counter() - t0
    return {"rows": build.read_import_manifest(out).total_rows, "seconds": seconds, **steps}


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def floor_pass(source: Source, work: Path) -> dict[str, Any]:
    """Plain DuckDB: each table into a database file, then to Parquet."""
    import duckdb

    work.mkdir(parents=True)
    t0 = time.perf_counter()
    rows = 0
    with duckdb.connect(str(work / "floor.duckdb")) as con:
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'; SET preserve_insertion_order = true")
        con.execute(f"SET temp_directory = '{work / 'spill'}'")
        con.execute("CREATE SCHEMA raw")
        if source.kind == "duckdb":
            con.execute(f"ATTACH '{source.location}' AS src (READ_ONLY)")
        for table in TABLES:
            read = _floor_from(source, table.name, work)
            con.execute(f"CREATE TABLE raw.{table.name} AS SELECT * FROM {read}")
            copied = con.execute(
                f"COPY raw.{table.name} TO '{work / table.name}.parquet' "
                "(FORMAT parquet, COMPRESSION zstd)"
            ).fetchone()
            rows += int(copied[0]) if copied else 0
    return {"rows": rows, "seconds": time.perf_counter() - t0}


def _floor_from(source: Source, table: str, work: Path) -> str:
    if source.kind == "csv":
        return f"read_csv('{Path(source.location) / table}.csv')"
    if source.kind == "parquet":
        return f"read_parquet('{Path(source.location) / table}.parquet')"
    if source.kind == "duckdb":
        return f"src.raw.{table}"
    spool = work / f"{table}.csv"
    _copy_out(source, table, spool)
    return f"read_csv('{spool}')"


# -- PostgreSQL (--postgres) -------------------------------------------------------------------


def pg_schema(total: int) -> str:
    return f"bench_import_{total}"


def pg_load(url: str, total: int, folder: Path) -> dict[str, Any]:
    """Creates and fills ``bench_import_<rows>`` from the CSV files unless it already holds
    them (same tables, same row counts)."""
    import psycopg

    from benchforge.synthesis.importer.postgres import libpq_url

    schema, sizes = pg_schema(total), table_rows(total)
    t0 = time.perf_counter()
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        present = {
            str(r[0])
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (schema,),
            ).fetchall()
        }
        if present >= set(sizes) and all(
            _pg_count(conn, f"{schema}.{t}") == n for t, n in sizes.items()
        ):
            return {"how": "cached", "seconds": 0.0}
        for table in TABLES:
            columns = ", ".join(f"{c.name} {c.pg}" for c in table.columns)
            conn.execute(f"DROP TABLE IF EXISTS {schema}.{table.name}")
            conn.execute(f"CREATE TABLE {schema}.{table.name} ({columns})")
            with (
                conn.cursor().copy(
                    f"COPY {schema}.{table.name} FROM STDIN (FORMAT csv, HEADER)"
                ) as copy,
                (folder / "csv" / f"{table.name}.csv").open("rb") as fh,
            ):
                while block := fh.read(1 << 20):
                    copy.write(block)
    return {"how": f"loaded in {time.perf_counter() - t0:.1f} s", "seconds": 0.0}


def _pg_count(conn: Any, table: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row else -1


def _copy_out(source: Source, table: str, spool: Path) -> None:
    """The floor's read of a PostgreSQL table: ``COPY ... TO STDOUT`` into a CSV file."""
    import psycopg

    from benchforge.synthesis.importer.postgres import libpq_url

    with (
        psycopg.connect(libpq_url(source.location)) as conn,
        conn.cursor().copy(
            f"COPY (SELECT * FROM {source.db_schema}.{table}) TO STDOUT (FORMAT csv, HEADER)"
        ) as copy,
        spool.open("wb") as fh,
    ):
        for block in copy:
            fh.write(block)


# -- child processes ---------------------------------------------------------------------------


def in_child(job: Callable[[], dict[str, Any]], log: Path) -> dict[str, Any]:
    """Runs ``job`` in a forked process (its output to ``log``) and returns its JSON result
    with ``rss_mb``, the child's peak RSS from ``os.wait4``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        code = 0
        try:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            payload = json.dumps({"ok": True, **job()})
        except BaseException:
            payload = json.dumps({"ok": False, "error": traceback.format_exc()})
            code = 1
        with os.fdopen(write_fd, "w") as fh:
            fh.write(payload)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd) as fh:
        text = fh.read()
    _, status, usage = os.wait4(pid, 0)
    result = json.loads(text) if text else {"ok": False, "error": "no result"}
    if os.waitstatus_to_exitcode(status) != 0 or not result.get("ok"):
        tail = log.read_text(errors="replace")[-3000:] if log.is_file() else ""
        raise SystemExit(f"{log.stem} failed:\n{result.get('error', '')}\n{tail}")
    result["rss_mb"] = usage.ru_maxrss / 1024
    return dict(result)


def preload() -> float:
    """Imports what an import uses (Great Expectations included) before any fork."""
    t0 = time.perf_counter()
    import benchforge.synthesis.importer.build
    import benchforge.synthesis.importer.postgres
    import benchforge.synthesis.importer.validate  # noqa: F401

    return time.perf_counter() - t0


# -- report ------------------------------------------------------------------------------------

MODES = ("on", "off", "floor")
LABELS = {"on": "import, validation on", "off": "import, validation off", "floor": "DuckDB floor"}
Runs = dict[tuple[str, str], list[dict[str, Any]]]


def rate(rows: float, seconds: float) -> float:
    return rows / seconds if seconds > 0 else float("inf")


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return min(runs, key=lambda r: float(r["seconds"]))


def rss(run: dict[str, Any]) -> float:
    return float(run["rss_mb"])


def print_runs(sources: list[Source], runs: Runs) -> None:
    print(f"\n{'':<36}{'rows':>12}{'seconds':>10}{'rows/s':>13}")
    for source in sources:
        for mode in MODES:
            done = runs[(source.kind, mode)]
            r = best(done)
            note = "runs " + ", ".join(f"{x['seconds']:.2f}" for x in done) + " s"
            if mode == "on":
                note += (
                    f"; profile {r['profile_seconds']:.2f} s, "
                    f"GE suite {r['validate_seconds']:.2f} s"
                )
            print(
                f"{source.kind:<9}{LABELS[mode]:<27}{r['rows']:>12,}{r['seconds']:>10.2f}"
                f"{rate(r['rows'], r['seconds']):>13,.0f}  {note}"
            )
    odd = [s.kind for s in sources if len({best(runs[(s.kind, m)])["rows"] for m in MODES}) > 1]
    if odd:
        print(f"WARNING: the import and the floor hold different row counts for {', '.join(odd)}")


def paired_ratios(runs: Runs, kind: str, mode: str) -> list[float]:
    """Floor seconds over import seconds, per repeat: the two ran back to back (in alternating
    order), so a change of load between repeats moves both sides of one pair alike."""
    return [
        float(f["seconds"]) / float(x["seconds"])
        for f, x in zip(runs[(kind, "floor")], runs[(kind, mode)], strict=False)
    ]


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def print_ratios(sources: list[Source], runs: Runs) -> None:
    """Import / floor in rows/s: the median over the repeats of each repeat's pair (the floor's
    seconds over the import's, measured back to back), and the share of a validated import's
    time spent in its profile and GE steps (timed inside that run)."""
    print(f"\n{'ratio (median of back-to-back pairs)':<52}{'value':>9}   pairs")
    for source in sources:
        on = best(runs[(source.kind, "on")])
        for label, mode in (
            ("import / floor, validation off", "off"),
            ("import / floor, validation on", "on"),
        ):
            pairs = paired_ratios(runs, source.kind, mode)
            listed = ", ".join(f"{r:.2f}" for r in pairs)
            print(f"{source.kind + ': ' + label:<52}{median(pairs):>9.2f}   {listed}")
        share = (on["profile_seconds"] + on["validate_seconds"]) / on["seconds"]
        print(f"{source.kind + ': validation share of a validated import':<52}{share:>8.0%}")
    pairs = paired_ratios(runs, TARGET_SOURCE, "on")
    ratio = median(pairs)
    slow = ratio < TARGETS["validated"]
    print(
        f"a validated import from {TARGET_SOURCE.upper()} runs at x{ratio:.2f} the DuckDB floor's "
        f"rows/s, the median of {len(pairs)} back-to-back pairs (target >= "
        f"{TARGETS['validated']:g}) {'FAIL' if slow else 'PASS'}"
    )


def print_rss(
    sources: list[Source], runs: Runs, small: Runs, rows: tuple[int, int], idle_mb: float
) -> None:
    """Peak RSS of each pass at both sizes. DuckDB's buffer pool fills toward its
    ``memory_limit`` as the data grows, in the floor as in the import: the import is bounded
    when its RSS grows no more than the floor's does."""
    big_rows, small_rows = rows
    print(
        f"\npeak RSS, one process each ({idle_mb:,.0f} MB doing nothing; DuckDB memory_limit "
        f"{MEMORY_LIMIT} for\nthe import and the floor, {VALIDATE_LIMIT} for validation)"
    )
    print(f"{'':<36}{small_rows:>12,} rows{big_rows:>12,} rows{'ratio':>8}")
    ratios: dict[tuple[str, str], float] = {}
    above: list[tuple[float, float]] = []  # a validated import's RSS above the floor's
    for source in sources:
        mb = {}
        for mode in MODES:
            key = (source.kind, mode)
            mb[mode] = (max(map(rss, small[key])), max(map(rss, runs[key])))
            ratios[key] = mb[mode][1] / mb[mode][0]
            print(
                f"{source.kind:<9}{LABELS[mode]:<27}{mb[mode][0]:>12,.0f} MB "
                f"{mb[mode][1]:>12,.0f} MB {ratios[key]:>7.2f}"
            )
        above.append((mb["on"][0] - mb["floor"][0], mb["on"][1] - mb["floor"][1]))
    print(
        f"peak RSS of a validated import (its highest run) as its steps end, at {small_rows:,} / "
        f"{big_rows:,} rows:"
    )
    for source in sources:
        at = [small[(source.kind, "on")][0], max(runs[(source.kind, "on")], key=rss)]
        print(
            f"{source.kind:<9}"
            + "   ".join(
                f"{label} {at[0][key]:,.0f} / {at[1][key]:,.0f} MB"
                for label, key in (
                    ("load + export", "rss_stage_mb"),
                    ("profile", "rss_profile_mb"),
                    ("GE suite", "rss_validate_mb"),
                )
            )
        )
    worst = max(v for (_, mode), v in ratios.items() if mode == "on")
    floor = max(v for (_, mode), v in ratios.items() if mode == "floor")
    grows = worst > TARGETS["rss"]
    print(
        f"memory {'GROWS' if grows else 'does not grow'} with the data: a validated import's "
        f"RSS x{worst:.2f} at most for x{big_rows / small_rows:.0f} the rows (target <= "
        f"{TARGETS['rss']:g}) {'FAIL' if grows else 'PASS'}"
    )
    print(
        f"  (the floor's x{floor:.2f}; a validated import holds "
        f"{max(a for a, _ in above):+,.0f} MB over the floor at {small_rows:,} rows, "
        f"{max(b for _, b in above):+,.0f} MB at {big_rows:,})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5_000_000, help="rows, all tables")
    parser.add_argument("--small-rows", type=int, help="rows of the RSS baseline (rows / 10)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each pass (best)")
    parser.add_argument(
        "--pairs",
        type=int,
        default=3,
        help=f"back-to-back floor / validated import pairs from {TARGET_SOURCE} (median)",
    )
    parser.add_argument(
        "--budget-minutes",
        type=float,
        default=10.0,
        help="skip further repeats when one would end the measurements past this",
    )
    parser.add_argument("--data", type=Path, default=CACHE, help=f"data cache (default {CACHE})")
    parser.add_argument("--postgres", metavar="URL", help="also import from this server")
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temp folder)")
    args = parser.parse_args()
    small_rows = args.small_rows or max(10, args.rows // 10)
    if args.rows < 10 or small_rows < 10:
        parser.error("--rows and --small-rows must be at least 10")

    imports_s = preload()
    parent_mb = peak_mb()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-import-"))
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"
    # What a forked process holds before it does anything: the floor of every RSS below.
    idle_mb = in_child(dict, logs / "idle.log")["rss_mb"]
    big_dir, big_how = ensure_data(args.rows, args.data, logs)
    small_dir, small_how = ensure_data(small_rows, args.data, logs)
    sources, small_sources = sources_of(big_dir), sources_of(small_dir)
    pg_how = ""
    if args.postgres:
        url = str(args.postgres)
        for total, folder in ((args.rows, big_dir), (small_rows, small_dir)):
            loaded = in_child(partial(pg_load, url, total, folder), logs / f"pg-{total}.log")
            pg_how += f"; PostgreSQL {pg_schema(total)} ({loaded['how']})"
        sources.append(Source("postgres", url, pg_schema(args.rows)))
        small_sources.append(Source("postgres", url, pg_schema(small_rows)))

    sizes = ", ".join(f"{t} {n:,}" for t, n in table_rows(args.rows).items())
    mb = {k: folder_bytes(big_dir / k) / 1e6 for k in ("csv", "parquet")}
    print(f"bench/dataset_import.py: {sizes} rows ({args.rows:,} in all); work folder {work}")
    print(
        f"  {args.rows:,} rows: {big_dir} ({big_how}; CSV {mb['csv']:,.0f} MB, Parquet "
        f"{mb['parquet']:,.0f} MB, DuckDB {(big_dir / 'source.duckdb').stat().st_size / 1e6:,.0f}"
        " MB)"
    )
    print(f"  {small_rows:,} rows: {small_dir} ({small_how}){pg_how}")
    print(
        f"  modules imported once, before the forks: {imports_s:.1f} s, {parent_mb:,.0f} MB RSS",
        flush=True,
    )

    def measure(source: Source, mode: str, tag: str) -> dict[str, Any]:
        out = work / f"{source.kind}-{mode}-{tag}"
        log = logs / f"{source.kind}-{mode}-{tag}.log"
        shutil.rmtree(out, ignore_errors=True)
        if mode == "floor":
            result = in_child(lambda: floor_pass(source, out), log)
        else:
            result = in_child(lambda: import_pass(source, out, mode == "on"), log)
        shutil.rmtree(out, ignore_errors=True)
        return result

    runs: Runs = {}
    started = time.perf_counter()
    skipped, per_repeat = 0, 0.0
    for i in range(max(1, args.repeat)):
        elapsed = time.perf_counter() - started
        per_repeat = elapsed / i if i else 0.0
        if i and elapsed + per_repeat > args.budget_minutes * 60:
            skipped = args.repeat - i
            break
        for source in sources:
            # the floor and the imports back to back, in alternating order (see paired_ratios)
            for mode in MODES if i % 2 else tuple(reversed(MODES)):
                runs.setdefault((source.kind, mode), []).append(measure(source, mode, "big"))
    per_repeat = (time.perf_counter() - started) / len(runs[(TARGET_SOURCE, "on")])
    target = next(s for s in sources if s.kind == TARGET_SOURCE)
    while len(runs[(TARGET_SOURCE, "on")]) < args.pairs:
        i = len(runs[(TARGET_SOURCE, "on")])
        elapsed = time.perf_counter() - started
        if elapsed + per_repeat / len(sources) > args.budget_minutes * 60:
            break
        for mode in ("floor", "on") if i % 2 == 0 else ("on", "floor"):
            runs[(TARGET_SOURCE, mode)].append(measure(target, mode, "big"))
    small: Runs = {(s.kind, m): [measure(s, m, "small")] for s in small_sources for m in MODES}

    print_runs(sources, runs)
    print_ratios(sources, runs)
    print_rss(sources, runs, small, (args.rows, small_rows), idle_mb)
    if skipped:
        print(
            f"(note: {skipped} repeat(s) skipped: one takes ~{per_repeat:.0f} s and would pass "
            f"--budget-minutes {args.budget_minutes:g})"
        )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

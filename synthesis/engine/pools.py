"""Faker pools: Faker runs once per (provider, args, locale, size); rows pick from pools by hash.

Pools do not depend on the dataset seed (the seed decides which entries each row picks), so one
pool serves every column, seed and run that asks for it: pools are cached in memory and on disk
(``$BENCHFORGE_CACHE_DIR`` or ``~/.cache/benchforge``), keyed by everything that shapes them,
including the Faker version.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

import duckdb
import faker
import pyarrow as pa
import pyarrow.parquet as pq
from faker import Faker

from benchforge.synthesis.spec.generators import FakerGen


def _cache_dir() -> Path:
    root = os.environ.get("BENCHFORGE_CACHE_DIR") or Path.home() / ".cache" / "benchforge"
    return Path(root) / "faker-pools"


def pool_key(gen: FakerGen, locale: str) -> str:
    shape = [faker.VERSION, gen.provider, gen.args, locale, gen.pool_size]
    return hashlib.sha256(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()[:24]


@cache
def _build(provider: str, args_json: str, locale: str, size: int, key: str) -> tuple[str, ...]:
    path = _cache_dir() / f"{key}.parquet"
    if path.exists():
        try:
            return tuple(pq.read_table(path).column("value").to_pylist())
        except (OSError, pa.ArrowException):
            path.unlink(missing_ok=True)  # a damaged cache entry is rebuilt
    fake = Faker(locale)
    fake.seed_instance(int(key[:15], 16))
    make = getattr(fake, provider)
    args = json.loads(args_json)
    values = tuple(str(make(**args)) for _ in range(size))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        pq.write_table(pa.table({"value": list(values)}), tmp)
        os.replace(tmp, path)
    except OSError:
        pass  # the cache is an optimization; an unwritable home must not fail a run
    return values


def build_pool(gen: FakerGen, locale: str) -> tuple[str, ...]:
    args_json = json.dumps(gen.args, sort_keys=True, default=str)
    return _build(gen.provider, args_json, locale, gen.pool_size, pool_key(gen, locale))


def register_pool(con: duckdb.DuckDBPyConnection, gen: FakerGen) -> str:
    """Creates ``_pool.p_<key>(locale, idx, value)`` once per distinct pool; returns its name."""
    locales = gen.locales if gen.locale_from else [gen.locale]
    key = hashlib.sha256("|".join(pool_key(gen, loc) for loc in locales).encode()).hexdigest()
    name = f"_pool.p_{key[:24]}"
    con.execute("CREATE SCHEMA IF NOT EXISTS _pool")
    exists = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = '_pool' AND table_name = ?",
        [name.split(".", 1)[1]],
    ).fetchone()
    if exists and exists[0]:
        return name
    locs: list[str] = []
    idxs: list[int] = []
    values: list[str] = []
    for locale in locales:
        pool = build_pool(gen, locale)
        locs += [locale] * len(pool)
        idxs += list(range(len(pool)))
        values += pool
    con.register("_pool_src", pa.table({"locale": locs, "idx": idxs, "value": values}))
    con.execute(f"CREATE TABLE {name} AS SELECT * FROM _pool_src")
    con.unregister("_pool_src")
    return name

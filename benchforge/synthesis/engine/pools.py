"""Faker pools: Faker runs once per (provider, args, locale, size); rows pick from pools by hash.

Pools do not depend on the dataset seed (the seed decides which entries each row picks), so one
pool serves every column, seed and run that asks for it: pools are cached in memory and on disk
(``$BENCHFORGE_CACHE_DIR`` or ``~/.cache/benchforge``), keyed by everything that shapes them: the
Faker version, ``POOL_VERSION`` and the reference date Faker's clock is pinned to (the spec's
``faker_today()``), so a pool is a pure function of the spec and never of the day it is built
(nor of the process: see ``canonical_faker``).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from datetime import date
from pathlib import Path

import duckdb
import faker
import pyarrow as pa
import pyarrow.parquet as pq

from benchforge.synthesis.engine.faker_calls import (
    canonical_faker,
    pinned_today,
    provider_method,
    resolve_args,
)
from benchforge.synthesis.spec.generators import FakerGen

__all__ = ["POOL_VERSION", "FakerGen", "build_pool", "clear_memory_cache", "pool_key"]

POOL_VERSION = 2
"""Bumped when the way pools are built changes. 2: Faker's clock pinned to the spec's reference
date, arguments resolved to the types Faker expects (YAML dates stay dates), set-built provider
lists sorted (no dependence on ``PYTHONHASHSEED``)."""

_MEMORY: dict[str, tuple[str, ...]] = {}
_MEMORY_LOCK = threading.Lock()


def _cache_dir() -> Path:
    root = os.environ.get("BENCHFORGE_CACHE_DIR") or Path.home() / ".cache" / "benchforge"
    return Path(root) / "faker-pools"


def _digest(shape: list[object]) -> str:
    return hashlib.sha256(json.dumps(shape, sort_keys=True, default=str).encode()).hexdigest()


def pool_key(gen: FakerGen, locale: str, today: date) -> str:
    """The pool's cache key: everything its values depend on."""
    shape = [
        POOL_VERSION,
        faker.VERSION,
        gen.provider,
        gen.args,
        locale,
        gen.pool_size,
        today.isoformat(),
    ]
    return _digest(shape)[:24]


def _faker_seed(gen: FakerGen, locale: str) -> int:
    """The pool's Faker seed, from the provider call alone (not the reference date nor
    ``POOL_VERSION``): pools of providers that never read the clock keep their values when the
    cache is re-keyed."""
    return int(_digest([faker.VERSION, gen.provider, gen.args, locale, gen.pool_size])[:15], 16)


def clear_memory_cache() -> None:
    """Forgets the pools held in memory (the disk cache stays)."""
    with _MEMORY_LOCK:
        _MEMORY.clear()


def _read_disk(path: Path) -> tuple[str, ...] | None:
    if not path.exists():
        return None
    try:
        return tuple(pq.read_table(path).column("value").to_pylist())
    except (OSError, pa.ArrowException):
        path.unlink(missing_ok=True)  # a damaged cache entry is rebuilt
        return None


def _write_disk(path: Path, values: tuple[str, ...]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        pq.write_table(pa.table({"value": list(values)}), tmp)
        os.replace(tmp, path)
    except OSError:
        pass  # the cache is an optimization; an unwritable home must not fail a run


def _draw(gen: FakerGen, locale: str, today: date) -> tuple[str, ...]:
    fake = canonical_faker(locale)
    fake.seed_instance(_faker_seed(gen, locale))
    make = provider_method(fake, gen.provider)
    args = resolve_args(make, gen.provider, gen.args)
    with pinned_today(today):
        return tuple(str(make(**args)) for _ in range(gen.pool_size))


def build_pool(gen: FakerGen, locale: str, today: date) -> tuple[str, ...]:
    """The pool's values (text), from memory, the disk cache, or Faker with its clock at
    ``today``."""
    key = pool_key(gen, locale, today)
    with _MEMORY_LOCK:
        cached = _MEMORY.get(key)
    if cached is not None:
        return cached
    path = _cache_dir() / f"{key}.parquet"
    values = _read_disk(path)
    if values is None:
        values = _draw(gen, locale, today)
        _write_disk(path, values)
    with _MEMORY_LOCK:
        _MEMORY[key] = values
    return values


def register_pool(con: duckdb.DuckDBPyConnection, gen: FakerGen, today: date) -> str:
    """Creates ``_pool.p_<key>(locale, idx, value)`` once per distinct pool; returns its name."""
    locales = gen.locales if gen.locale_from else [gen.locale]
    key = hashlib.sha256(
        "|".join(pool_key(gen, loc, today) for loc in locales).encode()
    ).hexdigest()
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
        pool = build_pool(gen, locale, today)
        locs += [locale] * len(pool)
        idxs += list(range(len(pool)))
        values += pool
    con.register("_pool_src", pa.table({"locale": locs, "idx": idxs, "value": values}))
    con.execute(f"CREATE TABLE {name} AS SELECT * FROM _pool_src")
    con.unregister("_pool_src")
    return name

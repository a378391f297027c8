"""Faker pools: Faker runs once per (column, locale) to fill a seeded pool; rows pick by hash."""

from __future__ import annotations

import duckdb
import pyarrow as pa
from faker import Faker

from synthesis.engine.random import salt
from synthesis.spec.generators import FakerGen


def build_pool(gen: FakerGen, locale: str, seed: int, table: str, column: str) -> list[str]:
    fake = Faker(locale)
    fake.seed_instance(salt(seed, table, column, "pool", locale))
    provider = getattr(fake, gen.provider)
    return [str(provider(**gen.args)) for _ in range(gen.pool_size)]


def register_pool(
    con: duckdb.DuckDBPyConnection, gen: FakerGen, seed: int, table: str, column: str
) -> str:
    """Creates ``_pool.<table>__<column>(locale, idx, value)``; returns its name."""
    locales = gen.locales if gen.locale_from else [gen.locale]
    locs: list[str] = []
    idxs: list[int] = []
    values: list[str] = []
    for locale in locales:
        pool = build_pool(gen, locale, seed, table, column)
        locs += [locale] * len(pool)
        idxs += list(range(len(pool)))
        values += pool
    name = f"_pool.{table}__{column}"
    con.execute("CREATE SCHEMA IF NOT EXISTS _pool")
    con.register("_pool_src", pa.table({"locale": locs, "idx": idxs, "value": values}))
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _pool_src")
    con.unregister("_pool_src")
    return name

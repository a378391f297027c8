"""Seeded choices: every random decision is a pure function of (seed, what it decides), so the
same seed gives the same perturbed databases and another seed other ones.

Per-row decisions are made in DuckDB SQL as ``hash(salt || rowid)``: the tables are copied in
the warehouse's order, so a row's ``rowid`` is the same on every run."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

from benchforge.core.sql import literal

T = TypeVar("T")

_BUCKETS = 1_000_000


def salt(seed: int, *parts: object) -> str:
    text = "\0".join([str(seed), *(str(p) for p in parts)])
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def choose(options: Sequence[T], seed: int, *parts: object) -> T:
    """One of ``options``, picked by the seed and ``parts``."""
    if len(options) == 1:
        return options[0]
    return options[int(salt(seed, *parts), 16) % len(options)]


def row_draw_sql(row_salt: str) -> str:
    """A per-row integer in [0, 1 000 000), a pure function of ``row_salt`` and the rowid."""
    return f"(hash({literal(row_salt)} || CAST(rowid AS VARCHAR)) % {_BUCKETS})"


def row_uniform_sql(row_salt: str) -> str:
    """A per-row number in [0, 1)."""
    return f"({row_draw_sql(row_salt)} / {_BUCKETS}.0)"

"""Stateless randomness: every draw is a pure function of (seed, table, column, stream, row id).

Salts are derived in Python with BLAKE2b; per-row uniforms are computed in DuckDB from
``hash(row_id + salt)``, so any row can be recomputed alone and chunks can run in any order.
(Not ``hash(row_id, salt)``: DuckDB combines multi-argument hashes with a multiply-xor, so two
streams of the same row would differ only by a constant xor and be strongly correlated.)
"""

from __future__ import annotations

import hashlib

_TWO_POW_MINUS_53 = "1.1102230246251565e-16"


def salt(seed: int, *parts: str | int) -> int:
    text = "\x1f".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1


def uniform_sql(salt_value: int, row_expr: str = "_rid") -> str:
    """SQL for a uniform double in [0, 1) with 53 random bits."""
    hashed = f"hash(CAST({row_expr} AS UBIGINT) + {salt_value}::UBIGINT)"
    return f"(({hashed} >> 11)::DOUBLE * {_TWO_POW_MINUS_53})"


def index_sql(salt_value: int, n: int, row_expr: str = "_rid") -> str:
    """SQL for a uniform integer in [0, n)."""
    return f"(hash(CAST({row_expr} AS UBIGINT) + {salt_value}::UBIGINT) % {n})::BIGINT"


class Streams:
    """Named uniform streams of one column: ``streams.u("value")`` gives its SQL."""

    def __init__(self, seed: int, table: str, column: str, row_expr: str = "_rid"):
        self.seed, self.table, self.column, self.row_expr = seed, table, column, row_expr

    def salt(self, stream: str | int) -> int:
        return salt(self.seed, self.table, self.column, stream)

    def u(self, stream: str | int = 0) -> str:
        return uniform_sql(self.salt(stream), self.row_expr)

    def index(self, n: int, stream: str | int = 0) -> str:
        return index_sql(self.salt(stream), n, self.row_expr)

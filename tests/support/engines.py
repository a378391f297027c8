"""The shop data every read-only engine test reads, and the write statements each engine must
refuse: by kind (the issue's list), in each engine's own dialect, so the engine-alone runs
(the lexical check off) reach the engine's own fence."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROWS = 200
AMOUNT_SUM = 99_700  # sum((i * 37) % 1000 for i in 1..200)
CUSTOMER_C3 = 29  # rows whose customer is 'c3'
SEMICOLON_NOTE = "paid; -- not a comment /* nor this */ 'quoted'"

CREATE_ORDERS = (
    "CREATE TABLE orders (order_id INTEGER PRIMARY KEY, customer VARCHAR(20), "
    "amount_cents INTEGER, note VARCHAR(100))"
)

CREATE_INDEX = "CREATE INDEX orders_customer ON orders (customer)"


def order_rows() -> list[tuple[Any, ...]]:
    return [
        (i, f"c{i % 7}", (i * 37) % 1000, SEMICOLON_NOTE if i % 10 == 0 else None)
        for i in range(1, ROWS + 1)
    ]


def rows_digest(rows: Iterable[tuple[Any, ...]]) -> str:
    """sha256 over the rows (ordered by the caller), each value by its text."""
    h = hashlib.sha256()
    for row in rows:
        h.update(repr(tuple(None if v is None else str(v) for v in row)).encode() + b"\n")
    return h.hexdigest()


def folder_state(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with its sha256: a write, or a file an ATTACH, COPY or
    VACUUM INTO made, changes it."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# Kind -> statements, common to every engine's dialect.
COMMON_WRITES: dict[str, list[str]] = {
    "INSERT": [
        "INSERT INTO orders VALUES (9999, 'mallory', 1, 'x')",
        "INSERT INTO orders SELECT order_id + 1000, customer, amount_cents, note FROM orders",
    ],
    "UPDATE": ["UPDATE orders SET amount_cents = 0", "UPDATE orders SET note = 'x' WHERE 1 = 1"],
    "DELETE": [
        "DELETE FROM orders",
        "/* SELECT */ DELETE FROM orders",
        "-- read\nDELETE FROM orders",
    ],
    "DROP": ["DROP TABLE orders", "DROP TABLE IF EXISTS orders"],
    "CREATE": [
        "CREATE TABLE stolen AS SELECT * FROM orders",
        "CREATE TEMP TABLE scratch (x INTEGER)",
        "CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount_cents > 500",
        "CREATE INDEX orders_by_customer ON orders (customer)",
    ],
    "ALTER": [
        "ALTER TABLE orders ADD COLUMN extra INTEGER",
        "ALTER TABLE orders RENAME TO orders_old",
    ],
    "multi-statement": [
        "SELECT 1; DELETE FROM orders",
        "SELECT count(*) FROM orders; SELECT 1",
        "DELETE FROM orders; SELECT 1",
        "SELECT 1;\nDROP TABLE orders;",
    ],
    "transaction": ["BEGIN", "COMMIT"],
}


def duckdb_writes(outside: Path) -> dict[str, list[str]]:
    return {
        **COMMON_WRITES,
        "DELETE": [*COMMON_WRITES["DELETE"], "WITH x AS (SELECT 1) DELETE FROM orders"],
        "COPY": [
            f"COPY orders TO '{outside}/dump.csv'",
            f"COPY orders FROM '{outside}/rows.csv'",
            f"EXPORT DATABASE '{outside}/export'",
        ],
        "ATTACH": [f"ATTACH '{outside}/other.duckdb' AS other", "ATTACH ':memory:' AS mem"],
        "PRAGMA": ["PRAGMA enable_profiling", "PRAGMA memory_limit = '1GB'"],
        "SET": ["SET enable_external_access = true", "SET lock_configuration = false"],
        "other": ["CHECKPOINT", "VACUUM", "INSTALL httpfs", "LOAD httpfs", "USE memory"],
    }


def sqlite_writes(outside: Path) -> dict[str, list[str]]:
    return {
        **COMMON_WRITES,
        "DELETE": [*COMMON_WRITES["DELETE"], "WITH x AS (SELECT 1) DELETE FROM orders"],
        "ATTACH": [f"ATTACH DATABASE '{outside}/other.sqlite' AS other"],
        "PRAGMA": [
            "PRAGMA query_only = OFF",
            "PRAGMA user_version = 7",
            "PRAGMA journal_mode = WAL",
            "PRAGMA writable_schema = ON",
        ],
        "other": [
            "VACUUM",
            f"VACUUM INTO '{outside}/copy.sqlite'",
            "REINDEX",
            "ANALYZE",
            "SAVEPOINT s",
            "REPLACE INTO orders VALUES (1, 'c1', 0, NULL)",
        ],
    }


def postgres_writes(outside: Path) -> dict[str, list[str]]:
    return {
        **COMMON_WRITES,
        "DELETE": [
            *COMMON_WRITES["DELETE"],
            "WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone",
            "TRUNCATE orders",
        ],
        "CREATE": [*COMMON_WRITES["CREATE"], "CREATE SCHEMA evil"],
        "COPY": [
            "COPY orders FROM STDIN",
            f"COPY orders TO '{outside}/dump.csv'",
            f"COPY (SELECT 1) TO PROGRAM 'touch {outside}/pwned'",
        ],
        "SET": [
            "SET TRANSACTION READ WRITE",
            "SET default_transaction_read_only = off",
            "SET statement_timeout = 0",
        ],
        "other": ["GRANT ALL ON orders TO PUBLIC", "VACUUM orders", "LOCK TABLE orders"],
    }


# Kinds that only the lexical check can refuse where the dialect has no such statement.
NOT_IN_DIALECT = {
    "sqlite": {"COPY": ["COPY orders FROM '/etc/hostname'"]},
    "postgres": {
        "ATTACH": ["ATTACH DATABASE '/tmp/x.sqlite' AS x"],
        "PRAGMA": ["PRAGMA query_only = OFF"],
    },
}


def flat(writes: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(kind, sql) for kind, statements in writes.items() for sql in statements]

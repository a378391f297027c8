"""A tiny dataset and perturb specs over it, shared by the perturb tests: 40 customers (every
third one Enterprise), 60 tickets on them (a third each Low / Medium / High priority, every
fifth without a description), 30 notes. Gold answers are computed on its warehouse, before
perturbation; the known numbers below say what they must be."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from tests.support.datasets import write_dataset

ENTERPRISE_TICKETS = 20  # tickets whose customer is Enterprise
HIGH_TICKETS = 20  # tickets of High priority
ENTERPRISE_NOTES = 10  # notes on Enterprise customers

TABLES = {
    "customers": (
        "SELECT 'CUS-' || lpad(CAST(i AS VARCHAR), 4, '0') AS customer_id, "
        "CASE WHEN i % 3 = 0 THEN 'Enterprise' ELSE 'SMB' END AS segment FROM range(1, 41) t(i)"
    ),
    "tickets": (
        "SELECT i AS ticket_id, "
        "'CUS-' || lpad(CAST(1 + (i * 7) % 40 AS VARCHAR), 4, '0') AS customer_id, "
        "CASE i % 3 WHEN 0 THEN 'Low' WHEN 1 THEN 'Medium' ELSE 'High' END AS priority, "
        "CASE WHEN i % 5 = 0 THEN NULL ELSE 'Ticket text ' || i END AS description, "
        "DATE '2024-01-01' + CAST(i AS INTEGER) AS opened FROM range(1, 61) t(i)"
    ),
    "notes": (
        "SELECT i AS note_id, 'CUS-' || lpad(CAST(1 + i % 40 AS VARCHAR), 4, '0') AS customer_id, "
        "'note ' || i AS body FROM range(1, 31) t(i)"
    ),
}

ENTERPRISE_TICKETS_SQL = (
    "SELECT count(*) FROM tickets t JOIN customers c ON {join} WHERE c.segment = 'Enterprise'"
)


def tiny_dataset(folder: Path) -> Path:
    return write_dataset(folder, TABLES)


def gold(dataset: Path, sql: str) -> Any:
    """``sql`` on the dataset before perturbation (its ``raw`` tables)."""
    with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
        con.execute("USE raw")
        row = con.execute(sql).fetchone()
    assert row is not None
    return row[0]


def spec_data(
    *,
    key_rules: list[dict[str, Any]] | None = None,
    embed: bool = False,
    support_engine: str = "sqlite",
    notes_engine: str = "duckdb",
) -> dict[str, Any]:
    """Customers (and notes as documents) in DuckDB ``sales``; tickets in ``support``."""
    databases: dict[str, Any] = {
        "sales": {"engine": "duckdb", "tables": ["customers"]},
        "support": {"engine": support_engine, "tables": ["tickets"]},
    }
    if notes_engine == "duckdb":
        databases["sales"]["documents"] = ["notes"]
    else:
        databases["support"]["documents"] = ["notes"]
    data: dict[str, Any] = {"databases": databases}
    if key_rules:
        data["keys"] = [{"table": "tickets", "column": "customer_id", "rules": key_rules}]
    if embed:
        data["embed"] = [
            {
                "table": "tickets",
                "columns": ["priority"],
                "into": "description",
                "templates": [
                    "Priority: {priority}.",
                    "The customer rated this {priority} priority.",
                ],
            }
        ]
    return data


def read_sqlite(path: Path, table: str) -> pd.DataFrame:
    with sqlite3.connect(path) as con:
        return pd.read_sql_query(f'SELECT * FROM "{table}"', con)


def across_databases(out: Path, tickets: pd.DataFrame | None = None) -> duckdb.DuckDBPyConnection:
    """What an agent's Python step does: the perturbed databases read into one DuckDB, the
    ``sales`` file attached, ``tickets`` from the SQLite ``support`` file (or as given)."""
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{out / 'databases' / 'sales.duckdb'}' AS sales (READ_ONLY)")
    con.execute("USE sales")
    frame = (
        tickets
        if tickets is not None
        else read_sqlite(out / "databases" / "support.sqlite", "tickets")
    )
    con.register("tickets", frame)
    return con

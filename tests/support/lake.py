"""A tiny dataset and a lake spec over it, shared by the lake tests: 40 customers in three
regions (some names outside Latin-1), 120 orders (every fourth cancelled, every twentieth
undated), a table of notes no export names. The known numbers below say what the data must
give; the reference functions read a lake's files as a pipeline would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from benchforge.synthesis.lake import LakeFile, LakeRecord
from tests.support.datasets import write_dataset

ORDERS_TOTAL = 9075.0  # 1.25 * (1 + ... + 120)
CANCELLED_TOTAL = 2325.0  # 1.25 * 4 * (1 + ... + 30)
TOP_CUSTOMER = ("CUS-0001", 300.0)  # orders 40, 80, 120: 1.25 * 240

TABLES = {
    "customers": (
        "SELECT 'CUS-' || lpad(CAST(i AS VARCHAR), 4, '0') AS customer_id, "
        "CASE WHEN i % 5 = 0 THEN 'Łukasz Nowak ' || i ELSE 'Customer ' || i END AS name, "
        "CASE i % 3 WHEN 0 THEN 'N' WHEN 1 THEN 'S' ELSE 'W' END AS region_code, "
        "CASE WHEN i % 2 = 0 THEN 'SMB' ELSE 'Enterprise' END AS segment "
        "FROM range(1, 41) t(i)"
    ),
    "regions": "SELECT * FROM (VALUES ('N', 'Nörth'), ('S', 'South'), ('W', 'West')) v(code, name)",
    "orders": (
        "SELECT 'ORD-' || lpad(CAST(i AS VARCHAR), 5, '0') AS order_id, "
        "'CUS-' || lpad(CAST(1 + (i * 7) % 40 AS VARCHAR), 4, '0') AS customer_id, "
        "lpad(CAST(i AS VARCHAR), 6, '0') AS invoice_number, "
        "CASE WHEN i % 20 = 0 THEN NULL ELSE DATE '2023-01-01' + CAST(i * 5 AS INTEGER) END "
        "AS ordered_at, "
        "CAST(i * 1.25 AS DOUBLE) AS amount, CAST(i % 7 + 1 AS INTEGER) AS quantity, "
        "CASE WHEN i % 4 = 0 THEN 'cancelled' ELSE 'shipped' END AS status, "
        "TIMESTAMP '2023-01-01 08:30:00' + to_hours(CAST(i AS BIGINT)) AS updated_at "
        "FROM range(1, 121) t(i)"
    ),
    "notes": "SELECT i AS note_id, 'note ' || i AS body FROM range(1, 31) t(i)",
}


def tiny_dataset(folder: Path) -> Path:
    return write_dataset(folder, TABLES)


def spec_data(**overrides: Any) -> dict[str, Any]:
    """Every format once: orders as quarterly (or yearly) CSV in UTF-16, customers as JSON by
    region, shipped orders as JSON Lines, customers as Parquet, regions as Latin-1 CSV, orders
    again as an Excel workbook with one block per year; the cancelled orders stated in a
    Markdown report only, by customer in a text report."""
    data: dict[str, Any] = {
        "exports": [
            {
                "table": "orders",
                "folder": "sales",
                "name": "orders_{part}",
                "splits": [
                    {"by": "period", "column": "ordered_at", "every": "quarter"},
                    {"by": "period", "column": "ordered_at", "every": "year"},
                ],
                "csv": {
                    "delimiters": [";", "\t", "|"],
                    "encodings": ["utf-16"],
                    "notes": ["Orders export, {part}\nRows: {rows}"],
                },
            },
            {
                "table": "customers",
                "folder": "crm",
                "name": "customers_{part}",
                "splits": [
                    {
                        "by": "value",
                        "column": "region_code",
                        "lookup": {"table": "regions", "key": "code", "value": "name"},
                    }
                ],
                "formats": ["json"],
            },
            {
                "table": "orders",
                "folder": "shipped",
                "name": "shipped_orders",
                "columns": ["order_id", "customer_id", "amount", "ordered_at"],
                "where": "status = 'shipped'",
                "formats": ["jsonl"],
            },
            {
                "table": "customers",
                "folder": "warehouse",
                "name": "customers",
                "formats": ["parquet"],
            },
            {
                "table": "regions",
                "name": "regions",
                "csv": {"delimiters": [","], "encodings": ["latin-1"]},
            },
        ],
        "reports": [
            {
                "table": "orders",
                "title": "Cancelled orders",
                "intro": "Orders cancelled by customers.",
                "sentence": "Order {order_id} for {customer_id} came to {amount:,.2f} EUR.",
                "where": "status = 'cancelled'",
                "formats": ["markdown"],
            },
            {
                "table": "customers",
                "name": "accounts_{part}",
                "title": "Accounts",
                "sentence": "{name} ({customer_id}) is a {segment} account.",
                "splits": [{"by": "value", "column": "segment"}],
                "formats": ["text"],
            },
        ],
        "workbooks": [
            {
                "table": "orders",
                "folder": "finance",
                "name": "orders_register",
                "sheet": "Orders",
                "columns": ["order_id", "customer_id", "amount", "ordered_at", "status"],
                "splits": [{"by": "period", "column": "ordered_at", "every": "year"}],
                "preamble": ["Order register ({rows} orders)", "Amounts in EUR."],
                "note": "Orders of {part}: {rows}",
            }
        ],
        "distractors": {
            "near_duplicates": 2,
            "stale_copies": 2,
            "overlapping_periods": 1,
            "unrelated": 1,
        },
        "obscure": {
            "identifiers": ["*_id", "*_number"],
            "names": ["name"],
            "numbers": [{"columns": ["amount"], "factor": [0.5, 2.0], "shift": [1.0, 5.0]}],
        },
    }
    data.update(overrides)
    return data


def read_table_file(path: Path, lake_file: LakeFile) -> pd.DataFrame:
    """The file as a pipeline reads it, every value as text (None where missing)."""
    if lake_file.format == "csv":
        frame = pd.read_csv(
            path,
            sep=lake_file.delimiter,
            encoding=lake_file.encoding,
            skiprows=lake_file.skip_rows,
            dtype=str,
            keep_default_na=False,
            na_values=[""],
        )
    elif lake_file.format in ("json", "jsonl"):
        text = path.read_text(encoding="utf-8")
        objects = (
            [json.loads(line) for line in text.splitlines()]
            if lake_file.format == "jsonl"
            else json.loads(text)
        )
        frame = pd.DataFrame(objects, columns=lake_file.columns, dtype=object)
        frame = frame.map(lambda v: None if v is None else str(v))
    else:
        with duckdb.connect() as con:
            frame = con.execute("SELECT * FROM read_parquet(?)", [str(path)]).df()
        return frame
    return frame.astype(object).where(frame.notna(), None)


def orders_by_customer(lake: Path, record: LakeRecord) -> dict[str, tuple[float, int]]:
    """A reference pipeline: every quarterly / yearly orders export of the lake, read and
    summed per customer (total amount, orders)."""
    totals: dict[str, tuple[float, int]] = {}
    for lake_file in record.files:
        if lake_file.role != "export" or not lake_file.path.startswith("sales/"):
            continue
        frame = read_table_file(lake / lake_file.path, lake_file)
        for customer, amount in zip(frame["customer_id"], frame["amount"], strict=True):
            total, count = totals.get(customer, (0.0, 0))
            totals[customer] = (total + float(amount), count + 1)
    return totals

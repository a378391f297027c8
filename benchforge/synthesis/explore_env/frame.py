"""Tables in memory (:class:`Frame`), how their values are written as CSV text and read back
by type, and the seeded draws every noise decision is made with.

An environment is small by design (DataClawBench's is CSV files an agent reads with pandas), so
tables are handled as Python rows: every decision is a plain function of (seed, what it decides,
source row number), with no dependence on DuckDB's scan order or threads."""

from __future__ import annotations

import csv
import hashlib
import io
import math
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from benchforge.core.sql import quote
from benchforge.synthesis.explore_env.loader import is_numeric

_BUCKETS = 2**53
_INTEGER_TYPES = ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT")


@dataclass
class Frame:
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def index(self, column: str) -> int:
        return self.columns.index(column)

    def values(self, column: str) -> list[Any]:
        i = self.index(column)
        return [row[i] for row in self.rows]


def dataset_types(warehouse: Path) -> dict[str, dict[str, str]]:
    """Table -> column -> DuckDB type, of the warehouse's ``raw`` schema."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'raw' ORDER BY table_name, ordinal_position"
        ).fetchall()
    types: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        types.setdefault(table, {})[column] = kind
    return types


def read_dataset_table(con: duckdb.DuckDBPyConnection, table: str) -> Frame:
    """The table's rows in storage order (DECIMAL read as float, as the CSV is read back)."""
    relation = con.execute(f"SELECT * FROM raw.{quote(table)}")
    columns = [d[0] for d in relation.description]
    rows = [[float(v) if isinstance(v, Decimal) else v for v in row] for row in relation.fetchall()]
    return Frame(columns, rows)


def to_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def from_text(text: str | None, kind: str) -> Any:
    """A written cell read back as the dataset's type ``kind`` (empty: None)."""
    if text is None or text == "":
        return None
    if is_numeric(kind):
        if kind.startswith(_INTEGER_TYPES):
            try:
                return int(text)
            except ValueError:  # an integer column rounded or converted: a float now
                return float(text)
        return float(text)
    if kind == "BOOLEAN":
        return text == "true"
    if kind == "DATE":
        return date.fromisoformat(text)
    if kind.startswith("TIMESTAMP"):
        return datetime.fromisoformat(text)
    return text


def number_text(value: float, decimals: int | None) -> str:
    if decimals is None or math.isnan(value) or math.isinf(value):
        return repr(value)
    return f"{round(value, decimals):.{decimals}f}"


def csv_text(columns: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        return header, [list(row) for row in reader]


def draw(seed: int, *parts: object) -> float:
    """A number in [0, 1), a pure function of the seed and ``parts``."""
    text = "\0".join([str(seed), *(str(p) for p in parts)])
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") % _BUCKETS) / _BUCKETS


def pick(options: list[Any], seed: int, *parts: object) -> Any:
    return options[int(draw(seed, *parts) * len(options))]


def slug(value: object) -> str:
    text = "".join(c if c.isalnum() and c.isascii() else "_" for c in str(value).lower())
    readable = "_".join(p for p in text.split("_") if p)
    return readable or "v" + hashlib.blake2b(str(value).encode(), digest_size=4).hexdigest()

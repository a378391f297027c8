"""Splitting an export into files the way real exports are: by period of a date column
(``2024``, ``2024-Q3``, ``2024-07``), by value of a column (a region, a family) or of a lookup
through it, or not at all. Each part is a label and the DuckDB predicate that selects it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from benchforge.core.sql import literal, quote
from benchforge.synthesis.lake.loader import LakeSpecError
from benchforge.synthesis.lake.spec import Split

WHOLE = "all"  # the {part} of an export that is not split

_PERIOD_LABEL = {
    "year": "strftime({c}, '%Y')",
    "quarter": "strftime({c}, '%Y') || '-Q' || CAST(quarter({c}) AS VARCHAR)",
    "month": "strftime({c}, '%Y-%m')",
}


@dataclass(frozen=True)
class Part:
    label: str | None
    predicate: str


def split_parts(
    con: duckdb.DuckDBPyConnection,
    table: str,
    split: Split,
    where: str | None,
    *,
    max_parts: int,
    at: str,
    source: Path | str,
) -> list[Part]:
    """The parts of ``table``'s rows (those ``where`` keeps) by ``split``, in label order;
    more than ``max_parts`` is a spec error at ``at``."""
    if split.by == "none":
        return [Part(label=None, predicate="TRUE")]
    column = f"t.{quote(split.column)}"
    if split.by == "period":
        label_sql = _PERIOD_LABEL[split.every].format(c=column)
        missing = "undated"
    else:
        label_sql = column
        if split.lookup is not None:
            lookup = split.lookup
            label_sql = (
                f"(SELECT min(l.{quote(lookup.value)}) FROM raw.{quote(lookup.table)} AS l "
                f"WHERE l.{quote(lookup.key)} = {column})"
            )
        label_sql = f"CAST({label_sql} AS VARCHAR)"
        missing = "unknown"
    values = [
        v
        for (v,) in con.execute(
            f"SELECT DISTINCT {label_sql} AS v FROM raw.{quote(table)} AS t "
            f"WHERE {where or 'TRUE'} ORDER BY v NULLS LAST"
        ).fetchall()
    ]
    if len(values) > max_parts:
        raise LakeSpecError(
            source,
            [(at, f"{len(values)} parts: more than max_files ({max_parts})")],
        )
    parts: list[Part] = []
    used: set[str] = set()
    for value in values:
        label = missing if value is None else _label(str(value))
        while label in used:
            label += "_"
        used.add(label)
        predicate = f"{label_sql} IS NULL" if value is None else f"{label_sql} = {literal(value)}"
        parts.append(Part(label=label, predicate=predicate))
    return parts


def _label(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_\-]+", "_", value).strip("_") or "blank"


def describe_split(split: Split) -> str:
    if split.by == "none":
        return "none"
    if split.by == "period":
        return f"period:{split.column}:{split.every}"
    via = f"->{split.lookup.table}.{split.lookup.value}" if split.lookup else ""
    return f"value:{split.column}{via}"

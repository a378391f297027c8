"""What every engine's read-only connection offers (:class:`ReadOnlyConnection`), and the
small steps they share: the lexical check first, the answer timed, engine messages told in the
database's logical name (a message never shows the file or database behind it)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from benchforge.core.engines.models import (
    ColumnInfo,
    EngineKind,
    QueryFailed,
    QueryLimits,
    QueryOutcome,
    QueryRefused,
    TableInfo,
)
from benchforge.core.engines.statements import refusal


@runtime_checkable
class ReadOnlyConnection(Protocol):
    """One open database, as ``query_db`` uses it: reads run, every write is refused."""

    kind: EngineKind
    logical_name: str
    limits: QueryLimits

    def query(self, sql: str, max_rows: int | None = None) -> QueryOutcome:
        """Runs one statement that reads; at most ``max_rows`` rows (default
        ``limits.fetch_rows``) are read back, ``truncated`` says whether there were more."""
        ...

    def list_tables(self) -> list[str]: ...

    def describe(self) -> list[TableInfo]: ...

    def close(self) -> None: ...


def precheck_refusal(sql: str, precheck: bool) -> QueryRefused | None:
    """The lexical check (:mod:`.statements`); ``precheck=False`` leaves the engine alone to
    refuse (tests show each engine's own fence holds)."""
    if not precheck:
        return None
    why = refusal(sql)
    return QueryRefused(message=why) if why else None


def timeout_failure(limits: QueryLimits) -> QueryFailed:
    return QueryFailed(
        message=f"the query ran past its time limit of {limits.timeout_s:g} s and was stopped"
    )


def scrub(message: str, hidden: Mapping[str, str]) -> str:
    """``message`` with each hidden physical name replaced by what the agent may see: whole
    names only (a database named ``x`` leaves "execute" alone)."""
    for physical, shown in sorted(hidden.items(), key=lambda kv: -len(kv[0])):
        if physical:
            message = re.sub(rf"(?<!\w){re.escape(physical)}(?!\w)", shown, message)
    return message.strip()


class Stopwatch:
    def __init__(self) -> None:
        self.start = time.perf_counter()

    def seconds(self) -> float:
        return round(time.perf_counter() - self.start, 6)


def tables_from_columns(
    rows: Iterable[tuple[str, str, str, str]], default_schema: str
) -> list[TableInfo]:
    """Tables from ``(schema, table, column, type)`` rows in order; a table outside
    ``default_schema`` is named ``schema.table``."""
    tables: dict[str, TableInfo] = {}
    for schema, table, column, data_type in rows:
        name = table if schema == default_schema else f"{schema}.{table}"
        tables.setdefault(name, TableInfo(name=name, columns=[])).columns.append(
            ColumnInfo(name=column, type=data_type)
        )
    return list(tables.values())

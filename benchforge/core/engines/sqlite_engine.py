"""SQLite, read-only three times over: the file opened ``mode=ro`` (the library refuses any
write to it), ``PRAGMA query_only`` (no write even to a temporary table), and an authorizer
that denies every action but reading, selecting, calling a function and recursing: no
ATTACH (which would create a file), no PRAGMA (which could turn ``query_only`` off), no
transaction, no temporary object. ``sqlite3`` itself runs one statement per call."""

from __future__ import annotations

import sqlite3
import time
import urllib.parse
from pathlib import Path

from benchforge.core.engines.base import (
    Stopwatch,
    precheck_refusal,
    scrub,
    tables_from_columns,
    timeout_failure,
)
from benchforge.core.engines.models import (
    EngineKind,
    QueryFailed,
    QueryLimits,
    QueryOutcome,
    QueryRefused,
    QueryResult,
    TableInfo,
)
from benchforge.core.engines.registry import register_engine
from benchforge.core.engines.statements import allowed_phrase

# The authorizer's action codes by name, for the refusal message.
_ACTION_NAMES = (
    "CREATE_INDEX CREATE_TABLE CREATE_TEMP_INDEX CREATE_TEMP_TABLE CREATE_TEMP_TRIGGER "
    "CREATE_TEMP_VIEW CREATE_TRIGGER CREATE_VIEW DELETE DROP_INDEX DROP_TABLE "
    "DROP_TEMP_INDEX DROP_TEMP_TABLE DROP_TEMP_TRIGGER DROP_TEMP_VIEW DROP_TRIGGER "
    "DROP_VIEW INSERT PRAGMA READ SELECT TRANSACTION UPDATE ATTACH DETACH ALTER_TABLE "
    "REINDEX ANALYZE CREATE_VTABLE DROP_VTABLE FUNCTION SAVEPOINT RECURSIVE"
)
_ACTIONS = {getattr(sqlite3, f"SQLITE_{name}"): name for name in _ACTION_NAMES.split()}
READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_READ, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_REFUSED_MARKERS = (
    "readonly database",
    "query_only",
    "one statement at a time",
    "not authorized",
)
PROGRESS_STEPS = 10_000  # virtual machine steps between two looks at the clock
DEFAULT_SCHEMA = "main"


class SqliteConnection:
    kind: EngineKind = "sqlite"

    def __init__(
        self, path: Path, *, logical_name: str, limits: QueryLimits, precheck: bool = True
    ) -> None:
        self.logical_name = logical_name
        self.limits = limits
        self.precheck = precheck
        uri = "file:" + urllib.parse.quote(str(path)) + "?mode=ro"
        self._con = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        self._con.execute("PRAGMA query_only = ON")
        self._denied: list[str] = []
        self._deadline = float("inf")
        self._con.set_authorizer(self._authorize)
        self._con.set_progress_handler(self._past_deadline, PROGRESS_STEPS)
        self._hidden = {str(path): logical_name, str(path.parent): "<database folder>"}

    def query(self, sql: str, max_rows: int | None = None) -> QueryOutcome:
        refused = precheck_refusal(sql, self.precheck)
        if refused:
            return refused
        limit = max_rows or self.limits.fetch_rows
        self._denied.clear()
        watch = Stopwatch()
        self._deadline = time.monotonic() + self.limits.timeout_s
        try:
            cursor = self._con.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchmany(limit + 1)
        except sqlite3.Error as err:
            return self._classified(err)
        finally:
            self._deadline = float("inf")
        return QueryResult(
            columns=columns,
            rows=[tuple(r) for r in rows[:limit]],
            row_count=min(len(rows), limit),
            truncated=len(rows) > limit,
            elapsed_s=watch.seconds(),
        )

    def list_tables(self) -> list[str]:
        return [t.name for t in self.describe()]

    def describe(self) -> list[TableInfo]:
        self._con.set_authorizer(None)  # our own catalogue reads, fixed text
        try:
            rows = self._con.execute(
                "SELECT m.name, c.name, c.type FROM sqlite_schema AS m, "
                "pragma_table_info(m.name) AS c "
                "WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                "ORDER BY m.name, c.cid"
            ).fetchall()
        finally:
            self._con.set_authorizer(self._authorize)
        return tables_from_columns(
            ((DEFAULT_SCHEMA, table, column, kind) for table, column, kind in rows),
            DEFAULT_SCHEMA,
        )

    def close(self) -> None:
        self._con.close()

    def _authorize(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None
    ) -> int:
        if action in READ_ACTIONS:
            return sqlite3.SQLITE_OK
        self._denied.append(_ACTIONS.get(action, str(action)))
        return sqlite3.SQLITE_DENY

    def _past_deadline(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def _classified(self, err: sqlite3.Error) -> QueryOutcome:
        message = scrub(str(err), self._hidden)
        if message == "interrupted":
            return timeout_failure(self.limits)
        if self._denied:
            return QueryRefused(
                message=f"query_db is read-only: {self._denied[0]} is refused ({message}). "
                + allowed_phrase()
            )
        if any(marker in message for marker in _REFUSED_MARKERS):
            return QueryRefused(message=f"query_db is read-only: {message}")
        return QueryFailed(message=message)


@register_engine("sqlite")
def open_sqlite(
    target: str, *, logical_name: str, limits: QueryLimits, precheck: bool = True
) -> SqliteConnection:
    return SqliteConnection(
        Path(target), logical_name=logical_name, limits=limits, precheck=precheck
    )

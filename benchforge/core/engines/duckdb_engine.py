"""DuckDB, read-only: the file opened with ``read_only=True``, host files out of reach
(``enable_external_access=false``: no ATTACH, COPY, read_csv or extension of the host) and the
configuration locked so the query cannot undo either. DuckDB's own parser then admits one
SELECT or EXPLAIN statement: a temporary table, a PRAGMA or a CHECKPOINT would run on a
read-only file, so the statement type is checked, not only the file's mode."""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb

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

READ_STATEMENTS = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})
LOCKED_CONFIG = {"enable_external_access": False, "lock_configuration": True}
_REFUSED_MARKERS = ("read-only mode", "configuration has been locked")
DEFAULT_SCHEMA = "main"


class DuckDbConnection:
    kind: EngineKind = "duckdb"

    def __init__(
        self, path: Path, *, logical_name: str, limits: QueryLimits, precheck: bool = True
    ) -> None:
        self.logical_name = logical_name
        self.limits = limits
        self.precheck = precheck
        self._con = duckdb.connect(str(path), read_only=True, config=dict(LOCKED_CONFIG))
        # DuckDB names the database after the file: messages say the logical name instead.
        self._hidden = {
            str(path): logical_name,
            str(path.parent): "<database folder>",
            f'"{path.stem}"': f'"{logical_name}"',
        }

    def query(self, sql: str, max_rows: int | None = None) -> QueryOutcome:
        refused = precheck_refusal(sql, self.precheck)
        if refused:
            return refused
        limit = max_rows or self.limits.fetch_rows
        try:
            statements = self._con.extract_statements(sql)
        except duckdb.Error as err:
            return QueryFailed(message=self._message(err))
        if len(statements) != 1:
            return QueryRefused(
                message=f"query_db runs one statement per call and this query has "
                f"{len(statements)}: send them one at a time"
            )
        statement = statements[0]
        if statement.type not in READ_STATEMENTS:
            return QueryRefused(
                message=f"query_db is read-only: {statement.type.name} statements are refused. "
                + allowed_phrase()
            )
        watch = Stopwatch()
        timer = threading.Timer(self.limits.timeout_s, self._con.interrupt)
        timer.start()
        try:
            cursor = self._con.execute(statement)
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchmany(limit + 1)
        except duckdb.InterruptException:
            return timeout_failure(self.limits)
        except duckdb.Error as err:
            return self._classified(err)
        finally:
            timer.cancel()
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
        rows = self._con.execute(
            "SELECT table_schema, table_name, column_name, data_type "
            "FROM information_schema.columns "
            "WHERE table_catalog = current_database() "
            "ORDER BY table_schema, table_name, ordinal_position"
        ).fetchall()
        return tables_from_columns(rows, DEFAULT_SCHEMA)

    def close(self) -> None:
        self._con.close()

    def _classified(self, err: duckdb.Error) -> QueryOutcome:
        message = self._message(err)
        if isinstance(err, duckdb.PermissionException) or any(
            marker in message for marker in _REFUSED_MARKERS
        ):
            return QueryRefused(message=f"query_db is read-only: {message}")
        return QueryFailed(message=message)

    def _message(self, err: Exception) -> str:
        return scrub(str(err), self._hidden)


@register_engine("duckdb")
def open_duckdb(
    target: str, *, logical_name: str, limits: QueryLimits, precheck: bool = True
) -> DuckDbConnection:
    return DuckDbConnection(
        Path(target), logical_name=logical_name, limits=limits, precheck=precheck
    )

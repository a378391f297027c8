"""PostgreSQL, read-only: connected as a role with no write grant (only CONNECT, USAGE and
SELECT: :mod:`.postgres_trials` makes it), the session's transactions READ ONLY, and each query
in its own ``BEGIN READ ONLY`` transaction under a ``statement_timeout``, rolled back after. A
query that turns its transaction read-write (``SET TRANSACTION READ WRITE`` is allowed before
the first read) still writes nothing: the role may not. The query goes through the extended
protocol (psycopg's ``stream``), which the server itself refuses for more than one statement."""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from itertools import islice
from typing import Any, cast

import psycopg
from psycopg import errors as pg_errors
from psycopg.pq import TransactionStatus

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

CONNECT_TIMEOUT_S = 10
DEFAULT_SCHEMA = "public"
_REFUSING = (pg_errors.ReadOnlySqlTransaction, pg_errors.InsufficientPrivilege)
_REFUSED_MARKERS = ("multiple commands", "COPY", "read-only")


class PostgresConnection:
    kind: EngineKind = "postgres"

    def __init__(
        self, conninfo: str, *, logical_name: str, limits: QueryLimits, precheck: bool = True
    ) -> None:
        self.logical_name = logical_name
        self.limits = limits
        self.precheck = precheck
        self._conninfo = conninfo
        database = psycopg.conninfo.conninfo_to_dict(conninfo).get("dbname")
        self._hidden = {str(database): logical_name} if database else {}
        self._con = self._connect()

    def _connect(self) -> psycopg.Connection[Any]:
        con = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        con.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        return con

    def query(self, sql: str, max_rows: int | None = None) -> QueryOutcome:
        refused = precheck_refusal(sql, self.precheck)
        if refused:
            return refused
        limit = max_rows or self.limits.fetch_rows
        if self._con.closed:
            self._con = self._connect()
        watch = Stopwatch()
        try:
            self._con.execute("BEGIN READ ONLY")
            timeout_ms = max(1, int(self.limits.timeout_s * 1000))
            self._con.execute(f"SET LOCAL statement_timeout = {timeout_ms}")
            cursor = self._con.cursor()
            stream = cast(Generator[Any, None, None], cursor.stream(sql))
            with contextlib.closing(stream):  # cancels what the server has left to send
                rows = list(islice(stream, limit + 1))
            columns = [d.name for d in cursor.description or []]
        except pg_errors.QueryCanceled:
            return timeout_failure(self.limits)
        except psycopg.Error as err:
            return self._classified(err)
        finally:
            self._end_transaction()
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
        with self._con.transaction():
            rows = self._con.execute(
                "SELECT table_schema, table_name, column_name, data_type "
                "FROM information_schema.columns "
                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
                "ORDER BY table_schema, table_name, ordinal_position"
            ).fetchall()
        return tables_from_columns(rows, DEFAULT_SCHEMA)

    def close(self) -> None:
        self._con.close()

    def _end_transaction(self) -> None:
        if self._con.closed:
            return
        if self._con.info.transaction_status != TransactionStatus.IDLE:
            with contextlib.suppress(psycopg.Error):
                self._con.execute("ROLLBACK")

    def _classified(self, err: psycopg.Error) -> QueryOutcome:
        primary = err.diag.message_primary if err.diag else None
        message = scrub(primary or str(err), self._hidden)
        if "didn't produce a result" in message:  # psycopg's stream() on a command
            return QueryFailed(message="the statement returned no rows: " + allowed_phrase())
        if isinstance(err, _REFUSING) or any(m in message for m in _REFUSED_MARKERS):
            return QueryRefused(message=f"query_db is read-only: {message}. " + allowed_phrase())
        return QueryFailed(message=message)


@register_engine("postgres")
def open_postgres(
    target: str, *, logical_name: str, limits: QueryLimits, precheck: bool = True
) -> PostgresConnection:
    return PostgresConnection(target, logical_name=logical_name, limits=limits, precheck=precheck)

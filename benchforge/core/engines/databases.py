"""One trial's databases by logical name: what ``list_db`` and ``query_db`` call. Each database
opens read-only on first use; the agent names databases only by their logical names, and an
unknown name is answered with the known ones."""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType

from benchforge.core.engines.base import ReadOnlyConnection
from benchforge.core.engines.models import (
    DbConfig,
    PostgresEntry,
    QueryFailed,
    QueryLimits,
    QueryOutcome,
    TableInfo,
)
from benchforge.core.engines.registry import open_readonly
from benchforge.core.errors import ConfigError


class TrialDatabases:
    """``config``'s databases for one trial. ``postgres``: logical name -> the read-only
    conninfo of the trial's own copy (:func:`.postgres_trials.trial_postgres`)."""

    def __init__(
        self,
        config: DbConfig,
        *,
        postgres: Mapping[str, str] | None = None,
        limits: QueryLimits | None = None,
        precheck: bool = True,
    ) -> None:
        self.config = config
        self.limits = limits or QueryLimits()
        self._postgres = dict(postgres or {})
        self._precheck = precheck
        self._open: dict[str, ReadOnlyConnection] = {}
        wanting = [
            name
            for name, entry in config.databases.items()
            if isinstance(entry, PostgresEntry) and name not in self._postgres
        ]
        if wanting:
            raise ConfigError(
                f"no trial database given for the PostgreSQL database(s) {', '.join(wanting)}"
            )

    def names(self) -> list[str]:
        return list(self.config.databases)

    def connection(self, name: str) -> ReadOnlyConnection:
        if name not in self._open:
            entry = self.config.databases[name]
            target = self._postgres[name] if isinstance(entry, PostgresEntry) else str(entry.path)
            self._open[name] = open_readonly(
                entry.engine,
                target,
                logical_name=name,
                limits=self.limits,
                precheck=self._precheck,
            )
        return self._open[name]

    def query_db(self, name: str, sql: str, max_rows: int | None = None) -> QueryOutcome:
        if name not in self.config.databases:
            return QueryFailed(message=self._unknown(name))
        return self.connection(name).query(sql, max_rows)

    def list_tables(self, name: str) -> list[str]:
        return self.connection(name).list_tables()

    def describe(self, name: str) -> list[TableInfo]:
        return self.connection(name).describe()

    def close(self) -> None:
        for connection in self._open.values():
            connection.close()
        self._open.clear()

    def __enter__(self) -> TrialDatabases:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _unknown(self, name: str) -> str:
        return f"no database named {name!r}: the databases are {', '.join(self.names())}"

"""What the engine access layer reads and answers: a dataset's databases by logical name
(:class:`DbConfig`, ``db_config.yaml``), the limits a query runs under, and the outcome of one
query as the agent is told it (:class:`QueryResult`, :class:`QueryRefused`,
:class:`QueryFailed`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

EngineKind = Literal["duckdb", "sqlite", "postgres"]

LOGICAL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(
        default="", description="What the database holds, in words the agent may read."
    )


class DuckDbEntry(_Entry):
    engine: Literal["duckdb"]
    path: Path = Field(description="The .duckdb file, relative to db_config.yaml's folder.")


class SqliteEntry(_Entry):
    engine: Literal["sqlite"]
    path: Path = Field(description="The SQLite file, relative to db_config.yaml's folder.")


class PostgresEntry(_Entry):
    engine: Literal["postgres"]
    template: str = Field(
        description="The database on the trial's PostgreSQL server that each trial's own "
        "database is copied from (CREATE DATABASE ... TEMPLATE).",
        min_length=1,
        max_length=63,
    )


DatabaseEntry = Annotated[DuckDbEntry | SqliteEntry | PostgresEntry, Field(discriminator="engine")]


class DbConfig(BaseModel):
    """A dataset's databases: logical name -> engine and physical location. The agent sees the
    logical names (and descriptions), never the locations."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    databases: dict[str, DatabaseEntry] = Field(min_length=1)

    @field_validator("databases")
    @classmethod
    def _logical_names(cls, value: dict[str, Any]) -> dict[str, Any]:
        bad = [name for name in value if not LOGICAL_NAME.match(name)]
        if bad:
            raise ValueError(
                f"database names must be letters, digits and '_' (starting with a letter, at "
                f"most 63): {', '.join(repr(b) for b in bad)}"
            )
        return value

    def resolved(self, folder: Path) -> DbConfig:
        """The same config with relative file paths made absolute against ``folder``."""
        databases: dict[str, Any] = {}
        for name, entry in self.databases.items():
            if isinstance(entry, DuckDbEntry | SqliteEntry) and not entry.path.is_absolute():
                entry = entry.model_copy(update={"path": (folder / entry.path).resolve()})
            databases[name] = entry
        return DbConfig(databases=databases)


class QueryLimits(BaseModel):
    """How far one query may go. ``fetch_rows`` bounds what is read back from the engine (and
    so what a truncated result's file can hold); what the agent sees in its context is bounded
    separately (:func:`benchforge.core.engines.truncation.present`)."""

    model_config = ConfigDict(frozen=True)

    fetch_rows: int = Field(default=100_000, ge=1)
    timeout_s: float = Field(default=60.0, gt=0)


class ColumnInfo(BaseModel):
    name: str
    type: str


class TableInfo(BaseModel):
    name: str = Field(description="Schema-qualified where the schema is not the default one.")
    columns: list[ColumnInfo]


class QueryResult(BaseModel):
    """A read that ran. ``truncated``: the engine had more than ``row_count`` rows (the fetch
    limit stopped reading)."""

    kind: Literal["result"] = "result"
    columns: list[str]
    rows: list[tuple[Any, ...]]
    row_count: int
    truncated: bool = False
    elapsed_s: float


class QueryRefused(BaseModel):
    """A statement refused because it could write (or is more than one statement). The message
    is meant for the agent."""

    kind: Literal["refused"] = "refused"
    message: str


class QueryFailed(BaseModel):
    """A read that did not run (syntax error, unknown table, timeout). The message is meant for
    the agent."""

    kind: Literal["failed"] = "failed"
    message: str


QueryOutcome = Annotated[QueryResult | QueryRefused | QueryFailed, Field(discriminator="kind")]

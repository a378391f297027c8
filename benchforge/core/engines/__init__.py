"""Read-only access to a dataset's databases (DuckDB, SQLite, PostgreSQL) for agent tools
such as ``query_db``: the config by logical name (:mod:`.models`, :mod:`.config`), one module
per engine behind :class:`ReadOnlyConnection` and a registry (:mod:`.registry`), the lexical
check every engine makes first (:mod:`.statements`), one PostgreSQL database per trial
(:mod:`.postgres_trials`), a trial's databases by name (:mod:`.databases`) and what the agent
sees of a large result (:mod:`.truncation`). Plain Python: no Prefect."""

from benchforge.core.engines.base import ReadOnlyConnection
from benchforge.core.engines.config import DB_CONFIG_FILE, DbConfigError, load_db_config
from benchforge.core.engines.databases import TrialDatabases
from benchforge.core.engines.models import (
    DbConfig,
    EngineKind,
    QueryFailed,
    QueryLimits,
    QueryOutcome,
    QueryRefused,
    QueryResult,
    TableInfo,
)
from benchforge.core.engines.registry import open_readonly, register_engine
from benchforge.core.engines.truncation import AgentView, present

__all__ = [
    "DB_CONFIG_FILE",
    "AgentView",
    "DbConfig",
    "DbConfigError",
    "EngineKind",
    "QueryFailed",
    "QueryLimits",
    "QueryOutcome",
    "QueryRefused",
    "QueryResult",
    "ReadOnlyConnection",
    "TableInfo",
    "TrialDatabases",
    "load_db_config",
    "open_readonly",
    "present",
    "register_engine",
]

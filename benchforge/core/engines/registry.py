"""Engines by kind: each engine module registers how it opens a read-only connection
(:func:`register_engine`); :func:`open_readonly` finds it. The shipped engines are imported on
the first lookup, so a caller that only reads DuckDB never imports psycopg."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Protocol

from benchforge.core.engines.base import ReadOnlyConnection
from benchforge.core.engines.models import EngineKind, QueryLimits
from benchforge.core.errors import ConfigError

_SHIPPED = {
    "duckdb": "benchforge.core.engines.duckdb_engine",
    "sqlite": "benchforge.core.engines.sqlite_engine",
    "postgres": "benchforge.core.engines.postgres_engine",
}


class EngineOpener(Protocol):
    def __call__(
        self, target: str, *, logical_name: str, limits: QueryLimits, precheck: bool = True
    ) -> ReadOnlyConnection: ...


_OPENERS: dict[str, EngineOpener] = {}


def register_engine(kind: EngineKind) -> Callable[[EngineOpener], EngineOpener]:
    def register(opener: EngineOpener) -> EngineOpener:
        _OPENERS[kind] = opener
        return opener

    return register


def engine_opener(kind: EngineKind) -> EngineOpener:
    if kind not in _OPENERS and kind in _SHIPPED:
        importlib.import_module(_SHIPPED[kind])
    try:
        return _OPENERS[kind]
    except KeyError:
        raise ConfigError(
            f"no engine '{kind}': one of {', '.join(sorted(set(_SHIPPED) | set(_OPENERS)))}"
        ) from None


def open_readonly(
    kind: EngineKind,
    target: str,
    *,
    logical_name: str,
    limits: QueryLimits | None = None,
    precheck: bool = True,
) -> ReadOnlyConnection:
    """A read-only connection to ``target`` (a file path, or a PostgreSQL conninfo of the
    read-only role), known to the agent as ``logical_name``."""
    return engine_opener(kind)(
        target, logical_name=logical_name, limits=limits or QueryLimits(), precheck=precheck
    )

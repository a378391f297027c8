"""Toolsets by name. A task family names the toolset its agents act through
(``TaskFamily.toolset`` in :mod:`benchforge.evaluation.families`, a layer below: it names
tools, it cannot import them); the runner hands a trial the tools of that toolset.

Each module of this package registers its toolset when imported (``de``: bash, create_file,
edit_file, run_dbt, terminate); they are imported on the first lookup, so a new toolset is one
new module.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Sequence

from benchforge.core.errors import ConfigError

_lock = threading.RLock()
_toolsets: dict[str, tuple[str, ...]] = {}
_builtins_loaded = False


def register_toolset(name: str, tools: Sequence[str]) -> None:
    with _lock:
        known = _toolsets.get(name)
        if known is not None and known != tuple(tools):
            raise ValueError(f"a toolset named {name!r} is already registered: {known}")
        _toolsets[name] = tuple(tools)


def unregister_toolset(name: str) -> None:
    with _lock:
        _toolsets.pop(name, None)


def _load_builtins() -> None:
    global _builtins_loaded
    with _lock:
        if _builtins_loaded:
            return
        _builtins_loaded = True
        package = importlib.import_module("benchforge.agents.tools")
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if info.name != "toolsets" and not info.name.startswith("_"):
                importlib.import_module(f"{package.__name__}.{info.name}")


def toolset(name: str) -> tuple[str, ...]:
    """The tool names of toolset ``name``."""
    _load_builtins()
    with _lock:
        if name not in _toolsets:
            raise ConfigError(
                f"unknown toolset {name!r} (known: {', '.join(sorted(_toolsets)) or 'none'})"
            )
        return _toolsets[name]

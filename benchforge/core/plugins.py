"""Plugins: modules outside Benchforge that register task families, toolsets or agents.

A plugin is an importable module whose import registers what it adds (``register(...)``,
``register_toolset(...)``, ``register_agent(...)``). Benchforge imports, once per process:

- the modules named in ``BENCHFORGE_PLUGINS`` (comma-separated module names), and
- every entry point of the group ``benchforge.plugins`` of the installed distributions
  (``[project.entry-points."benchforge.plugins"] my_family = "my_package.family"``).

The registries (families, toolsets, agents) load plugins on their first lookup, so a plugin
is known wherever a lookup happens: the CLI, a flow run by a Prefect worker, a Dask worker
(the environment variable travels with the process; entry points with the installation).
A plugin that fails to import is a clear error naming it, never a silently missing family.
"""

from __future__ import annotations

import importlib
import os
import threading
from importlib.metadata import entry_points

from benchforge.core.errors import ConfigError

PLUGINS_ENV = "BENCHFORGE_PLUGINS"
ENTRY_POINT_GROUP = "benchforge.plugins"

_lock = threading.RLock()
_loaded: dict[str, str] = {}  # module name -> where it was named
_loading = False


_entry_points: list[tuple[str, str]] | None = None


def plugin_modules() -> list[tuple[str, str]]:
    """(module, where it is named) for every plugin this process would load."""
    global _entry_points
    if _entry_points is None:  # the installation does not change while a process runs
        _entry_points = [
            (point.value.partition(":")[0], f"entry point {point.name!r}")
            for point in entry_points(group=ENTRY_POINT_GROUP)
        ]
    named = [
        (name.strip(), PLUGINS_ENV)
        for name in os.environ.get(PLUGINS_ENV, "").split(",")
        if name.strip()
    ]
    return [*named, *_entry_points]


def load_plugins() -> list[str]:
    """Imports every plugin not imported yet; returns the names of all loaded plugins.
    Raises ConfigError naming a plugin that cannot be imported."""
    global _loading
    with _lock:
        if _loading:  # a plugin's own registrations look plugins up: they are being loaded
            return list(_loaded)
        _loading = True
        try:
            for module, where in plugin_modules():
                if module in _loaded:
                    continue
                try:
                    importlib.import_module(module)
                except Exception as err:
                    raise ConfigError(
                        f"plugin {module!r} (named by {where}) cannot be imported: "
                        f"{type(err).__name__}: {err}"
                    ) from err
                _loaded[module] = where
        finally:
            _loading = False
        return list(_loaded)

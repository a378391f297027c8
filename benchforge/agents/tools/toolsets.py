"""Toolsets by name. A task family names the toolset its agents act through
(``TaskFamily.toolset`` in :mod:`benchforge.evaluation.families`, a layer below: it names
tools, it cannot import them); the runner hands each trial that toolset
(``TaskEnvironment.tools``) and a tool-calling agent acts through whatever it is given.

Each module of this package registers its toolset when imported (``de``: bash, create_file,
edit_file, run_dbt, terminate; ``da``: sql, python, write_file, read_file, finish; ``dab``:
list_db, read_doc, query_db, execute_python, return_answer); they are
imported on the first lookup, so a new toolset is one new module (or one ``register_toolset``
call, as a test does)::

    register_toolset(Toolset("lake", (list_files, query_lake, answer), instructions=...))
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchforge.agents.tools.tool import Tool, ToolOutcome
from benchforge.core.errors import ConfigError
from benchforge.core.plugins import load_plugins

if TYPE_CHECKING:
    from benchforge.agents.protocol import TaskEnvironment


@dataclass(frozen=True)
class Toolset:
    """Named tools, in the order the model is shown them. ``instructions``: what an agent
    acting through them is told when its config says nothing else (the ``react`` agent's
    system prompt); it names the tools and how the task is finished."""

    name: str
    tools: tuple[Tool, ...]
    instructions: str = ""

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError(f"toolset {self.name!r} names a tool twice: {names}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    def get(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def schemas(self) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` list of a model request."""
        return [t.schema() for t in self.tools]

    async def call(self, env: TaskEnvironment, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        found = self.get(name)
        if found is None:
            return ToolOutcome(output=f"error: unknown tool {name!r}", ok=False)
        return await found.call(env, arguments)

    def fingerprint(self) -> str:
        """The tools as the model sees them, as canonical JSON (equal for equal toolsets)."""
        return json.dumps([self.instructions, self.schemas()], sort_keys=True)


_lock = threading.RLock()
_toolsets: dict[str, Toolset] = {}
_builtins_loaded = False
_builtins_done = False


def register_toolset(toolset: Toolset) -> Toolset:
    """Registers ``toolset`` under its name; the same one again (a re-import) is a no-op."""
    with _lock:
        known = _toolsets.get(toolset.name)
        if known is not None and known.fingerprint() != toolset.fingerprint():
            raise ValueError(
                f"a toolset named {toolset.name!r} is already registered: {known.names}"
            )
        _toolsets[toolset.name] = toolset
        return toolset


def unregister_toolset(name: str) -> None:
    with _lock:
        _toolsets.pop(name, None)


def _load_builtins() -> None:
    """The shipped toolset modules, then the plugins (``benchforge.core.plugins``)."""
    global _builtins_loaded, _builtins_done
    with _lock:
        if not _builtins_loaded:
            _builtins_loaded = True
            package = importlib.import_module("benchforge.agents.tools")
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
                if info.name not in ("toolsets", "tool") and not info.name.startswith("_"):
                    importlib.import_module(f"{package.__name__}.{info.name}")
            _builtins_done = True
    if _builtins_done:  # not while a shipped module registers: plugins come after them all
        load_plugins()


def toolset(name: str) -> Toolset:
    """The toolset registered as ``name``."""
    _load_builtins()
    with _lock:
        if name not in _toolsets:
            raise ConfigError(
                f"unknown toolset {name!r} (known: {', '.join(sorted(_toolsets)) or 'none'})"
            )
        return _toolsets[name]


def toolset_names() -> list[str]:
    _load_builtins()
    with _lock:
        return sorted(_toolsets)


def subset(of: Toolset, names: Sequence[str], name: str | None = None) -> Toolset:
    """A toolset of some of ``of``'s tools (in ``of``'s order), e.g. a family that offers the
    DE tools without dbt."""
    unknown = set(names) - set(of.names)
    if unknown:
        raise ValueError(f"toolset {of.name!r} has no tool {sorted(unknown)}")
    tools = tuple(t for t in of.tools if t.name in names)
    return Toolset(name or of.name, tools, of.instructions)

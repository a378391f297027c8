"""Registering an agent under the name the CLI and the flows use (``benchforge.agents.registry``
builds them and lists them).

A shipped agent registers itself in its own module under ``agents/builtin/``; every module there
is imported by ``benchforge.agents.builtin``, so a new agent touches only its module:

    @register_agent("my-agent", config=MyConfig, order=30)
    class MyAgent:
        def __init__(self, config: MyConfig | None = None) -> None: ...

A registered class is built as ``cls(config)`` when it has a config model (``config`` is None
when the spelling names no file: the agent's defaults) and as ``cls()`` otherwise. An agent that
needs what the run provides (the oracle's solutions) registers a factory function instead,
called as ``factory(config, resources)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from benchforge.agents.protocol import Agent
from benchforge.core.plugins import load_plugins
from benchforge.core.records import TrialKey

SolutionProvider = Callable[[TrialKey], Path | None]
"""The folder to copy over the trial's submission folder (``TaskEnvironment.submission``:
``workspace/repo`` for the DE families), or None: no reference solution."""

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
T = TypeVar("T")


def _no_solutions(_key: TrialKey) -> None:
    return None


@dataclass(frozen=True)
class AgentResources:
    """What the run hands an agent factory besides its config."""

    solutions: SolutionProvider = _no_solutions


AgentFactory = Callable[[Any, AgentResources], Agent]


@dataclass(frozen=True)
class AgentEntry:
    """One registered agent. ``config``: the model of its config file (None: it takes none);
    ``config_required``: it cannot run on defaults (``command=AGENT.yaml``); ``order``: where
    listings put it (then by name)."""

    name: str
    factory: AgentFactory
    config: type[BaseModel] | None
    config_required: bool
    order: int
    source: str  # module.qualname of what was decorated
    mock_model: str | None = None  # the mock server's model it runs on offline by default

    @property
    def spellings(self) -> list[str]:
        """How the CLI may name it: ``NAME`` and / or ``NAME=CONFIG.yaml``."""
        if self.config is None:
            return [self.name]
        with_file = f"{self.name}={'AGENT' if self.config_required else 'CONFIG'}.yaml"
        return [with_file] if self.config_required else [self.name, with_file]


_AGENTS: dict[str, AgentEntry] = {}


def register_agent(
    name: str,
    *,
    config: type[BaseModel] | None = None,
    config_required: bool = False,
    order: int = 100,
    mock_model: str | None = None,
) -> Callable[[T], T]:
    """Registers the decorated agent class (or factory function) under ``name``.
    ``mock_model``: for an agent that calls a model, the mock server's model (a script) it
    runs on when a run names no model and no API key is configured."""
    if not NAME.match(name):
        raise ValueError(f"agent name {name!r}: lower-case letters, digits, '_', '.', '-'")
    if config_required and config is None:
        raise ValueError(f"agent {name!r}: config_required needs a config model")

    def decorate(target: T) -> T:
        source = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', '?')}"
        known = _AGENTS.get(name)
        if known is not None and known.source != source:  # the same one again: a re-import
            raise ValueError(f"agent {name!r} is registered twice: {known.source}, {source}")
        factory: AgentFactory
        if isinstance(target, type):
            factory = _class_factory(target, with_config=config is not None)
        elif callable(target):
            factory = target
        else:
            raise TypeError(f"register_agent({name!r}): not a class or a function: {target!r}")
        _AGENTS[name] = AgentEntry(
            name, factory, config, config_required, order, source, mock_model
        )
        return target

    return decorate


def _class_factory(cls: Any, *, with_config: bool) -> AgentFactory:
    def build(config: BaseModel | None, _resources: AgentResources) -> Agent:
        agent: Agent = cls(config) if with_config else cls()
        return agent

    return build


def registered_agents() -> list[AgentEntry]:
    """Every registered agent, in listing order (plugins' agents included)."""
    load_plugins()
    return sorted(_AGENTS.values(), key=lambda entry: (entry.order, entry.name))


def agent_entry(name: str) -> AgentEntry | None:
    load_plugins()
    return _AGENTS.get(name)

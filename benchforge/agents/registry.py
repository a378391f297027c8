"""Agents by name, as the CLI and the flows name them.

oracle | null | react-de | single-call          shipped agents, default configs
react-de=path/to/config.yaml                    a shipped agent with its config from a file
command=path/to/agent.yaml                      an external CLI agent (CommandAgentConfig)

The names are those registered with ``register_agent`` (``benchforge.agents.registration``);
importing this module imports the shipped agents (``benchforge.agents.builtin``).
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, Field, ValidationError

import benchforge.agents.builtin  # noqa: F401  (registers the shipped agents)
from benchforge.agents.protocol import Agent
from benchforge.agents.registration import (
    AgentResources,
    SolutionProvider,
    agent_entry,
    register_agent,
    registered_agents,
)
from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml

__all__ = [
    "AgentSpelling",
    "agent_names",
    "agent_spellings",
    "build_agent",
    "default_models",
    "register_agent",
    "registered_agents",
]

C = TypeVar("C", bound=BaseModel)


def agent_names() -> list[str]:
    """Every registered agent's name, in listing order."""
    return [entry.name for entry in registered_agents()]


def agent_spellings() -> list[str]:
    """How the CLI may name the registered agents: plain names first, then with a file."""
    spellings = [s for entry in registered_agents() for s in entry.spellings]
    return [s for s in spellings if "=" not in s] + [s for s in spellings if "=" in s]


def _spelling_type() -> Any:
    entries = registered_agents()
    plain = tuple(entry.name for entry in entries if not entry.config_required)
    # names are [a-z0-9_.-]: only the dot needs escaping (the pattern reads as written)
    with_file = "|".join(e.name.replace(".", r"\.") for e in entries if e.config is not None)
    return (
        Literal[plain]
        | Annotated[
            str,
            Field(
                pattern=rf"^({with_file})=\S.*$",
                description="an agent with its config file: react-de=..., command=agent.yaml",
            ),
        ]
    )


if TYPE_CHECKING:
    AgentSpelling: TypeAlias = str
else:
    AgentSpelling = _spelling_type()
"""How flows type an agent parameter: the registered names as choices (a JSON schema enum), or
NAME=CONFIG for an agent with a config model. Made when this module is first imported, from the
agents registered by then (the shipped ones)."""


def _load_config(path: Path, model: type[C]) -> C:
    try:
        data = read_yaml(path.read_text())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read agent config: {exc}") from None
    try:
        return model.model_validate(data or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise ConfigError(f"{path}: {where}: {first['msg']}") from None


def _no_solutions(_key: object) -> None:
    return None


def build_agent(spec: str, solutions: SolutionProvider = _no_solutions) -> Agent:
    """An agent from its CLI spelling (see the module docstring)."""
    name, _, config_path = spec.partition("=")
    entry = agent_entry(name)
    if entry is None:
        close = difflib.get_close_matches(name, agent_names(), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown agent {spec!r}{hint} (known: {', '.join(agent_spellings())})")
    config: BaseModel | None = None
    if config_path:
        if entry.config is None:
            raise ConfigError(f"agent {name!r} takes no config file (given {config_path!r})")
        config = _load_config(Path(config_path), entry.config)
    elif entry.config_required:
        raise ConfigError(f"agent {name!r} needs a config file: {name}=path/to/agent.yaml")
    return entry.factory(config, AgentResources(solutions=solutions))


DEFAULT_REAL_MODEL = "gpt-4.1-mini"


def own_mock_models(spellings: list[str]) -> dict[str, list[str]]:
    """Each agent's own mock script (``register_agent(mock_model=...)``), for a run that names
    no model and has no API key: react-de runs its DE script and react-da its DA script, not
    each the other's too. Agents without one are left out (they run the run's models)."""
    pairing = {}
    for spelling in spellings:
        entry = agent_entry(spelling.partition("=")[0])
        if entry is not None and entry.mock_model:
            pairing[spelling] = [entry.mock_model]
    return pairing


def default_models(spellings: list[str], has_api_key: bool) -> list[str]:
    """The models a run uses when it names none: with an API key a real default model, else
    each model-calling agent's own mock script (``register_agent(mock_model=...)``), so
    ``benchforge run --suite da-crm --agent react-da`` runs offline as it stands."""
    if has_api_key:
        return [DEFAULT_REAL_MODEL]
    models = []
    for spelling in spellings:
        entry = agent_entry(spelling.partition("=")[0])
        if entry is not None and entry.mock_model and entry.mock_model not in models:
            models.append(entry.mock_model)
    return models

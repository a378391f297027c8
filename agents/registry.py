"""Agents by name, as the CLI and the flows name them.

oracle | null | react-de | single-call          shipped agents, default configs
react-de=path/to/config.yaml                    a shipped agent with its config from a file
command=path/to/agent.yaml                      an external CLI agent (CommandAgentConfig)
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError

from benchforge.agents.builtin.command import CommandAgent, CommandAgentConfig
from benchforge.agents.builtin.null import NullAgent
from benchforge.agents.builtin.oracle import OracleAgent, SolutionProvider
from benchforge.agents.builtin.react_de import ReactDeAgent, ReactDeConfig
from benchforge.agents.builtin.single_call import SingleCallAgent, SingleCallConfig
from benchforge.agents.protocol import Agent
from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml

C = TypeVar("C", bound=BaseModel)
SHIPPED = ("oracle", "null", "react-de", "single-call", "command")

ShippedAgent = Literal["oracle", "null", "react-de", "single-call"]
AgentSpelling = (
    ShippedAgent
    | Annotated[
        str,
        Field(
            pattern=r"^(react-de|single-call|command)=\S.*$",
            description="an agent with its config file: react-de=..., command=agent.yaml",
        ),
    ]
)
"""How flows type an agent parameter: the shipped names as choices, or NAME=CONFIG."""


def _no_solutions(_key: object) -> None:
    return None


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


def build_agent(spec: str, solutions: SolutionProvider = _no_solutions) -> Agent:
    """An agent from its CLI spelling (see the module docstring)."""
    name, _, config_path = spec.partition("=")
    path = Path(config_path) if config_path else None
    if name == "oracle":
        return OracleAgent(solutions)
    if name == "null":
        return NullAgent()
    if name == "react-de":
        return ReactDeAgent(_load_config(path, ReactDeConfig) if path else None)
    if name == "single-call":
        return SingleCallAgent(_load_config(path, SingleCallConfig) if path else None)
    if name == "command":
        if path is None:
            raise ConfigError("agent 'command' needs a config file: command=path/to/agent.yaml")
        return CommandAgent(_load_config(path, CommandAgentConfig))
    close = difflib.get_close_matches(name, SHIPPED, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(
        f"unknown agent {spec!r}{hint} (known: oracle, null, react-de, single-call, "
        "react-de=CONFIG.yaml, single-call=CONFIG.yaml, command=AGENT.yaml)"
    )

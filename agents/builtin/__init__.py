"""The agents Benchforge ships: oracle, null, react-de, command, single-call."""

from agents.builtin.command import CommandAgent, CommandAgentConfig
from agents.builtin.null import NullAgent
from agents.builtin.oracle import OracleAgent
from agents.builtin.react_de import ReactDeAgent, ReactDeConfig
from agents.builtin.single_call import SingleCallAgent

__all__ = [
    "CommandAgent",
    "CommandAgentConfig",
    "NullAgent",
    "OracleAgent",
    "ReactDeAgent",
    "ReactDeConfig",
    "SingleCallAgent",
]

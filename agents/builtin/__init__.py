"""The agents Benchforge ships: oracle, null, react-de, command, single-call."""

from benchforge.agents.builtin.command import CommandAgent, CommandAgentConfig
from benchforge.agents.builtin.null import NullAgent
from benchforge.agents.builtin.oracle import OracleAgent
from benchforge.agents.builtin.react_de import ReactDeAgent, ReactDeConfig
from benchforge.agents.builtin.single_call import SingleCallAgent

__all__ = [
    "CommandAgent",
    "CommandAgentConfig",
    "NullAgent",
    "OracleAgent",
    "ReactDeAgent",
    "ReactDeConfig",
    "SingleCallAgent",
]

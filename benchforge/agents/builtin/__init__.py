"""The agents Benchforge ships: oracle, null, react, react-de, react-da, single-call, command
(react-de and react-da are the ``react`` agent with their toolset's defaults).

Each registers itself (``benchforge.agents.registration.register_agent``) in its own module;
importing this package imports every module in it, so a new shipped agent is one new module.
"""

import importlib
import pkgutil

from benchforge.agents.builtin.command import CommandAgent, CommandAgentConfig
from benchforge.agents.builtin.null import NullAgent
from benchforge.agents.builtin.oracle import OracleAgent
from benchforge.agents.builtin.react import ReactAgent, ReactConfig
from benchforge.agents.builtin.react_da import ReactDaConfig
from benchforge.agents.builtin.react_de import ReactDeConfig
from benchforge.agents.builtin.single_call import SingleCallAgent, SingleCallConfig

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "CommandAgent",
    "CommandAgentConfig",
    "NullAgent",
    "OracleAgent",
    "ReactAgent",
    "ReactConfig",
    "ReactDaConfig",
    "ReactDeConfig",
    "SingleCallAgent",
    "SingleCallConfig",
]

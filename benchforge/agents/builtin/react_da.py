"""``react-da``: the ReAct agent (``react``) on open data-analysis tasks, after DAComp's DA
baseline.

It acts through the ``da`` toolset (sql, python, write_file, read_file, finish) and is paired
only with tasks whose family names it; its default system prompt is that toolset's
instructions. The deliverable is a markdown report at ``report/report.md`` with charts saved
beside it.
"""

from __future__ import annotations

from benchforge.agents.builtin.react import ReactAgent, ReactConfig
from benchforge.agents.registration import AgentResources, register_agent
from benchforge.agents.tools.da import DA_INSTRUCTIONS

TOOLSET = "da"


class ReactDaConfig(ReactConfig):
    system_prompt: str | None = DA_INSTRUCTIONS


MOCK_MODEL = "mock-script:react-da-report"
"""The mock server's script react-da runs on offline when a run names no model."""


@register_agent("react-da", config=ReactDaConfig, order=25, mock_model=MOCK_MODEL)
def react_da(config: ReactDaConfig | None, _resources: AgentResources) -> ReactAgent:
    return ReactAgent(config or ReactDaConfig(), name="react-da", toolsets=[TOOLSET])

"""``react-de``: the ReAct agent (``react``) on data-engineering tasks, after DAComp's baseline.

It acts through the ``de`` toolset (bash, create_file, edit_file, run_dbt, terminate) and is
paired only with tasks whose family names it; its default system prompt is that toolset's
instructions. Each action has its own timeout (120 s by default).
"""

from __future__ import annotations

from benchforge.agents.builtin.react import ReactAgent, ReactConfig
from benchforge.agents.registration import AgentResources, register_agent
from benchforge.agents.tools.de import DE_INSTRUCTIONS

TOOLSET = "de"


class ReactDeConfig(ReactConfig):
    system_prompt: str | None = DE_INSTRUCTIONS


@register_agent("react-de", config=ReactDeConfig, order=20)
def react_de(config: ReactDeConfig | None, _resources: AgentResources) -> ReactAgent:
    return ReactAgent(config or ReactDeConfig(), name="react-de", toolsets=[TOOLSET])

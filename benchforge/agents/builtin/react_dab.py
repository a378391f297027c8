"""``react-dab``: the ReAct agent (``react``) on multi-database question tasks (``dab_query``),
after DataAgentBench's ReAct baseline.

It acts through the ``dab`` toolset (list_db, read_doc, query_db, execute_python,
return_answer) and is paired only with tasks whose family names it; its default system prompt
is that toolset's instructions. The deliverable is the answer it returns.
"""

from __future__ import annotations

from benchforge.agents.builtin.react import ReactAgent, ReactConfig
from benchforge.agents.registration import AgentResources, register_agent
from benchforge.agents.tools.dab import DAB_INSTRUCTIONS

TOOLSET = "dab"


class ReactDabConfig(ReactConfig):
    system_prompt: str | None = DAB_INSTRUCTIONS


MOCK_MODEL = "mock-script:react-dab-crm-solve"
"""The mock server's script react-dab runs on offline when a run names no model (it solves
dab-crm's crm-dab-healthcare-contacts on the crm dataset of scale 0.01, seed 7)."""


@register_agent("react-dab", config=ReactDabConfig, order=26, mock_model=MOCK_MODEL)
def react_dab(config: ReactDabConfig | None, _resources: AgentResources) -> ReactAgent:
    return ReactAgent(config or ReactDabConfig(), name="react-dab", toolsets=[TOOLSET])

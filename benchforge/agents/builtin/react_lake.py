"""``react-lake``: the ReAct agent (``react``) on data-lake pipeline tasks (``lake_pipeline``,
after KramaBench).

It acts through the ``lake`` toolset (list_files, read_file, execute_python, submit_answer) and
is paired only with tasks whose family names it; its default system prompt is that toolset's
instructions. The deliverable is the answer it submits, with its pipeline's code.
"""

from __future__ import annotations

from benchforge.agents.builtin.react import ReactAgent, ReactConfig
from benchforge.agents.registration import AgentResources, register_agent
from benchforge.agents.tools.lake import LAKE_INSTRUCTIONS

TOOLSET = "lake"


class ReactLakeConfig(ReactConfig):
    system_prompt: str | None = LAKE_INSTRUCTIONS


MOCK_MODEL = "mock-script:react-lake-crm-solve"
"""The mock server's script react-lake runs on offline when a run names no model (it solves
lake-crm's webinar-campaigns question in any setting, on the crm dataset of scale 0.02, seed 7;
``react-lake-crm-mistakes`` reads a stale copy instead and answers wrongly)."""


@register_agent("react-lake", config=ReactLakeConfig, order=29, mock_model=MOCK_MODEL)
def react_lake(config: ReactLakeConfig | None, _resources: AgentResources) -> ReactAgent:
    return ReactAgent(config or ReactLakeConfig(), name="react-lake", toolsets=[TOOLSET])

"""``react-explore``: the ReAct agent (``react``) on exploratory analysis tasks
(``explore_milestone``), after DataClawBench's agent setup: a read-only file toolset over the
exploration environment and sandboxed Python.

It acts through the ``explore`` toolset (list_files, read_head, python, return_answer) and is
paired only with tasks whose family names it; its default system prompt is that toolset's
instructions. The deliverable is the answer it returns; its trajectory is scored too
(milestones).
"""

from __future__ import annotations

from benchforge.agents.builtin.react import ReactAgent, ReactConfig
from benchforge.agents.registration import AgentResources, register_agent
from benchforge.agents.tools.explore import EXPLORE_INSTRUCTIONS

TOOLSET = "explore"


class ReactExploreConfig(ReactConfig):
    system_prompt: str | None = EXPLORE_INSTRUCTIONS


MOCK_MODEL = "mock-script:react-explore-revenue"
"""The mock server's script react-explore runs on offline when a run names no model: it sums
2023 revenue per industry from the national aggregates, converting units but keeping the
grand-total rows, so it reaches some milestones of explore-enterprise's revenue tasks and
misses the others (docs/explore-tasks.md)."""


@register_agent("react-explore", config=ReactExploreConfig, order=29, mock_model=MOCK_MODEL)
def react_explore(config: ReactExploreConfig | None, _resources: AgentResources) -> ReactAgent:
    return ReactAgent(config or ReactExploreConfig(), name="react-explore", toolsets=[TOOLSET])

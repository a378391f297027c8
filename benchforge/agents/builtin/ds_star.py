"""``ds-star``: the DS-STAR agent on data-lake question tasks (``benchforge.agents.dsstar``,
``docs/ds-star.md``), paired only with tasks whose toolset its config names (``lake``)."""

from __future__ import annotations

from benchforge.agents.dsstar import DsStarAgent, DsStarConfig
from benchforge.agents.registration import AgentResources, register_agent

MOCK_MODEL = "mock-script:ds-star-lake-solve"
"""The mock server's script ds-star runs on offline when a run names no model: it solves the
mini weather lake of the tests (``tests/fixtures/lakes/mini-weather``) after a wrong file and a
failing script."""


@register_agent("ds-star", config=DsStarConfig, order=27, mock_model=MOCK_MODEL)
def ds_star(config: DsStarConfig | None, _resources: AgentResources) -> DsStarAgent:
    return DsStarAgent(config)

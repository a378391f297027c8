"""``ds-guru``: KramaBench's DS-Guru baseline on data-lake question tasks
(``benchforge.agents.dsstar.guru``): one call, a JSON plan and a script, re-asked with the
error up to five times."""

from __future__ import annotations

from benchforge.agents.dsstar import DsGuruAgent, DsGuruConfig
from benchforge.agents.registration import AgentResources, register_agent

MOCK_MODEL = "mock-script:ds-guru-lake-solve"
"""The mock server's script ds-guru runs on offline when a run names no model (the tests'
mini weather lake, one failed script first)."""


@register_agent("ds-guru", config=DsGuruConfig, order=28, mock_model=MOCK_MODEL)
def ds_guru(config: DsGuruConfig | None, _resources: AgentResources) -> DsGuruAgent:
    return DsGuruAgent(config)

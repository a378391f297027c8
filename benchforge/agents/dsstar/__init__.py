"""Agents for data-lake question tasks (a folder of files and a question; the answer is
returned): ``ds-star`` (:mod:`.agent`, after DS-STAR) and the DS-Guru baseline (:mod:`.guru`,
after KramaBench). Both run every script alone in the trial's sandbox (:mod:`.lake`).
``docs/ds-star.md`` describes the roles, the loop, the limits and what is recorded."""

from benchforge.agents.dsstar.agent import DsStarAgent
from benchforge.agents.dsstar.config import (
    ORACLE_FILES_ENV,
    Ablations,
    DsGuruConfig,
    DsStarConfig,
    Role,
    ScriptLimits,
)
from benchforge.agents.dsstar.guru import DsGuruAgent

__all__ = [
    "ORACLE_FILES_ENV",
    "Ablations",
    "DsGuruAgent",
    "DsGuruConfig",
    "DsStarAgent",
    "DsStarConfig",
    "Role",
    "ScriptLimits",
]

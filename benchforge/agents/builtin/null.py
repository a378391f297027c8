"""``null``: submits the workspace as it was given. Every executable task must score it 0."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import register_agent


class NullConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@register_agent("null", order=10)
class NullAgent:
    name = "null"
    uses_model = False

    @property
    def config(self) -> NullConfig:
        return NullConfig()

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        return AgentOutcome(termination="finished", answer=None)

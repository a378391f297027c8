"""``single-call``: one model call with the task prompt; the reply is the answer (recorded in
the trial result; the workspace is never touched). The smallest agent that exercises the whole
LLM path (used by bench/fanout.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import register_agent


class SingleCallConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str = "Answer the task in one reply."


@register_agent("single-call", config=SingleCallConfig, order=30)
class SingleCallAgent:
    name = "single-call"
    uses_model = True

    def __init__(self, config: SingleCallConfig | None = None) -> None:
        self._config = config or SingleCallConfig()

    @property
    def config(self) -> SingleCallConfig:
        return self._config

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        if env.llm is None:
            raise ValueError("single-call needs a model")
        messages = [
            {"role": "system", "content": self._config.system},
            {"role": "user", "content": env.prompt},
        ]
        response = await env.llm.complete(messages)
        return AgentOutcome(termination="finished", answer=response.content)

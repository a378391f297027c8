"""``single-call``: one model call with the task prompt; the reply is the answer (recorded in
the trial result; the workspace is never touched). The smallest agent that exercises the whole
LLM path (used by bench/fanout.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from benchforge.agents.builtin.react_de import model_step
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment


class SingleCallConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str = "Answer the task in one reply."


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
        response = await model_step(env, messages, tools=None)
        return AgentOutcome(termination="finished", answer=response.content)

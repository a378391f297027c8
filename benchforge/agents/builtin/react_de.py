"""``react-de``: a ReAct tool-calling agent for data-engineering tasks (after DAComp's baseline).

Each round the model sees the conversation and the DE tools (bash, create_file, edit_file,
run_dbt, terminate) and answers with tool calls, which run in the trial's sandbox. It stops when
the model terminates, answers without a tool call, issues the same action ``repeat_limit``
times in a row, or runs out of rounds. Each action has its own timeout (120 s by default).
Model calls are recorded by the trial's client view; the agent records its tool steps.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchforge.agents.builtin.react import react_loop
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import register_agent
from benchforge.agents.tools.de import DeToolbox

SYSTEM_PROMPT = """You are a data engineer working in a sandboxed workspace with a dbt-duckdb \
project under repo/ (profile `benchforge`; your development database is a copy of the raw \
warehouse). There is no network. Act only through the tools; read files with bash before you \
change them, build what you change with run_dbt, and call terminate when the task is done."""


class ReactDeConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    system_prompt: str = SYSTEM_PROMPT
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)


@register_agent("react-de", config=ReactDeConfig, order=20)
class ReactDeAgent:
    name = "react-de"
    uses_model = True

    def __init__(self, config: ReactDeConfig | None = None) -> None:
        self._config = config or ReactDeConfig()

    @property
    def config(self) -> ReactDeConfig:
        return self._config

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        return await react_loop(env, DeToolbox(env), self._config, self.name)

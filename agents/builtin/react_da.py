"""``react-da``: a ReAct tool-calling agent for open data-analysis tasks (after DAComp's DA
baseline).

Each round the model sees the conversation and the ``da`` tools (sql, python, write_file,
read_file, finish) and answers with tool calls; the code tools run in the trial's sandbox
against the read-only analysis database. The deliverable is a markdown report at
``report/report.md`` with charts saved beside it. The stop rules are react-de's: the model
finishes, answers without a tool call, issues the same action ``repeat_limit`` times in a row,
or runs out of rounds. Model calls are recorded by the trial's client view; the agent records
its tool steps.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchforge.agents.builtin.react_de import _action_signature, _arguments_of
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import register_agent
from benchforge.agents.tools.da import DaToolbox
from benchforge.agents.tools.de import ToolOutcome
from benchforge.core.llm import LlmRequestError

SYSTEM_PROMPT = """You are a data analyst answering a business question from data. The \
question is in the task; the data is a DuckDB database of analysis-ready tables, which you \
query with the sql tool (read-only) or from Python (the python tool; the database path is in \
the ANALYSIS_DB environment variable). There is no network.

Work from the data: look at the tables and their columns first, then compute every figure you \
report with a query or a script. Never estimate, invent or round away a number you could \
compute, and say which table and filter a figure comes from when it is not obvious.

Deliver a markdown report at report/report.md (write it with write_file): start with a direct \
answer to the question, then the evidence (figures, a markdown table where it helps), the \
likely causes or drivers, caveats about the data, and concrete recommendations. Save any chart \
as a PNG under report/ (matplotlib, savefig) and link it from the report with a relative path, \
e.g. ![title](chart.png). Call finish with a short summary once the report is written."""


class ReactDaConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    system_prompt: str = SYSTEM_PROMPT
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)


MOCK_MODEL = "mock-script:react-da-report"
"""The mock server's script react-da runs on offline when a run names no model."""


@register_agent("react-da", config=ReactDaConfig, order=25, mock_model=MOCK_MODEL)
class ReactDaAgent:
    name = "react-da"
    uses_model = True

    def __init__(self, config: ReactDaConfig | None = None) -> None:
        self._config = config or ReactDaConfig()

    @property
    def config(self) -> ReactDaConfig:
        return self._config

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        llm = env.llm
        if llm is None:
            raise ValueError("react-da needs a model")
        toolbox = DaToolbox(env)
        tools = toolbox.schemas()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self._config.system_prompt},
            {"role": "user", "content": env.prompt},
        ]
        last_action, repeats = "", 0
        for _ in range(env.limits.max_rounds):
            try:
                response = await llm.complete(
                    messages,
                    tools=tools,
                    temperature=self._config.temperature,
                    max_tokens=self._config.max_tokens,
                )
            except LlmRequestError as exc:  # the request itself was refused, e.g. too long
                return AgentOutcome(termination="agent_error", error=str(exc))
            messages.append(response.assistant_message())
            if not response.tool_calls:
                return AgentOutcome(termination="no_action", answer=response.content)
            for call in response.tool_calls:
                signature = _action_signature(call.name, call.arguments)
                repeats = repeats + 1 if signature == last_action else 1
                last_action = signature
                if repeats >= env.limits.repeat_limit:
                    return AgentOutcome(
                        termination="repeated_action",
                        error=f"{call.name} issued {repeats} times in a row with the same "
                        "arguments",
                    )
                outcome = await self._act(env, toolbox, call.name, call.arguments)
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": outcome.output}
                )
                if outcome.terminate:
                    return AgentOutcome(termination="finished", answer=outcome.answer)
        return AgentOutcome(termination="round_limit")

    async def _act(
        self, env: TaskEnvironment, toolbox: DaToolbox, name: str, raw_arguments: str
    ) -> ToolOutcome:
        started = env.trajectory.start("tool", name, arguments=_arguments_of(raw_arguments))
        try:
            parsed = json.loads(raw_arguments or "{}")
            arguments = parsed if isinstance(parsed, dict) else {}
            outcome = (
                await toolbox.call(name, arguments)
                if isinstance(parsed, dict)
                else ToolOutcome(output="error: arguments must be a JSON object", ok=False)
            )
        except ValueError:
            arguments = {}
            outcome = ToolOutcome(output="error: arguments are not valid JSON", ok=False)
        env.trajectory.step(
            "tool",
            name,
            started,
            arguments=arguments,
            output=outcome.output,
            ok=outcome.ok,
            exit_code=outcome.exit_code,
            timed_out=outcome.timed_out,
        )
        return outcome

"""``react-de``: a ReAct tool-calling agent for data-engineering tasks (after DAComp's baseline).

Each round the model sees the conversation and the DE tools (bash, create_file, edit_file,
run_dbt, terminate) and answers with tool calls, which run in the trial's sandbox. It stops when
the model terminates, answers without a tool call, issues the same action ``repeat_limit``
times in a row, or runs out of rounds. Each action has its own timeout (120 s by default).
Model calls are recorded by the trial's client view; the agent records its tool steps.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import register_agent
from benchforge.agents.tools.de import DeToolbox, ToolOutcome
from benchforge.core.llm import LlmRequestError

SYSTEM_PROMPT = """You are a data engineer working in a sandboxed workspace with a dbt-duckdb \
project under repo/ (profile `benchforge`; your development database is a copy of the raw \
warehouse). There is no network. Act only through the tools; read files with bash before you \
change them, build what you change with run_dbt, and call terminate when the task is done."""


class ReactDeConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    system_prompt: str = SYSTEM_PROMPT
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)


def _arguments_of(raw_arguments: str) -> dict[str, Any]:
    """The call's arguments as recorded for a step cut short (the JSON object, else none)."""
    try:
        parsed = json.loads(raw_arguments or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _action_signature(name: str, arguments: str) -> str:
    try:
        return name + json.dumps(json.loads(arguments), sort_keys=True)
    except ValueError:
        return name + arguments


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
        llm = env.llm
        if llm is None:
            raise ValueError("react-de needs a model")
        toolbox = DeToolbox(env)
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
        self, env: TaskEnvironment, toolbox: DeToolbox, name: str, raw_arguments: str
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

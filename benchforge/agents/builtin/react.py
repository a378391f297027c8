"""``react``: the ReAct tool-calling agent (after DAComp's baseline agents), acting through
whatever toolset its task's family names (``TaskEnvironment.tools``).

Each round the model sees the conversation and the toolset's tools and answers with tool calls,
which run (in the trial's sandbox, for the code tools). The loop stops when a tool terminates,
the model answers without a tool call, it issues the same action ``repeat_limit`` times in a
row, or the rounds run out. Model calls are recorded by the trial's client view; the loop
records the tool steps.

Three registered names, one agent:

- ``react`` acts through every toolset; its system prompt is the toolset's own instructions
  (``Toolset.instructions``) unless its config gives one, so on a DE task it is prompted as
  react-de is, on a DA task as react-da is. One ``react`` in a run covers DE and DA tasks.
- ``react-de`` (``react_de.py``) and ``react-da`` (``react_da.py``) are the same agent with the
  DE or DA instructions as its default prompt, paired only with tasks of that toolset.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registration import AgentResources, register_agent
from benchforge.agents.tools.tool import ToolOutcome
from benchforge.core.llm import LlmRequestError


class ReactConfig(BaseModel):
    """``system_prompt``: None, the task's toolset's instructions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system_prompt: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)


class ReactAgent:
    """The ReAct agent under ``name``; ``toolsets``: those it acts through (None: any)."""

    uses_model = True

    def __init__(
        self,
        config: ReactConfig | None = None,
        *,
        name: str = "react",
        toolsets: Collection[str] | None = None,
    ) -> None:
        self.name = name
        self._config = config or ReactConfig()
        self._toolsets = frozenset(toolsets) if toolsets is not None else None

    @property
    def config(self) -> ReactConfig:
        return self._config

    def supports_toolset(self, name: str) -> bool:
        return self._toolsets is None or name in self._toolsets

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        return await react_loop(env, self._config, self.name)


@register_agent("react", config=ReactConfig, order=15)
def react(config: ReactConfig | None, _resources: AgentResources) -> ReactAgent:
    return ReactAgent(config)


async def react_loop(env: TaskEnvironment, settings: ReactConfig, agent: str) -> AgentOutcome:
    llm = env.llm
    if llm is None:
        raise ValueError(f"{agent} needs a model")
    tools = env.tools.schemas()
    system_prompt = settings.system_prompt
    if system_prompt is None:
        system_prompt = env.tools.instructions
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": env.prompt},
    ]
    last_action, repeats = "", 0
    for _ in range(env.limits.max_rounds):
        try:
            response = await llm.complete(
                messages,
                tools=tools,
                temperature=settings.temperature,
                max_tokens=settings.max_tokens,
            )
        except LlmRequestError as exc:  # the request itself was refused, e.g. too long
            return AgentOutcome(termination="agent_error", error=str(exc))
        messages.append(response.assistant_message())
        if not response.tool_calls:
            return AgentOutcome(termination="no_action", answer=response.content)
        for call in response.tool_calls:
            signature = action_signature(call.name, call.arguments)
            repeats = repeats + 1 if signature == last_action else 1
            last_action = signature
            if repeats >= env.limits.repeat_limit:
                return AgentOutcome(
                    termination="repeated_action",
                    error=f"{call.name} issued {repeats} times in a row with the same arguments",
                )
            outcome = await act(env, call.name, call.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome.output})
            if outcome.terminate:
                return AgentOutcome(termination="finished", answer=outcome.answer)
    return AgentOutcome(termination="round_limit")


async def act(env: TaskEnvironment, name: str, raw_arguments: str) -> ToolOutcome:
    """Runs one tool call and records it as a step (started before it runs, so a call the
    wall clock cuts short is recorded as interrupted)."""
    started = env.trajectory.start("tool", name, arguments=arguments_of(raw_arguments))
    arguments: dict[str, Any] = {}
    try:
        parsed = json.loads(raw_arguments or "{}")
    except ValueError:
        outcome = ToolOutcome(output="error: arguments are not valid JSON", ok=False)
    else:
        if isinstance(parsed, dict):
            arguments = parsed
            outcome = await env.tools.call(env, name, arguments)
        else:
            outcome = ToolOutcome(output="error: arguments must be a JSON object", ok=False)
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


def arguments_of(raw_arguments: str) -> dict[str, Any]:
    """The call's arguments as recorded for a step cut short (the JSON object, else none)."""
    try:
        parsed = json.loads(raw_arguments or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def action_signature(name: str, arguments: str) -> str:
    try:
        return name + json.dumps(json.loads(arguments), sort_keys=True)
    except ValueError:
        return name + arguments

"""The ReAct loop react-de and react-da share (after DAComp's baseline agents).

Each round the model sees the conversation and the toolbox's tools and answers with tool calls,
which the toolbox runs (in the trial's sandbox). The loop stops when a tool terminates, the
model answers without a tool call, it issues the same action ``repeat_limit`` times in a row,
or the rounds run out. Model calls are recorded by the trial's client view; the loop records
the tool steps.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.tools.de import ToolOutcome
from benchforge.core.llm import LlmRequestError


class Toolbox(Protocol):
    def schemas(self) -> list[dict[str, Any]]: ...

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome: ...


class ReactSettings(Protocol):
    """What the loop reads of an agent's config."""

    @property
    def system_prompt(self) -> str: ...

    @property
    def temperature(self) -> float | None: ...

    @property
    def max_tokens(self) -> int | None: ...


async def react_loop(
    env: TaskEnvironment, toolbox: Toolbox, settings: ReactSettings, agent: str
) -> AgentOutcome:
    llm = env.llm
    if llm is None:
        raise ValueError(f"{agent} needs a model")
    tools = toolbox.schemas()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": settings.system_prompt},
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
            outcome = await act(env, toolbox, call.name, call.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome.output})
            if outcome.terminate:
                return AgentOutcome(termination="finished", answer=outcome.answer)
    return AgentOutcome(termination="round_limit")


async def act(env: TaskEnvironment, toolbox: Toolbox, name: str, raw_arguments: str) -> ToolOutcome:
    """Runs one tool call and records it as a step (started before it runs, so a call the
    wall clock cuts short is recorded as interrupted)."""
    started = env.trajectory.start("tool", name, arguments=arguments_of(raw_arguments))
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

"""A new toolset is typed functions and one registration: the JSON schema the model sees is
derived from the signatures (pinned here, with no task family involved), bad arguments come
back to the agent as a tool error, and the ``react`` agent acts through the toolset its
environment hands it, driven by the mock LLM server. The shipped toolsets keep the tools the
mock scripts call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import pytest
from pydantic import Field, SecretStr

from benchforge.agents.builtin import ReactAgent
from benchforge.agents.mock_llm import (
    MockServerConfig,
    MockServerHandle,
    ScriptedReply,
    ScriptedScript,
    ScriptedToolCall,
    run_server,
)
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registry import build_agent
from benchforge.agents.tools import Tool, ToolError, ToolOutcome, Toolset, tool
from benchforge.agents.tools.tool import parse_docstring
from benchforge.agents.tools.toolsets import (
    register_toolset,
    subset,
    toolset,
    toolset_names,
    unregister_toolset,
)
from benchforge.core.errors import ConfigError
from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig, LlmResponse
from benchforge.core.records import AgentLimits, TrialKey
from benchforge.core.sandbox import ProcessBackend

ANSWER_FILE = "answer.txt"
KM_PER_MILE = 1.609344


@tool
def convert(
    env: TaskEnvironment,
    amount: Annotated[float, Field(gt=0, description="the distance, a positive number")],
    unit: Literal["km", "mi"] = "km",
    note: str | None = None,
) -> str:
    """Convert a distance to kilometres and append it to answer.txt in the
    workspace.

    Args:
        unit: the unit `amount` is given in.
        note: a comment written after the figure,
            on the same line.
    """
    km = amount * KM_PER_MILE if unit == "mi" else amount
    line = f"{km:.2f} km" + (f" ({note})" if note else "")
    with (env.workspace / ANSWER_FILE).open("a") as out:
        out.write(line + "\n")
    return line


@tool(name="done")
async def finish_conversion(env: TaskEnvironment, summary: str) -> ToolOutcome:
    """Finish; `summary` repeats the answer."""
    if not (env.workspace / ANSWER_FILE).is_file():
        raise ToolError(f"{ANSWER_FILE} is missing; call convert first")
    return ToolOutcome(output="done", ok=True, terminate=True, answer=summary)


UNITS = Toolset(
    "units",
    (convert, finish_conversion),
    instructions="You convert distances with the tools, then call done.",
)

CONVERT_SCHEMA = {
    "type": "function",
    "function": {
        "name": "convert",
        "description": "Convert a distance to kilometres and append it to answer.txt in the "
        "workspace.",
        "parameters": {
            "type": "object",
            "properties": {
                "amount": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "the distance, a positive number",
                },
                "unit": {
                    "type": "string",
                    "enum": ["km", "mi"],
                    "description": "the unit `amount` is given in.",
                },
                "note": {
                    "type": "string",
                    "description": "a comment written after the figure, on the same line.",
                },
            },
            "required": ["amount"],
        },
    },
}
DONE_SCHEMA = {
    "type": "function",
    "function": {
        "name": "done",
        "description": "Finish; `summary` repeats the answer.",
        "parameters": {
            "type": "object",
            "properties": {"summary": {"type": "string"}},
            "required": ["summary"],
        },
    },
}


@pytest.fixture()
def units() -> Iterator[Toolset]:
    registered = register_toolset(UNITS)
    yield registered
    unregister_toolset(UNITS.name)


def _env(tmp_path: Path, tools: Toolset, llm: Any = None) -> TaskEnvironment:
    key = TrialKey(
        suite="units",
        task_id="miles",
        task_version="1",
        agent="react",
        agent_config_hash="0" * 12,
        model="mock-script:units",
        epoch=0,
    )
    return TaskEnvironment(
        key=key,
        family="units",
        prompt="How many kilometres are 5 miles?",
        workspace_path=tmp_path / "ws",
        data_dir=None,
        tools=tools,
        limits=AgentLimits(max_rounds=6),
        sandbox=ProcessBackend(),
        llm=llm,
    )


def _call(env: TaskEnvironment, name: str, **arguments: Any) -> ToolOutcome:
    return asyncio.run(env.tools.call(env, name, arguments))


# --- the schema, from the signature ----------------------------------------------------------


def test_the_schema_is_derived_from_the_signature(units: Toolset) -> None:
    assert isinstance(convert, Tool) and convert.env_parameter == "env"
    assert toolset("units") is units and "units" in toolset_names()
    assert units.names == ("convert", "done")
    assert units.schemas() == [CONVERT_SCHEMA, DONE_SCHEMA]
    assert list(units.schemas()[0]["function"]["parameters"]["properties"]) == [
        "amount",
        "unit",
        "note",
    ]


def test_docstrings_give_the_description_and_the_argument_descriptions() -> None:
    text, arguments = parse_docstring(
        "Do a thing\nin two lines.\n\nA second paragraph.\n\nArgs:\n    a: the a,\n"
        "        continued.\n    b (int): the b.\n\nReturns:\n    nothing: ignored."
    )
    assert text == "Do a thing in two lines.\n\nA second paragraph."
    assert arguments == {"a": "the a, continued.", "b": "the b."}

    def undocumented(x: int) -> str:
        return str(x)

    with pytest.raises(ValueError, match="needs a description"):
        tool(undocumented)
    with pytest.raises(ValueError, match="tool name 'two words'"):
        tool(name="two words")(finish_conversion.function)


def test_a_toolset_is_registered_once_by_name(units: Toolset) -> None:
    register_toolset(UNITS)  # the same again: a re-import
    other = Toolset("units", (convert,))
    with pytest.raises(ValueError, match="already registered"):
        register_toolset(other)
    with pytest.raises(ValueError, match="names a tool twice"):
        Toolset("twice", (convert, convert))
    unregister_toolset("units")
    with pytest.raises(ConfigError, match="unknown toolset 'units'"):
        toolset("units")
    assert subset(toolset("de"), ["terminate", "bash"], name="shell").names == (
        "bash",
        "terminate",
    )


# --- calls: validated arguments, errors back to the agent -----------------------------------


def test_bad_arguments_are_a_tool_error_not_an_exception(tmp_path: Path, units: Toolset) -> None:
    env = _env(tmp_path, units)
    missing = _call(env, "convert")
    assert not missing.ok and missing.output == "error: amount: missing argument"
    negative = _call(env, "convert", amount=-1)
    assert negative.output == "error: amount: Input should be greater than 0"
    unit = _call(env, "convert", amount=1, unit="ly")
    assert not unit.ok and unit.output.startswith("error: unit: Input should be 'km' or 'mi'")
    refused = _call(env, "done", summary="none yet")
    assert not refused.ok and refused.output == "error: answer.txt is missing; call convert first"
    unknown = _call(env, "bash", command="ls")
    assert unknown.output == "error: unknown tool 'bash'"
    assert not (env.workspace / ANSWER_FILE).exists()
    # lax validation, as a model's JSON needs: "5" is 5; an explicit null is "not given"
    assert _call(env, "convert", amount="5", unit="mi", note=None).output == "8.05 km"
    finished = _call(env, "done", summary="8.05 km")
    assert finished.terminate and finished.answer == "8.05 km"


# --- the agent, through the mock LLM server -------------------------------------------------

SCRIPT = ScriptedScript(
    replies=[
        ScriptedReply(
            content="Convert first.",
            tool_calls=[ScriptedToolCall(name="convert", arguments={"amount": -5})],
        ),
        ScriptedReply(
            content="A distance is positive; the unit is miles.",
            tool_calls=[
                ScriptedToolCall(
                    name="convert", arguments={"amount": 5, "unit": "mi", "note": "5 miles"}
                )
            ],
        ),
        ScriptedReply(tool_calls=[ScriptedToolCall(name="done", arguments={"summary": "8.05 km"})]),
    ]
)


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    config = MockServerConfig(scripts={"units": SCRIPT}, builtin_scripts=False)
    with run_server(config=config) as handle:
        yield handle


class SeenByTheModel:
    """The trial's client view, keeping what each request showed the model."""

    def __init__(self, view: LlmClientView) -> None:
        self.view = view
        self.requests: list[tuple[list[dict[str, Any]], Sequence[Any] | None]] = []

    async def complete(
        self, messages: list[dict[str, Any]], tools: Sequence[Any] | None = None, **kwargs: Any
    ) -> LlmResponse:
        self.requests.append(([dict(m) for m in messages], tools))
        return await self.view.complete(messages, tools=tools, **kwargs)


def test_react_acts_through_the_toolset_it_is_given(
    tmp_path: Path, mock: MockServerHandle, units: Toolset
) -> None:
    config = LlmConfig(
        role="agent",
        model="mock-script:units",
        base_url=mock.url,
        api_key=SecretStr("k"),
        timeout_s=10.0,
    )
    agent = build_agent("react")
    assert isinstance(agent, ReactAgent) and agent.name == "react"
    assert agent.supports_toolset("units") and agent.supports_toolset("de")
    env = _env(tmp_path, units)

    async def run() -> tuple[AgentOutcome, SeenByTheModel]:
        async with LlmClient(config) as client:
            seen = SeenByTheModel(LlmClientView(client, steps=env.trajectory, epoch=0))
            env.llm = cast(LlmClientView, seen)
            return await agent.run(env), seen

    outcome, seen = asyncio.run(asyncio.wait_for(run(), timeout=60))
    assert outcome.termination == "finished" and outcome.answer == "8.05 km"
    assert (env.workspace / ANSWER_FILE).read_text() == "8.05 km (5 miles)\n"
    steps = env.trajectory.close("done")
    tools = [(s.name, s.ok, s.output) for s in steps if s.kind == "tool"]
    assert tools == [
        ("convert", False, "error: amount: Input should be greater than 0"),
        ("convert", True, "8.05 km (5 miles)"),
        ("done", True, "done"),
    ]
    assert len([s for s in steps if s.kind == "model"]) == 3
    # every request showed the model the toolset's schemas and, with no prompt configured,
    # the toolset's instructions; the tool error came back to it as the tool's reply
    assert [tools for _, tools in seen.requests] == [[CONVERT_SCHEMA, DONE_SCHEMA]] * 3
    messages = seen.requests[-1][0]
    assert messages[0] == {"role": "system", "content": UNITS.instructions}
    assert messages[3]["role"] == "tool" and messages[3]["content"].startswith("error: amount")


# --- the shipped toolsets -------------------------------------------------------------------


def test_the_shipped_agents_and_toolsets() -> None:
    assert toolset("de").names == ("bash", "create_file", "edit_file", "run_dbt", "terminate")
    assert toolset("da").names == ("sql", "python", "write_file", "read_file", "finish")
    de, da = build_agent("react-de"), build_agent("react-da")
    assert isinstance(de, ReactAgent) and isinstance(da, ReactAgent)
    assert (de.name, da.name) == ("react-de", "react-da")
    assert de.supports_toolset("de") and not de.supports_toolset("da")
    assert da.supports_toolset("da") and not da.supports_toolset("de")
    assert de.config.system_prompt == toolset("de").instructions
    assert da.config.system_prompt == toolset("da").instructions
    # an optional parameter with a default the description states
    sql = toolset("da").schemas()[0]["function"]["parameters"]
    assert sql == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "max_rows": {
                "type": "integer",
                "minimum": 1,
                "maximum": 500,
                "description": "default 50",
            },
        },
        "required": ["query"],
    }

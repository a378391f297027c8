"""Agents are registered by name: a new agent is one module with ``@register_agent``; the CLI
spellings, the "did you mean" errors and the flows' parameter type come from the registry."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from benchforge.agents import registration
from benchforge.agents.builtin import OracleAgent, ReactAgent, ReactDeConfig
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registry import (
    AgentSpelling,
    agent_names,
    agent_spellings,
    build_agent,
    default_models,
    register_agent,
)
from benchforge.core.errors import ConfigError


class ToyConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    greeting: str = "hello"


class ToyAgent:
    name = "toy"
    uses_model = False

    def __init__(self, config: ToyConfig | None = None) -> None:
        self._config = config or ToyConfig()

    @property
    def config(self) -> ToyConfig:
        return self._config

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        return AgentOutcome(termination="finished", answer=self._config.greeting)


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by a test are forgotten after it."""
    monkeypatch.setattr(registration, "_AGENTS", dict(registration._AGENTS))


def test_the_shipped_agents_and_their_spellings() -> None:
    assert agent_names() == [
        "oracle",
        "null",
        "react",
        "react-de",
        "react-da",
        "react-dab",
        "ds-star",
        "ds-guru",
        "react-explore",
        "react-lake",
        "single-call",
        "command",
    ]
    assert agent_spellings() == [
        "oracle",
        "null",
        "react",
        "react-de",
        "react-da",
        "react-dab",
        "ds-star",
        "ds-guru",
        "react-explore",
        "react-lake",
        "single-call",
        "react=CONFIG.yaml",
        "react-de=CONFIG.yaml",
        "react-da=CONFIG.yaml",
        "react-dab=CONFIG.yaml",
        "ds-star=CONFIG.yaml",
        "ds-guru=CONFIG.yaml",
        "react-explore=CONFIG.yaml",
        "react-lake=CONFIG.yaml",
        "single-call=CONFIG.yaml",
        "command=AGENT.yaml",
    ]
    solution = Path("/nowhere")
    oracle = build_agent("oracle", lambda _key: solution)
    assert isinstance(oracle, OracleAgent) and oracle.solutions is not None
    assert oracle.solutions(None) == solution  # the run's solutions reach the factory
    react_de = build_agent("react-de")
    assert isinstance(react_de, ReactAgent) and react_de.name == "react-de"
    assert react_de.config == ReactDeConfig()


def test_a_new_agent_is_one_registration(scratch_registry: None, tmp_path: Path) -> None:
    register_agent("toy", config=ToyConfig, order=50)(ToyAgent)
    assert agent_names() == [
        "oracle",
        "null",
        "react",
        "react-de",
        "react-da",
        "react-dab",
        "ds-star",
        "ds-guru",
        "react-explore",
        "react-lake",
        "single-call",
        "toy",
        "command",
    ]
    assert "toy=CONFIG.yaml" in agent_spellings()
    agent = build_agent("toy")
    assert isinstance(agent, ToyAgent) and agent.config == ToyConfig()
    config = tmp_path / "toy.yaml"
    config.write_text("greeting: hi\n")
    assert build_agent(f"toy={config}").config == ToyConfig(greeting="hi")
    config.write_text("greting: hi\n")
    with pytest.raises(ConfigError, match=r"toy.yaml: greting: Extra inputs"):
        build_agent(f"toy={config}")
    with pytest.raises(ConfigError, match="did you mean 'toy'"):
        build_agent("tyo")
    with pytest.raises(ValueError, match="registered twice"):
        register_agent("toy")(ReactAgent)
    register_agent("toy", config=ToyConfig, order=50)(ToyAgent)  # a re-import: the same one


def test_spelling_errors_name_the_problem() -> None:
    with pytest.raises(ConfigError, match=r"unknown agent 'oracel'; did you mean 'oracle'\?"):
        build_agent("oracel")
    with pytest.raises(ConfigError, match=r"known: oracle, null, .*command=AGENT.yaml\)"):
        build_agent("nothing-like-it")
    with pytest.raises(ConfigError, match=r"agent 'command' needs a config file"):
        build_agent("command")
    with pytest.raises(ConfigError, match=r"agent 'oracle' takes no config file"):
        build_agent("oracle=x.yaml")
    with pytest.raises(ValueError, match="lower-case"):
        register_agent("Toy")


def test_the_parameter_type_offers_the_registered_agents() -> None:
    spellings = TypeAdapter(list[AgentSpelling])
    assert spellings.validate_python(["oracle", "react-de=a.yaml", "command=b.yaml"])
    for bad in (["oracel"], ["oracle=a.yaml"], ["command"]):
        with pytest.raises(ValidationError):
            spellings.validate_python(bad)
    choices = spellings.json_schema()["items"]["anyOf"]
    assert choices[0]["enum"] == [
        "oracle",
        "null",
        "react",
        "react-de",
        "react-da",
        "react-dab",
        "ds-star",
        "ds-guru",
        "react-explore",
        "react-lake",
        "single-call",
    ]
    configurable = (
        "react|react-de|react-da|react-dab|ds-star|ds-guru|react-explore|react-lake|"
        "single-call|command"
    )
    assert choices[1]["pattern"] == rf"^({configurable})=\S.*$"


def test_a_run_naming_no_model_gets_each_agents_own_mock_script() -> None:
    assert default_models(["oracle", "react-da"], has_api_key=False) == [
        "mock-script:react-da-report"
    ]
    assert default_models(["react-da"], has_api_key=True) == ["gpt-4.1-mini"]
    assert default_models(["oracle", "null"], has_api_key=False) == []

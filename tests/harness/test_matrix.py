"""The trial matrix pairs each agent only with the tasks it supports: one run holds DE and DA
tasks, react-de gets the DE trials, react-da the DA ones, and oracle, null and react all."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from benchforge.agents.protocol import Agent
from benchforge.agents.registry import build_agent, own_mock_models
from benchforge.core.errors import ConfigError
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.matrix import NO_MODEL, chunked, expand, supports
from benchforge.harness.preflight import CheckedRequest, model_pairing, resolve_models
from tests.paths import FIXTURES

DE_TASKS = FIXTURES / "task_specs" / "de-mini"
DA_TASKS = FIXTURES / "task_specs" / "da-mini"
MODEL = "mock-echo"


def _tasks() -> list[LoadedTask]:
    return [
        load_task(DE_TASKS / "mini-impl"),  # de_impl
        load_task(DE_TASKS / "mini-arch-retention"),  # de_arch
        load_task(DA_TASKS / "mini-da-won-revenue"),  # da_open
    ]


def _agents(*spellings: str) -> dict[str, Agent]:
    return {s: build_agent(s) for s in spellings}


def test_agents_get_only_the_tasks_they_act_on() -> None:
    tasks = _tasks()
    assert [t.spec.family for t in tasks] == ["de_impl", "de_arch", "da_open"]
    agents = _agents("react-de", "react-da", "oracle", "null", "react")
    datasets = {tasks[0].key: Path("/data/mini")}
    plans = expand(tasks, agents, [MODEL], epochs=2, datasets=datasets)
    trials = {(p.key.agent, p.key.task_id, p.key.model, p.key.epoch) for p in plans}
    per_agent = {
        agent: sorted({task for a, task, _, _ in trials if a == agent}) for agent in agents
    }
    assert per_agent == {
        "react-de": ["mini-arch-retention", "mini-impl"],
        "react-da": ["mini-da-won-revenue"],
        "oracle": ["mini-arch-retention", "mini-da-won-revenue", "mini-impl"],
        "null": ["mini-arch-retention", "mini-da-won-revenue", "mini-impl"],
        "react": ["mini-arch-retention", "mini-da-won-revenue", "mini-impl"],
    }
    # 2 epochs each; the agents that call no model under '-'
    assert Counter(p.key.agent for p in plans) == {
        "react-de": 4,
        "react-da": 2,
        "oracle": 6,
        "null": 6,
        "react": 6,
    }
    assert {p.key.model for p in plans if p.key.agent in ("oracle", "null")} == {NO_MODEL}
    assert {p.key.model for p in plans if p.key.agent.startswith("react")} == {MODEL}
    assert {p.dataset_dir for p in plans if p.key.task_id == "mini-impl"} == {"/data/mini"}
    assert len(chunked(plans, 5)) == 5  # 24 trials


def test_an_agent_that_acts_on_no_task_is_refused() -> None:
    de_only = _tasks()[:2]
    assert not supports(build_agent("react-da"), de_only[0])
    with pytest.raises(ConfigError, match=r"agent 'react-da' acts on none of the tasks.*\bde\b"):
        expand(de_only, _agents("oracle", "react-da"), [MODEL], epochs=1, datasets={})
    plans = expand(de_only, _agents("oracle", "react-de"), [MODEL], epochs=1, datasets={})
    assert len(plans) == 4


def test_a_run_naming_no_model_pairs_each_agent_with_its_own_mock_script() -> None:
    """No --model and no API key: react-da runs its own script; an agent that has none
    (react-de: its scripts are per task) is refused instead of being run under react-da's
    (a mixed DE + DA run paired every agent with every default script)."""
    tasks = _tasks()
    spellings = ["react-da", "oracle", "null"]
    own = own_mock_models(spellings)
    assert list(own) == ["react-da"] and own["react-da"][0].startswith("mock-script:")
    models = resolve_models(spellings, [], has_api_key=False)
    assert models == own["react-da"]
    request = CheckedRequest(tasks=tasks, agents=_agents(*spellings))
    pairing = model_pairing(request, [], has_api_key=False)
    plans = expand(tasks, request.agents, models, 1, {}, agent_models=pairing)
    assert sorted({(p.key.agent, p.key.model) for p in plans}) == [
        ("null", NO_MODEL),
        ("oracle", NO_MODEL),
        ("react-da", own["react-da"][0]),
    ]
    assert len(plans) == 3 + 3 + 1

    mixed = CheckedRequest(tasks=tasks, agents=_agents("react-de", "react-da"))
    with pytest.raises(ConfigError, match=r"'react-de' calls a model and has no mock script"):
        model_pairing(mixed, [], has_api_key=False)
    # a named model (or an API key's default) is run by every model-calling agent
    assert model_pairing(mixed, [MODEL], has_api_key=False) is None
    assert model_pairing(mixed, [], has_api_key=True) is None
    named = expand(tasks, mixed.agents, [MODEL], 1, {}, agent_models=None)
    assert {(p.key.agent, p.key.model) for p in named} == {
        ("react-de", MODEL),
        ("react-da", MODEL),
    }

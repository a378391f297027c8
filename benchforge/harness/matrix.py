"""The trial matrix: tasks x agents x models x epochs (agents that call no model run once per
task and epoch, under model '-').

An agent is paired only with the tasks it supports: one that acts through some toolsets only
(``ChoosesToolsets``: react-de the ``de`` toolset, react-da the ``da`` one) gets the tasks whose
family names one of them; the others (oracle, null, react, command, single-call) get every task.
So one run can hold DE and DA tasks: with agents react-de, react-da, oracle and null, react-de
runs the DE tasks, react-da the DA tasks, oracle and null all of them. An agent that supports no
task of the run is refused: the run would silently not run it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from benchforge.agents.protocol import Agent, ChoosesToolsets, config_hash
from benchforge.core.errors import ConfigError
from benchforge.core.records import TrialKey
from benchforge.evaluation.families import family_of
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.models import TrialPlan

NO_MODEL = "-"


def expand(
    tasks: Sequence[LoadedTask],
    agents: Mapping[str, Agent],
    models: Sequence[str],
    epochs: int,
    datasets: Mapping[str, Path | None],
    agent_models: Mapping[str, Sequence[str]] | None = None,
) -> list[TrialPlan]:
    """``agents`` maps each CLI spelling to its agent; ``datasets`` maps a task key to its
    local dataset folder. A model-calling agent runs every one of ``models``, or, when
    ``agent_models`` names its spelling, only the models named there (each agent's own mock
    script when a run names no model)."""
    check_pairings(tasks, agents)
    plans = []
    for task in tasks:
        spec = task.spec
        for agent_spec, agent in agents.items():
            if not supports(agent, task):
                continue
            digest = config_hash(agent.config)
            own = (agent_models or {}).get(agent_spec, models)
            for model in own if agent.uses_model else [NO_MODEL]:
                for epoch in range(epochs):
                    key = TrialKey(
                        suite=spec.suite,
                        task_id=spec.id,
                        task_version=spec.version,
                        agent=agent.name,
                        agent_config_hash=digest,
                        model=model,
                        epoch=epoch,
                    )
                    dataset = datasets.get(task.key)
                    plans.append(
                        TrialPlan(
                            key=key,
                            task_folder=str(task.folder),
                            agent_spec=agent_spec,
                            dataset_dir=str(dataset) if dataset else None,
                        )
                    )
    slugs = [p.key.slug for p in plans]
    if len(set(slugs)) != len(slugs):
        raise ConfigError("the trial matrix has duplicate trials (an agent or model named twice?)")
    return plans


def supports(agent: Agent, task: LoadedTask) -> bool:
    """Whether ``agent`` can act on ``task``: through the toolset its family names."""
    if isinstance(agent, ChoosesToolsets):
        return agent.supports_toolset(family_of(task).toolset)
    return True


def check_pairings(tasks: Sequence[LoadedTask], agents: Mapping[str, Agent]) -> None:
    """Refuses an agent that supports none of ``tasks`` (e.g. react-da on a DE suite)."""
    if not tasks:
        return
    toolsets = sorted({family_of(task).toolset for task in tasks})
    for agent_spec, agent in agents.items():
        if not any(supports(agent, task) for task in tasks):
            raise ConfigError(
                f"agent {agent_spec!r} acts on none of the tasks: they need the toolset(s) "
                f"{', '.join(toolsets)}, which it does not act through"
            )


def chunked(plans: Sequence[TrialPlan], size: int) -> list[list[TrialPlan]]:
    if size < 1:
        raise ValueError("chunk size must be >= 1")
    return [list(plans[i : i + size]) for i in range(0, len(plans), size)]

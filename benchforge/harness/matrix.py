"""The trial matrix: tasks x agents x models x epochs (agents that call no model run once per
task and epoch, under model '-')."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from benchforge.agents.protocol import Agent, config_hash
from benchforge.core.errors import ConfigError
from benchforge.core.records import TrialKey
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.models import TrialPlan

NO_MODEL = "-"


def expand(
    tasks: Sequence[LoadedTask],
    agents: Mapping[str, Agent],
    models: Sequence[str],
    epochs: int,
    datasets: Mapping[str, Path | None],
) -> list[TrialPlan]:
    """``agents`` maps each CLI spelling to its agent; ``datasets`` maps a task key to its
    local dataset folder."""
    plans = []
    for task in tasks:
        spec = task.spec
        for agent_spec, agent in agents.items():
            digest = config_hash(agent.config)
            for model in models if agent.uses_model else [NO_MODEL]:
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


def chunked(plans: Sequence[TrialPlan], size: int) -> list[list[TrialPlan]]:
    if size < 1:
        raise ValueError("chunk size must be >= 1")
    return [list(plans[i : i + size]) for i in range(0, len(plans), size)]

"""Checks of a run request that cost no data work: done before any synthesis, gold build or
verification, so a typo'd agent, a missing dataset or an agent config asking its sandbox for a
protected path fails in seconds with the reason."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchforge.agents.protocol import Agent
from benchforge.agents.registry import build_agent, default_models, own_mock_models
from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.catalogue import catalogue
from benchforge.core.errors import ConfigError
from benchforge.core.settings import load_settings
from benchforge.evaluation.tasks import LoadedTask, load_tasks
from benchforge.harness.matrix import check_pairings
from benchforge.harness.sandbox_policy import check_agent_mounts, protected_paths, work_root

MOCK_PREFIX = "mock-"


@dataclass(frozen=True)
class CheckedRequest:
    """What a run request resolved to: its tasks and built agents."""

    tasks: list[LoadedTask]
    agents: dict[str, Agent]

    @property
    def uses_model(self) -> bool:
        return any(a.uses_model for a in self.agents.values())

    @property
    def domains(self) -> set[str]:
        return {ref.domain for t in self.tasks for ref in t.spec.dataset_roles().values()}


def suite_tasks(tasks_root: str, suites: list[str], task_ids: list[str] | None) -> list[LoadedTask]:
    root = catalogue().path(tasks_root)
    if not suites:
        raise ConfigError("no suites given")
    found: list[LoadedTask] = []
    for suite in suites:
        folder = root / suite
        if not folder.is_dir():
            known = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
            raise ConfigError(
                f"no suite {suite!r}: {folder} is not a folder (suites under {root}: "
                f"{', '.join(known) or 'none'})"
            )
        found += load_tasks(folder)
    if task_ids:
        unknown = set(task_ids) - {t.spec.id for t in found}
        if unknown:
            raise ConfigError(
                f"unknown task ids: {', '.join(sorted(unknown))} (in {', '.join(suites)}: "
                f"{', '.join(sorted(t.spec.id for t in found))})"
            )
        found = [t for t in found if t.spec.id in task_ids]
    if not found:
        raise ConfigError(f"no tasks in {', '.join(suites)} under {root}")
    return found


def resolve_models(agents: list[str], models: list[str], has_api_key: bool) -> list[str]:
    """``models``, or when none is named and an agent calls a model, the defaults: a real
    model with an API key, else each such agent's mock script."""
    if models:
        return list(models)
    try:
        calls_model = any(build_agent(spelling).uses_model for spelling in agents)
    except ConfigError:
        return []  # check_request names the bad agent
    return default_models(agents, has_api_key) if calls_model else []


def model_pairing(
    request: CheckedRequest, named_models: list[str], has_api_key: bool
) -> dict[str, list[str]] | None:
    """Which models each agent runs: None when every model-calling agent runs all the run's
    models (some were named, or there is an API key); else each its own mock script, and an
    agent without one is refused rather than run under another agent's script."""
    if named_models or has_api_key:
        return None
    own = own_mock_models(list(request.agents))
    lacking = [s for s, a in request.agents.items() if a.uses_model and s not in own]
    if lacking:
        raise ConfigError(
            f"agent {', '.join(map(repr, lacking))} calls a model and has no mock script of its "
            "own, and no model was named: name one with --model (every model-calling agent "
            "runs it), or give an API key"
        )
    return own


def check_models(models: list[str], uses_model: bool, has_api_key: bool) -> None:
    if uses_model and not models:
        raise ConfigError("an agent that calls a model needs at least one model (--model)")
    if not uses_model or has_api_key:
        return
    real = [m for m in models if not m.startswith(MOCK_PREFIX)]
    if real:
        raise ConfigError(
            f"no OpenAI API key configured (BENCHFORGE_OPENAI_API_KEY), so only the mock "
            f"server's models (mock-echo, mock-script:<name>) can run, not: {', '.join(real)}"
        )


def check_dataset_overrides(overrides: dict[str, str], domains: set[str]) -> None:
    """Each override names a domain the tasks use and a location holding a dataset."""
    for domain, location in sorted(overrides.items()):
        if domain not in domains:
            raise ConfigError(
                f"datasets: no task of this run uses domain {domain!r} "
                f"(domains: {', '.join(sorted(domains))})"
            )
        if not dataset_exists(location):
            raise ConfigError(
                f"datasets[{domain}]: {location} is not a dataset (no {LAYOUT.DATASET_RECORD}); "
                "give a folder or s3:// prefix written by `benchforge synth`"
            )


def dataset_exists(location: str) -> bool:
    if location.startswith("s3://"):
        parent, _, name = location.rstrip("/").rpartition("/")
        return open_store(parent).exists(LAYOUT.dataset_record(name))
    return LAYOUT.dataset_record_file(Path(location)).is_file()


def check_request(
    tasks_root: str,
    suites: list[str],
    task_ids: list[str] | None,
    agents: list[str],
    models: list[str],
    datasets: dict[str, str],
    has_api_key: bool,
) -> CheckedRequest:
    """Every cheap check of a run request; raises ConfigError naming the first problem."""
    if not agents:
        raise ConfigError("no agents given")
    built = {spec: build_agent(spec) for spec in agents}
    tasks = suite_tasks(tasks_root, suites, task_ids)
    request = CheckedRequest(tasks=tasks, agents=built)
    check_pairings(tasks, built)  # an agent that acts on none of the tasks
    check_models(models, request.uses_model, has_api_key)
    check_dataset_overrides(datasets, request.domains)
    settings = load_settings()
    protected = protected_paths(settings, tasks, work_root(settings), datasets)
    check_agent_mounts(built, protected, settings.sandbox_allowed_read_only)
    return request

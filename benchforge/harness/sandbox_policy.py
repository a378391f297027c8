"""What a trial's sandbox must not see, and where a run's scratch space lives.

A security policy, kept apart from the flows so it is tested (and read) on its own: every
sandboxed command of a run masks the artifact store, the scratch space (gold builds, other
trials' workspaces), the gold repositories and the task folders (overlays, hidden checks).

An agent's configuration cannot undo that: the host paths it asks to see (``command``'s
``read_only``) are refused before a run starts when they are, lie inside or contain a protected
path (:func:`check_agent_mounts`), unless the operator allowed them in the settings
(``sandbox_allowed_read_only``); the agent checks them again when it builds its sandbox
request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from benchforge.agents.protocol import Agent, MountsHostPaths
from benchforge.core.catalogue import PACKAGE_ROOT, catalogue
from benchforge.core.errors import ConfigError
from benchforge.core.sandbox.exposure import real_path, refusals
from benchforge.core.settings import BenchforgeSettings
from benchforge.evaluation.tasks import LoadedTask
from benchforge.harness.datasets import catalogue_root_of


def work_root(settings: BenchforgeSettings) -> Path:
    """Scratch space (workspaces, gold builds): beside local artifacts, else a user cache."""
    root = settings.artifact_root
    if root.startswith("s3://"):
        return Path.home() / ".cache" / "benchforge" / "work"
    return Path(root).resolve() / "work"


def hidden_paths(settings: BenchforgeSettings, tasks: list[LoadedTask], work: Path) -> list[str]:
    """Masked in every sandbox: artifacts, scratch (gold builds, other trials' workspaces),
    the gold repositories and the task folders (overlays, hidden checks)."""
    paths = {work, *catalogue(settings).protected()}
    if not settings.artifact_root.startswith("s3://"):
        paths.add(Path(settings.artifact_root).resolve())
    for loaded in tasks:
        if loaded.has_repo:
            paths.add(loaded.repo.resolve())
        paths.add(loaded.folder.parent.resolve())
    return sorted(str(p) for p in paths)


def protected_paths(
    settings: BenchforgeSettings,
    tasks: list[LoadedTask],
    work: Path,
    datasets: Mapping[str, str] | None = None,
) -> dict[Path, str]:
    """What no agent configuration may expose, each with what it is: every hidden path (the
    artifact root with its runs, scores, datasets, held-out datasets and secrets; the scratch
    space with scoring work and gold caches; the catalogue; the tasks' gold repositories and
    folders) and every local dataset folder the run names (``datasets``: domain -> location,
    and the specs' own locations). A task's own dataset is still shown to its trials: by the
    harness, not by a config."""
    cat = catalogue(settings)
    names = {
        real_path(cat.tasks_dir): "the catalogue's task specs",
        real_path(cat.repos_dir): "the catalogue's gold dbt repositories",
        real_path(PACKAGE_ROOT): "the installed benchforge package",
    }
    found: dict[Path, str] = {}
    for loaded in tasks:
        found[real_path(loaded.folder.parent)] = f"the task folders of suite {loaded.spec.suite}"
        if loaded.has_repo:
            found[real_path(loaded.repo)] = f"the gold repository of {loaded.spec.id}"
        for ref in loaded.spec.dataset_roles().values():
            location = ref.resolve_location(catalogue_root_of(loaded))
            if location and not location.startswith("s3://"):
                found[real_path(location)] = f"the dataset of {loaded.spec.id}"
    for domain, location in sorted((datasets or {}).items()):
        if not location.startswith("s3://"):
            found[real_path(location)] = f"the {domain} dataset"
    for path in cat.protected():
        found[real_path(path)] = names.get(real_path(path), "a catalogue folder")
    found[real_path(work)] = "the scratch space (workspaces, scoring work, gold caches)"
    if not settings.artifact_root.startswith("s3://"):
        found[real_path(settings.artifact_root)] = (
            "the artifact root (runs and their scores, datasets, held-out datasets, secrets)"
        )
    return found


def check_agent_mounts(
    agents: Mapping[str, Agent], protected: Mapping[Path, str], allowed: Iterable[Path] = ()
) -> None:
    """Refuses (``ConfigError``, naming each offending path and the protected path it collides
    with) any host path an agent's config asks its sandbox to show that is, lies inside or
    contains a ``protected`` path, after resolving symlinks and ``..``; ``allowed`` (the
    operator's ``sandbox_allowed_read_only``, never the agent's config) lets a path through."""
    problems = []
    allowed = list(allowed)
    for spelling, agent in agents.items():
        if isinstance(agent, MountsHostPaths):
            problems += [
                f"agent {spelling}: {why}"
                for why in refusals(agent.config_mounts, protected, allowed)
            ]
    if problems:
        raise ConfigError(
            "an agent config asks its sandbox to show protected host paths: "
            + "; ".join(problems)
            + ". An agent config cannot widen the sandbox; an operator may allow a path "
            "with the sandbox_allowed_read_only setting (BENCHFORGE_SANDBOX_ALLOWED_READ_ONLY)"
        )

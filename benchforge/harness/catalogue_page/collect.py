"""Tasks of a catalogue and their latest results, as :class:`CatalogueEntry` rows.

Every task folder under the tasks root is loaded and validated (an invalid task fails the
page, as it fails ``task validate``: a catalogue page must not quietly drop a task). What
each task scores is read from its files by its family (``TaskFamily.scored_work``), its
difficulty authored or derived (:mod:`.difficulty`), its results read from the run store
(:mod:`.results`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchforge.core.artifacts import LAYOUT
from benchforge.core.records.verification import TaskVerification
from benchforge.evaluation.families import family_of
from benchforge.evaluation.tasks.loader import TASK_FILE, load_tasks
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.catalogue_page.difficulty import difficulty
from benchforge.harness.catalogue_page.models import (
    AgentResult,
    CatalogueEntry,
    DatasetInfo,
)
from benchforge.harness.catalogue_page.results import TaskKey, latest_results, open_runs
from benchforge.harness.verifications import read_verifications

__all__ = [
    "AgentResult",
    "Catalogue",
    "CatalogueEntry",
    "collect_catalogue",
    "entry_of",
    "read_catalogue",
]


def dataset_info(task: LoadedTask) -> DatasetInfo:
    """The spec's dataset: a location when it names one (``DatasetRef.location``, for imported
    datasets), else its domain, scale and seed."""
    ref = task.spec.dataset
    location = getattr(ref, "location", None)
    return DatasetInfo(
        domain=getattr(ref, "domain", None) or task.spec.domain,
        scale=None if location else getattr(ref, "scale", None),
        seed=None if location else getattr(ref, "seed", None),
        location=str(location) if location else None,
    )


def entry_of(
    task: LoadedTask,
    results: list[AgentResult] | None = None,
    verification: TaskVerification | None = None,
) -> CatalogueEntry:
    spec = task.spec
    work = family_of(task).scored_work(task)
    count = work.count if work is not None else None
    level, source = difficulty(spec.tags, count, task.folder / TASK_FILE)
    return CatalogueEntry(
        suite=spec.suite,
        task_id=spec.id,
        version=spec.version,
        family=spec.family,
        title=spec.title,
        domain=spec.domain,
        dataset=dataset_info(task),
        tags=list(spec.tags),
        difficulty=level,
        difficulty_source=source,
        scored_unit=work.unit if work is not None else None,
        scored_names=list(work.names) if work is not None else [],
        nodes_scored=count,
        folder=str(task.folder),
        results=list(results or []),
        verification=verification,
    )


class Catalogue(BaseModel):
    """The entries and where their results came from (None: no run store was read)."""

    model_config = ConfigDict(frozen=True)

    entries: list[CatalogueEntry]
    runs_source: str | None


def read_catalogue(tasks_root: Path, runs_root: Path | str | None) -> Catalogue:
    """The entries of :func:`collect_catalogue` and a line naming the run store read."""
    tasks = sorted(load_tasks(Path(tasks_root)), key=lambda t: (t.spec.suite, t.spec.id))
    by_task: dict[TaskKey, list[AgentResult]] = {}
    verified: dict[str, TaskVerification] = {}
    source: str | None = None
    if runs_root is not None:
        store = open_runs(runs_root)
        by_task, runs = latest_results(store)
        verified = read_verifications(store)
        source = f"{store.uri(LAYOUT.RUNS)} ({runs} run{'s' if runs != 1 else ''})"
    entries = [
        entry_of(t, by_task.get((t.spec.suite, t.spec.id)), verified.get(t.key)) for t in tasks
    ]
    return Catalogue(entries=entries, runs_source=source)


def collect_catalogue(tasks_root: Path, runs_root: Path | str | None) -> list[CatalogueEntry]:
    """One entry per task under ``tasks_root`` (suite, then id), with the latest result of
    each agent from the artifact store at ``runs_root`` (None: results are not read)."""
    return read_catalogue(tasks_root, runs_root).entries

"""``benchforge task validate`` beyond the spec: what a task's authored files get wrong
(problems: validation fails) and what looks unintended (warnings), per family.

A family that reviews its tasks implements :class:`ReviewedFamily` (the DE families: stale or
empty contracts, overlays authored against another repository version, models of weight 0,
mutation catalogues). Whatever the family, a file still holding the scaffold's placeholder
mark is a warning.

Knowing a model's layer means parsing the project with dbt (seconds): :class:`ParsedRepos`
parses each repository version once and keeps the manifest on disk, so validating a catalogue
again costs nothing, and the families skip the parse where the files alone show that no
model can weigh 0.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from benchforge.core.artifacts import LAYOUT
from benchforge.core.errors import BenchforgeError
from benchforge.core.scratch import private_folder
from benchforge.evaluation.dbt.manifest import DbtManifest
from benchforge.evaluation.dbt.project import parse_project
from benchforge.evaluation.gold import repo_version
from benchforge.evaluation.tasks.loader import TASK_FILE, catalogue_root
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.evaluation.tasks.templates import SCAFFOLD_MARK

TEXT_SUFFIXES = {".yaml", ".yml", ".md", ".sql", ".txt", ".csv", ".json", ".py"}


class ParsedRepos:
    """Manifests of dbt projects by repository version, parsed on first use: in memory for
    this process, on disk under ``scratch`` for the next."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self._manifests: dict[str, DbtManifest] = {}

    def manifest(self, repo: Path) -> DbtManifest:
        version = repo_version(repo)
        if version in self._manifests:
            return self._manifests[version]
        stored = self.scratch / "manifests" / f"{version}.json"
        if stored.is_file():
            manifest = DbtManifest.model_validate_json(stored.read_text())
        else:
            work = private_folder(self.scratch / "parse", version)
            try:
                manifest = parse_project(repo, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            stored.parent.mkdir(parents=True, exist_ok=True)
            partial = private_folder(stored.parent, f".{stored.stem}") / stored.name
            partial.write_text(manifest.model_dump_json())
            partial.replace(stored)
            shutil.rmtree(partial.parent, ignore_errors=True)
        self._manifests[version] = manifest
        return manifest


@runtime_checkable
class ReviewedFamily(Protocol):
    """A family whose tasks ``task validate`` reviews beyond their spec."""

    def authoring_problems(self, task: LoadedTask) -> list[str]:
        """What makes the task wrong to hand out (validation and verification fail)."""
        ...

    def authoring_warnings(self, task: LoadedTask, parsed: ParsedRepos) -> list[str]:
        """What is valid but looks unintended."""
        ...


class TaskReview(BaseModel):
    """One task's review: ``problems`` fail validation, ``warnings`` do not."""

    task: str
    file: Path
    problems: list[str] = []
    warnings: list[str] = []


def dataset_problems(task: LoadedTask) -> list[str]:
    """A dataset ``location`` (of ``dataset``, or of each role of ``datasets``) that is not a
    dataset folder (an s3:// prefix is checked when a run reads it: no credentials are needed
    to validate)."""
    problems = []
    for role, ref in task.spec.dataset_roles().items():
        resolved = ref.resolve_location(catalogue_root(task.folder))
        if resolved is None or resolved.startswith("s3://"):
            continue
        field = f"datasets.{role}" if task.spec.datasets else "dataset"
        where = f"{field}.location '{ref.location}' (resolved to {resolved})"
        if not Path(resolved).is_dir():
            problems.append(f"{where} does not exist")
        elif not LAYOUT.dataset_record_file(Path(resolved)).is_file():
            problems.append(
                f"{where} is not a dataset: it has no {LAYOUT.dataset_record_file(Path()).name} "
                "(make one with `benchforge dataset import` or `benchforge synth`)"
            )
    return problems


def review_task(task: LoadedTask, parsed: ParsedRepos) -> TaskReview:
    from benchforge.evaluation.families.registry import family_of

    family = family_of(task)
    review = TaskReview(task=task.key, file=task.folder / TASK_FILE)
    review.problems += dataset_problems(task)
    if isinstance(family, ReviewedFamily):
        review.problems += family.authoring_problems(task)
        try:
            review.warnings += family.authoring_warnings(task, parsed)
        except BenchforgeError as err:  # the project does not parse: dbt's own error
            review.problems.append(str(err))
    review.warnings += placeholder_warnings(task)
    return review


def review_problems(task: LoadedTask) -> TaskReview:
    """The problems part of :func:`review_task` alone: no warnings, so no dbt parse."""
    from benchforge.evaluation.families.registry import family_of

    family = family_of(task)
    review = TaskReview(task=task.key, file=task.folder / TASK_FILE)
    review.problems += dataset_problems(task)
    if isinstance(family, ReviewedFamily):
        review.problems += family.authoring_problems(task)
    return review


class InvalidTasksError(BenchforgeError):
    """Tasks whose review found problems: each line names the task file and the problem."""

    def __init__(self, reviews: list[TaskReview]):
        self.reviews = [r for r in reviews if r.problems]
        lines = [f"{r.file}: {p}" for r in self.reviews for p in r.problems]
        super().__init__(f"{len(self.reviews)} task(s) invalid\n  " + "\n  ".join(lines))


def review_tasks(tasks: list[LoadedTask], scratch: Path) -> list[TaskReview]:
    """Every task's review, parsing each repository version at most once (cached under
    ``scratch``)."""
    parsed = ParsedRepos(scratch)
    return [review_task(task, parsed) for task in tasks]


def placeholder_warnings(task: LoadedTask) -> list[str]:
    """Files of the task folder still holding the scaffold's placeholder mark."""
    marked = sorted(
        path.relative_to(task.folder).as_posix()
        for path in task.folder.rglob("*")
        if path.is_file()
        and path.suffix in TEXT_SUFFIXES
        and SCAFFOLD_MARK in path.read_text(encoding="utf-8", errors="replace")
    )
    if not marked:
        return []
    verb = "holds" if len(marked) == 1 else "hold"
    return [f"{', '.join(marked)} still {verb} {SCAFFOLD_MARK} placeholders: replace them"]

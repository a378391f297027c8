"""Errors of ``da_open`` tasks, raised as the loader's :class:`TaskSpecError` so every problem
with a task's authored files reads ``file: field: problem`` like a validation error of
``task.yaml`` itself, whether it is found while loading or only once data exists (an anchor
whose SQL fails on the gold build)."""

from __future__ import annotations

from pathlib import Path

from benchforge.evaluation.tasks.loader import TASK_FILE, TaskSpecError
from benchforge.evaluation.tasks.models import LoadedTask


def task_file(task: LoadedTask) -> Path:
    """The task's ``task.yaml``: what errors about its fields name."""
    return task.folder / TASK_FILE


def spec_error(file: Path, field: str, problem: str) -> TaskSpecError:
    return TaskSpecError(file, [(field, problem)])

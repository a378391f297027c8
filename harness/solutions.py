"""Reference solutions for the oracle: the gold repository a task is scored against.

de_impl  the gold repository itself
de_evol  gold v1 with the task's gold_v2 overlay applied
de_arch  none (judged on a rubric; no reference blueprint)
"""

from __future__ import annotations

import threading
from pathlib import Path

from benchforge.agents.protocol import TrialKey
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.materials import apply_overlay
from benchforge.evaluation.tasks.models import DeEvolTask, DeImplTask


class GoldSolutions:
    """A ``SolutionProvider``: task folders by task key, v2 repositories built once under
    ``work``. Kept out of every workspace; only the oracle is handed it."""

    def __init__(self, task_folders: dict[tuple[str, str, str], Path], work: Path) -> None:
        self.task_folders = task_folders
        self.work = work
        self._lock = threading.Lock()
        self._built: dict[tuple[str, str, str], Path | None] = {}

    def __call__(self, key: TrialKey) -> Path | None:
        ident = (key.suite, key.task_id, key.task_version)
        with self._lock:
            if ident not in self._built:
                self._built[ident] = self._solution(ident)
            return self._built[ident]

    def _solution(self, ident: tuple[str, str, str]) -> Path | None:
        folder = self.task_folders.get(ident)
        if folder is None:
            return None
        task = load_task(folder)
        spec = task.spec
        repo = task.repo
        if isinstance(spec, DeImplTask):
            return repo
        if isinstance(spec, DeEvolTask):
            dest = self.work / "solutions" / spec.suite / f"{spec.id}@{spec.version}"
            return apply_overlay(repo, task.file(spec.gold_v2), spec.removed, dest)
        return None

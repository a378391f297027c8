"""Reference solutions for the oracle: what a task is scored against, as its family provides
it (``TaskFamily.solution``; for de_impl the gold repository, for de_evol gold v1 with the
task's gold_v2 overlay applied, for de_arch the reference blueprint, for da_open the
reference report rendered on the trial's dataset)."""

from __future__ import annotations

import threading
from pathlib import Path

from benchforge.core.records import TrialKey
from benchforge.evaluation.families import family_of
from benchforge.evaluation.tasks.loader import load_task
from benchforge.harness.datasets import roles_of


class GoldSolutions:
    """A ``SolutionProvider``: task folders by task key, solutions built once (under
    ``work``). Kept out of every workspace; only the oracle is handed it."""

    def __init__(
        self,
        task_folders: dict[tuple[str, str, str], Path],
        work: Path,
        datasets: dict[str, str] | None = None,
    ) -> None:
        self.task_folders = task_folders
        self.work = work
        self.datasets = datasets or {}  # the run's dataset map (task key, and key#role)
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
        dataset = self.datasets.get(task.key)
        roles = {role: Path(folder) for role, folder in roles_of(task, self.datasets).items()}
        return family_of(task).solution(
            task, self.work, Path(dataset) if dataset else None, datasets=roles or None
        )

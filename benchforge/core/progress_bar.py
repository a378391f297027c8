"""The terminal progress bar for dataset generation (rich)."""

from __future__ import annotations

import sys
from types import TracebackType

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from benchforge.core.progress import (
    Planned,
    ProgressEvent,
    RowsGenerated,
    StageDone,
    TableExported,
    TrialDone,
)


class DatasetProgress:
    """Two bars: rows generated (all tables) and tables stressed + exported; for an anonymized
    release (``stages`` given): rows transformed and the release's stages."""

    def __init__(
        self,
        estimated_rows: dict[str, int],
        enabled: bool = True,
        *,
        verb: str = "generating",
        done: str = "rows generated",
        stages: list[str] | None = None,
    ):
        self.verb = verb
        self.done = done
        self.stages = stages
        self.enabled = enabled and sys.stderr.isatty()
        self.tables = len(estimated_rows)
        self.total = max(1, sum(estimated_rows.values()))
        self.progress = Progress(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            disable=not self.enabled,
            transient=False,
        )
        self._rows: TaskID | None = None
        self._export: TaskID | None = None

    def __enter__(self) -> DatasetProgress:
        self.progress.start()
        self._rows = self.progress.add_task(f"{self.verb} rows", total=self.total)
        if self.stages:
            self._export = self.progress.add_task(self.stages[0], total=len(self.stages))
        else:
            self._export = self.progress.add_task("exporting Parquet", total=self.tables)
        return self

    def update(self, event: ProgressEvent) -> None:
        """Listens to dataset events; other events are not this bar's."""
        if isinstance(event, RowsGenerated) and self._rows is not None:
            done = self.progress.tasks[self._rows].completed + event.rows
            self.progress.update(
                self._rows,
                completed=done,
                total=max(self.total, done),
                description=f"{self.verb} {event.table}",
            )
        elif isinstance(event, StageDone) and self._export is not None and self.stages:
            done = self.progress.tasks[self._export].completed + 1
            following = self.stages[int(done)] if done < len(self.stages) else "done"
            self.progress.update(self._export, completed=done, description=following)
        elif isinstance(event, TableExported) and self._export is not None:
            self.progress.update(self._export, advance=1, description=f"exported {event.table}")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None and self._rows is not None:
            done = self.progress.tasks[self._rows].completed
            self.progress.update(self._rows, total=done, description=self.done)
        self.progress.stop()


class TrialProgress:
    """One bar over the trials (or scores) of a run: events ``planned`` then one per trial."""

    def __init__(self, label: str, enabled: bool = True):
        self.enabled = enabled and sys.stderr.isatty()
        self.label = label
        self.progress = Progress(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            disable=not self.enabled,
        )
        self._task: TaskID | None = None
        self.counts: dict[str, int] = {}

    def __enter__(self) -> TrialProgress:
        self.progress.start()
        self._task = self.progress.add_task(self.label, total=None)
        return self

    def update(self, event: ProgressEvent) -> None:
        """Listens to run events; other events are not this bar's."""
        if self._task is None:
            return
        if isinstance(event, Planned):
            self.progress.update(self._task, total=event.pending, completed=0)
        elif isinstance(event, TrialDone):
            status = event.status
            self.counts[status] = self.counts.get(status, 0) + 1
            detail = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
            self.progress.update(self._task, advance=1, description=f"{self.label} ({detail})")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.progress.stop()

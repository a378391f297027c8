"""A family's own section of a run's report (``TaskFamily.run_report``): what the report flow
gives a family (:class:`RunReportContext`) and what the family gives back
(:class:`RunReportSection`).

The context is plain callables, so a family reads the run's results, its tasks' specs and a
judge without importing the harness, the agents layer or Prefect: the caller (the report
flow, through ``benchforge.harness.run_report``) fills them in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from benchforge.core.records import Step, TrialScore
from benchforge.core.records.trials import TrialResult
from benchforge.evaluation.tasks.models import TaskSpecBase

if TYPE_CHECKING:
    from benchforge.evaluation.judges.client import Judge

__all__ = ["RunReportContext", "RunReportSection", "TrajectoryUsage"]


class TrajectoryUsage(BaseModel):
    """What the agents layer reads off a trial's trajectory: model calls and cost by role,
    and the rounds to sufficiency (None: no verifier, or it never found the plan sufficient)."""

    model_config = ConfigDict(frozen=True)

    calls_by_role: dict[str, int] = {}
    cost_by_role: dict[str, float | None] = {}
    rounds: int | None = None


class RunReportSection(BaseModel):
    """A family's part of a run's report: ``markdown`` is appended to the leaderboard's
    markdown; ``pages`` (file name -> contents, e.g. ``dab-report.html``) are written beside
    the leaderboard, in this order."""

    model_config = ConfigDict(frozen=True)

    markdown: str
    pages: dict[str, str] = {}

    @classmethod
    def of_report(cls, stem: str, report: BaseModel, markdown: str, html: str) -> RunReportSection:
        """The usual section: the report's markdown, and ``<stem>.md``, ``<stem>.html`` and
        ``<stem>.json`` (the report model itself)."""
        pages = {
            f"{stem}.md": markdown,
            f"{stem}.html": html,
            f"{stem}.json": report.model_dump_json(indent=1),
        }
        return cls(markdown=markdown, pages=pages)


@dataclass(frozen=True)
class RunReportContext:
    """What a family's ``run_report`` reads of one scored run.

    - ``scores``: the run's scores of this family (never empty);
    - ``read_result``: a trial's stored result by its slug (None: none stored);
    - ``load_spec``: a task's spec by (suite, task_id), from the run's task catalogue;
    - ``open_judge``: opens the configured judge (the mock server's without an API key) and
      closes it on exit; call it only when a judge is needed, it may start a server;
    - ``trajectory_usage``: model calls by role and rounds to sufficiency of a trajectory.
    """

    run_id: str
    scores: Sequence[TrialScore]
    read_result: Callable[[str], TrialResult | None]
    load_spec: Callable[[str, str], TaskSpecBase]
    open_judge: Callable[[], AbstractContextManager[Judge]]
    trajectory_usage: Callable[[Sequence[Step]], TrajectoryUsage]

    def trials(self) -> list[tuple[TrialScore, TrialResult | None]]:
        """Each score with its trial's stored result (None: none stored)."""
        return [(score, self.read_result(score.key.slug)) for score in self.scores]

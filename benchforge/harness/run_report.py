"""What a family's run-report section reads of a stored run (``TaskFamily.run_report``): the
context the report flow passes each family with scores in the run, filled in from the run's
store, its task catalogue, the configured judge and the agents' reading of trajectories."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from benchforge.agents.dsstar.usage import rounds_to_sufficiency, usage_by_role
from benchforge.core.catalogue import catalogue
from benchforge.core.records import Step, TrialScore
from benchforge.core.records.trials import TrialResult
from benchforge.core.settings import BenchforgeSettings
from benchforge.evaluation.families.run_report import RunReportContext, TrajectoryUsage
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.tasks import load_task
from benchforge.evaluation.tasks.models import TaskSpecBase
from benchforge.harness.judging import judge_session
from benchforge.harness.sandbox_policy import work_root
from benchforge.harness.store import RunStore


def run_report_context(
    run: RunStore, settings: BenchforgeSettings, scores: Sequence[TrialScore]
) -> RunReportContext:
    """The context of one family's section: ``scores`` are the run's scores of that family."""

    @cache
    def tasks_root() -> Path:  # only for the families that read their tasks' specs
        return catalogue(settings).path(run.require_spec().tasks_root)

    def read_result(slug: str) -> TrialResult | None:
        return run.read_result(slug) if run.has_result(slug) else None

    def load_spec(suite: str, task_id: str) -> TaskSpecBase:
        return load_task(tasks_root() / suite / task_id).spec

    @contextmanager
    def open_judge() -> Iterator[Judge]:
        with judge_session(settings, work_root(settings)) as (judge, _mock):
            yield judge

    return RunReportContext(
        run_id=run.run_id,
        scores=list(scores),
        read_result=read_result,
        load_spec=load_spec,
        open_judge=open_judge,
        trajectory_usage=trajectory_usage,
    )


def trajectory_usage(steps: Sequence[Step]) -> TrajectoryUsage:
    """Model calls and cost by role (``Step.role``) and the rounds to sufficiency (the
    verifier's verdicts, as ds-star's roles write them)."""
    usage = usage_by_role(steps)
    return TrajectoryUsage(
        calls_by_role={role: u.calls for role, u in usage.items()},
        cost_by_role={role: u.cost_usd for role, u in usage.items()},
        rounds=rounds_to_sufficiency(steps),
    )

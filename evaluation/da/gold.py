"""What a ``da_open`` report is judged against on one dataset.

Preparing it evaluates every anchor on the analysis database first, so a broken anchor fails
the task (naming ``anchors.<name>``) before any judge is paid; then the rubric and the
reference and baseline reports are rendered with those values.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchforge.evaluation.da.analysis import ANALYSIS_DB, analysis_db
from benchforge.evaluation.da.anchors import evaluate_anchors
from benchforge.evaluation.da.render import render_report, resolve_rubric
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.judges.models import AnchorValue, ResolvedRubric
from benchforge.evaluation.tasks.models import LoadedTask


class DaGold(BaseModel):
    """A ``da_open`` task on one dataset: its analysis data, anchor values, resolved rubric,
    the question the judges are told, and the rendered reference and baselines (by id, the
    file stem)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    analysis_dir: Path
    anchors: dict[str, AnchorValue]
    rubric: ResolvedRubric
    question: str
    reference: str
    baselines: dict[str, str]

    @property
    def db(self) -> Path:
        return self.analysis_dir / ANALYSIS_DB


def da_spec(task: LoadedTask) -> DaOpenTask:
    if not isinstance(task.spec, DaOpenTask):
        raise TypeError(f"{task.key} is a {task.spec.family} task, not a da_open task")
    return task.spec


def prepare_da_gold(task: LoadedTask, dataset_dir: Path, work: Path) -> DaGold:
    spec = da_spec(task)
    folder = analysis_db(task, dataset_dir, work)
    anchors = evaluate_anchors(task, folder / ANALYSIS_DB)
    rubric = resolve_rubric(task, anchors)
    reference = render_report(
        task.file(spec.reference).read_text(), anchors, task.file(spec.reference)
    )
    baselines = {
        Path(rel).stem: render_report(task.file(rel).read_text(), anchors, task.file(rel))
        for rel in spec.baselines
    }
    return DaGold(
        analysis_dir=folder,
        anchors=anchors,
        rubric=rubric,
        question=spec.instructions,
        reference=reference,
        baselines=baselines,
    )

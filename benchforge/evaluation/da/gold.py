"""What a ``da_open`` report is judged against on one dataset.

Preparing it evaluates every anchor on the analysis database first, so a broken anchor fails
the task (naming ``anchors.<name>``) before any judge is paid; then its claims (the words that
compare, rank or give a direction, decided on the same values); then the rubric and the
reference and baseline reports are rendered with both. ``claim_check`` is what verification
and ``task prepare`` check on every dataset: no rendered claim contradicts the numbers the
report prints.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchforge.evaluation.da.analysis import ANALYSIS_DB, analysis_db
from benchforge.evaluation.da.anchors import evaluate_anchors
from benchforge.evaluation.da.claims import ClaimError, ClaimValue, claim_problems, evaluate_claims
from benchforge.evaluation.da.errors import spec_error, task_file
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
    claims: dict[str, ClaimValue] = {}
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
    claims = task_claims(task, anchors, folder / ANALYSIS_DB)
    rubric = resolve_rubric(task, anchors, claims)
    reference = render_report(
        task.file(spec.reference).read_text(), anchors, task.file(spec.reference), claims
    )
    baselines = {
        Path(rel).stem: render_report(task.file(rel).read_text(), anchors, task.file(rel), claims)
        for rel in spec.baselines
    }
    return DaGold(
        analysis_dir=folder,
        anchors=anchors,
        claims=claims,
        rubric=rubric,
        question=spec.instructions,
        reference=reference,
        baselines=baselines,
    )


def task_claims(
    task: LoadedTask, anchors: dict[str, AnchorValue], db: Path
) -> dict[str, ClaimValue]:
    """The task's claims decided on ``db`` (an ``analysis.duckdb``) and its anchor values; a
    claim that cannot be decided is a ``TaskSpecError`` naming ``claims.<name>``."""
    try:
        return evaluate_claims(da_spec(task).claims, anchors, db)
    except ClaimError as err:
        raise spec_error(task_file(task), err.field, err.problem) from None


class ClaimCheck(BaseModel):
    """What ``claim_check`` found on one dataset: problems fail verification, warnings are
    near ties a reader could see either way."""

    model_config = ConfigDict(frozen=True)

    claims: int
    problems: list[str]
    warnings: list[str]


def claim_check(task: LoadedTask, gold: DaGold) -> ClaimCheck:
    """The rendered claims of ``gold`` against values read again from its analysis database:
    each claim's words are the ones its SQL values give, and none contradicts the numbers the
    report prints for its anchors (:func:`benchforge.evaluation.da.claims.claim_problems`).
    Every report rendered is also free of unrendered placeholders."""
    spec = da_spec(task)
    fresh = evaluate_anchors(task, gold.db)
    again = task_claims(task, fresh, gold.db)
    problems, warnings = claim_problems(spec.claims, gold.claims, fresh)
    for name, value in again.items():
        old = gold.claims.get(name)
        if old is not None and old.text != value.text:
            problems.append(
                f"claims.{name}: the prepared reports say {old.text!r}, the data now gives "
                f"{value.text!r}"
            )
    for what, text in [("reference", gold.reference), *gold.baselines.items()]:
        if "{{" in text:
            problems.append(f"{what}: a placeholder is left unrendered")
    return ClaimCheck(claims=len(spec.claims), problems=problems, warnings=warnings)

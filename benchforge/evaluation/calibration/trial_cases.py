"""Calibration cases built from judged trials: each rubric item a judge scored on a trial's
output, and each (baseline, GSB dimension) it compared the output on.

What is judged, and against what, is the family's to say (``TaskFamily.judged_output``: the
file its judge reads in a trial's workspace; ``TaskFamily.judged_material``: the question, the
rubric and the baselines, from its gold), so nothing here names a family. Finding the trials,
rebuilding their workspaces and their gold is the caller's (the harness's stored runs).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from benchforge.core.errors import BenchforgeError
from benchforge.core.records import TrialScore
from benchforge.evaluation.calibration.cases import CalibrationCase, CaseSet, JudgedMaterial
from benchforge.evaluation.families.base import TaskFamily
from benchforge.evaluation.judges.models import GSB_DIMENSIONS, ResolvedRubric
from benchforge.evaluation.tasks.models import LoadedTask

__all__ = ["JudgedTrial", "case_set", "judged_text", "trial_cases"]


class JudgedTrial(BaseModel):
    """One judged trial, ready to become cases: its score, its task, the family's material
    for it (from the gold it was scored against) and the output its judge read."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    score: TrialScore
    task: LoadedTask
    material: JudgedMaterial
    output: str


def judged_text(family: TaskFamily, task: LoadedTask, workspace: Path) -> str:
    """The text ``family``'s judge reads in a trial's ``workspace`` ("" when the agent left no
    such file). Raises BenchforgeError for a family that judges nothing."""
    path = family.judged_output(task, workspace)
    if path is None:
        raise BenchforgeError(f"{task.key}: its family {family.name} has no judged output")
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""


def judged_material(family: TaskFamily, task: LoadedTask, gold: Any) -> JudgedMaterial:
    """What ``family``'s judge scores ``task``'s outputs against, from ``gold``. Raises
    BenchforgeError for a family that judges nothing."""
    material = family.judged_material(task, gold)
    if material is None:
        raise BenchforgeError(f"{task.key}: its family {family.name} has no judged rubric")
    return material


def trial_cases(trial: JudgedTrial) -> list[CalibrationCase]:
    """Every case of one judged trial: each rubric item, and each baseline on each GSB
    dimension (families whose judge compares the output with baselines)."""
    score, material = trial.score, trial.material
    key = score.key
    common: dict[str, Any] = {
        "task": trial.task.key,
        "family": score.family,
        "agent": key.agent,
        "model": key.model,
        "trial": key.slug,
        "run_id": score.run_id,
        "output": trial.output,
        "question": material.question,
        "rubric": material.rubric_version,
    }
    cases = [
        CalibrationCase(
            case_id=f"{key.slug}:{item_id}", kind="rubric_item", item_id=item_id, **common
        )
        for item_id in material.item_ids()
    ]
    for baseline_id, baseline in sorted(material.baselines.items()):
        pair = f"{key.slug}:gsb:{baseline_id}"
        cases += [
            CalibrationCase(
                case_id=f"{pair}:{dimension}",
                kind="gsb_pair",
                pair=pair,
                baseline_id=baseline_id,
                baseline=baseline,
                dimension=dimension,
                **(common | {"rubric": None}),
            )
            for dimension in GSB_DIMENSIONS
        ]
    return cases


def case_set(trials: Iterable[JudgedTrial], extra: Iterable[CalibrationCase] = ()) -> CaseSet:
    """The cases of ``trials`` with the rubrics they cite, each rubric once by version, then
    the ``extra`` cases that cite no rubric (``TaskFamily.verdict_cases``: milestones)."""
    rubrics: dict[str, Any] = {}
    flats: dict[str, Any] = {}
    cases: list[CalibrationCase] = []
    for trial in trials:
        rubric = trial.material.rubric
        if isinstance(rubric, ResolvedRubric):
            rubrics[rubric.version] = rubric
        else:
            flats[rubric.version] = rubric
        cases += trial_cases(trial)
    cases += extra
    return CaseSet(rubrics=rubrics, flat_rubrics=flats, cases=cases)

"""The ``explore_milestone`` family: an exploratory question over a noisy exploration
environment (DataClawBench style), scored on the answer (Acc) and on how far the trajectory
got along the gold path (milestones: GPR, TPE; EE on correct trials).

========  ======================================================================================
agent     ``TASK.md`` (the question and output guidelines); data: the task's exploration
          environment built from the dataset, seeded by the dataset's seed (``database/`` CSV
          folders and policy texts; never ``noise.json``, never the clean warehouse); tools: the
          ``explore`` toolset (list_files, read_head, python, return_answer)
gold      each milestone's and answer part's SQL run read-only on the clean dataset
          (:class:`benchforge.evaluation.explore.gold.ExploreGold`): the gold path (steps,
          ordered milestones, difficulty from the step count) and the answer parts
score     Acc by ``score_accuracy`` (numbers by code, text by the judge when not written whole);
          milestones by ``score_milestones`` over the trial's trajectory (the harness passes
          ``trajectory=`` and ``termination=`` because ``scores_trajectory``); EE = N / T;
          the termination mode. A judge that gives no verdict leaves its metrics out
          (unscored, never 0) and the score is not kept for reuse
verify    the reference answer scores Acc 100 (and, with a judge, GPR 100); no answer scores 0
oracle    ``solution``: the reference answer (``ANSWER``): every answer part, then every
          milestone's value, so the milestone judge finds each in the final answer (GPR 100,
          evidence ``final_answer``)
========  ======================================================================================
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from benchforge.core.artifacts import LAYOUT
from benchforge.core.derivations import derivation
from benchforge.core.records import DatasetRecord, Step, TrialScore
from benchforge.core.records.scores import ScoreBreakdown, register_breakdown
from benchforge.core.records.trials import SOLUTION_ANSWER_FILE, Termination
from benchforge.core.records.verification import (
    EMPTY,
    REFERENCE,
    TaskVerification,
    VerificationCheck,
)
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.calibration.cases import CalibrationCase, MilestoneMaterial
from benchforge.evaluation.explore.accuracy import AccuracyScore, score_accuracy
from benchforge.evaluation.explore.gold import ExploreGold, explore_gold, reference_answer
from benchforge.evaluation.explore.metrics import TerminationMode, ee, termination_mode
from benchforge.evaluation.explore.score import MilestoneScore, score_milestones
from benchforge.evaluation.explore.spec import Category, ExploreMilestoneTask
from benchforge.evaluation.families.base import (
    FamilyBase,
    SubmissionScore,
    VerifyOptions,
    spec_as,
)
from benchforge.evaluation.families.registry import register
from benchforge.evaluation.families.run_report import RunReportContext, RunReportSection
from benchforge.evaluation.families.scored_work import ScoredWork
from benchforge.evaluation.gold import dataset_version
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase

FAMILY = "explore_milestone"
METRIC = "accuracy"
SUBMISSION = "answer"
EXPLORE_DATA = "explore-data"
ENVIRONMENT_DIR = "environment"  # what build_environment writes beside noise.json
DERIVATION = "exploration_environment"


@register_breakdown
class ExploreDetail(ScoreBreakdown):
    """This family's score detail: the answer, Acc per part, the milestones, the process."""

    kind: Literal["explore_milestone"] = "explore_milestone"
    given: str | None
    category: Category
    difficulty: Literal["easy", "medium", "hard"]
    gold_steps: int
    agent_steps: int
    accuracy: AccuracyScore
    milestones: MilestoneScore
    milestone_keys: list[str]
    ee: float | None
    termination: TerminationMode | None
    expected: str  # the reference answer


def environment_spec_file(task: LoadedTask) -> Path:
    return task.file(spec_as(task, ExploreMilestoneTask).environment)


def _dataset_seed(dataset_dir: Path) -> int:
    record = DatasetRecord.model_validate_json(
        LAYOUT.dataset_record_file(dataset_dir).read_text(encoding="utf-8")
    )
    return record.seed if record.seed is not None else 0


def exploration_data(dataset_dir: Path, spec_file: Path, work: Path) -> Path:
    """The environment of ``dataset_dir`` built by ``spec_file`` (seeded by the dataset's
    seed), once per (dataset version, seed, spec) under ``work/explore-data``; the agent gets
    ``<key>/environment`` only, ``noise.json`` stays beside it. Built aside and renamed into
    place, so concurrent trials never read a half-written one."""
    seed = _dataset_seed(dataset_dir)
    digest = hashlib.sha256(spec_file.read_bytes()).hexdigest()
    key = hashlib.sha256(f"{dataset_version(dataset_dir)}\0{seed}\0{digest}".encode()).hexdigest()
    root = work / EXPLORE_DATA
    built = root / key[:20]
    if (built / ENVIRONMENT_DIR).is_dir():
        return built / ENVIRONMENT_DIR
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{key[:20]}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        derivation(DERIVATION)(dataset_dir, spec_file, tmp, seed)
        try:
            os.rename(tmp, built)
        except OSError:  # another trial finished first: its copy is the same
            if not (built / ENVIRONMENT_DIR).is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return built / ENVIRONMENT_DIR


class ExploreMilestoneFamily(FamilyBase):
    name: str = FAMILY
    spec_type: type[TaskSpecBase] = ExploreMilestoneTask
    toolset: str = "explore"
    submission: str = SUBMISSION
    heldout: bool = False  # the environment is built from the trial's dataset: gold is on it
    judged: bool = True
    scores_trajectory: bool = True
    detail_template: str = "explore_detail.html.j2"

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        if not isinstance(spec, ExploreMilestoneTask):
            raise TypeError(f"{spec.id} is a {spec.family} task, not an {FAMILY} task")
        path = folder / spec.environment
        return [] if path.is_file() else [("environment", f"missing file '{path}'")]

    def materials(self, task: LoadedTask, dest: Path) -> None:
        (dest / SUBMISSION).mkdir(exist_ok=True)

    def scored_work(self, task: LoadedTask) -> ScoredWork:
        """The milestones, in order, then the answer."""
        spec = spec_as(task, ExploreMilestoneTask)
        return ScoredWork(unit="milestone", names=[m.key for m in spec.milestones])

    def agent_data(
        self, task: LoadedTask, dataset_dir: Path, work: Path, role: str | None = None
    ) -> Path:
        if role not in (None, task.spec.primary_role):
            return dataset_dir
        return exploration_data(dataset_dir, environment_spec_file(task), work)

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> ExploreGold:
        return explore_gold(spec_as(task, ExploreMilestoneTask), dataset_dir)

    def score(
        self,
        task: LoadedTask,
        submission: Path,
        gold: Any,
        dataset_dir: Path,
        work: Path,
        sandbox: SandboxBackend | None = None,
        unsandboxed: bool = False,
        judge: Judge | None = None,
        answer: str | None = None,
        datasets: Mapping[str, Path] | None = None,
        trajectory: Sequence[Step] | None = None,
        termination: Termination | None = None,
    ) -> SubmissionScore:
        spec = spec_as(task, ExploreMilestoneTask)
        expected = gold if isinstance(gold, ExploreGold) else ExploreGold.model_validate(gold)
        if judge is None:
            raise ValueError(f"{task.key}: {FAMILY} is judged; no judge given")
        accuracy = score_accuracy(answer, expected.parts, question=expected.question, judge=judge)
        milestones = score_milestones(
            judge,
            question=expected.question,
            gold=expected.path,
            trajectory=list(trajectory or []),
            answer=answer,
        )
        n = len(expected.path.steps)
        efficiency = ee(n, milestones.agent_steps) if accuracy.correct else None
        mode = (
            termination_mode(termination, answer, bool(accuracy.correct), expected.fallback)
            if termination is not None and accuracy.correct is not None
            else None
        )
        metrics: dict[str, float] = {}
        if accuracy.accuracy is not None:
            metrics[METRIC] = 100.0 * accuracy.accuracy
        if milestones.gpr is not None:
            metrics["gpr"] = 100.0 * milestones.gpr
        if milestones.tpe is not None:
            metrics["tpe"] = 100.0 * milestones.tpe
        if efficiency is not None:
            metrics["ee"] = 100.0 * efficiency
        unscored = [
            what
            for what, status in (("accuracy", accuracy.status), ("milestones", milestones.status))
            if status == "unscored"
        ]
        detail = f"unscored: {', '.join(unscored)}" if unscored else None
        if detail is None and not accuracy.correct:
            failed = [p.name for p in accuracy.parts if not p.passed]
            detail = f"wrong or missing: {', '.join(failed)}"
        return SubmissionScore(
            metrics=metrics,
            primary=METRIC,
            success=bool(accuracy.correct),
            detail=detail,
            reusable=not unscored,
            breakdown=ExploreDetail(
                given=answer,
                category=spec.category,
                difficulty=expected.path.difficulty,
                gold_steps=n,
                agent_steps=milestones.agent_steps,
                accuracy=accuracy,
                milestones=milestones,
                milestone_keys=[m.key for m in expected.path.milestones],
                ee=efficiency,
                termination=mode,
                expected=reference_answer(expected),
            ),
        )

    def verdict_cases(
        self, task: LoadedTask, gold: Any, score: TrialScore
    ) -> list[CalibrationCase]:
        """One case per milestone the judge decided on the trial (a trial whose milestones
        went unscored has none): the question, the gold path, the excerpts the judge was
        shown, the final answer; the cases of a trial share one judge call."""
        detail = score.breakdown
        if not isinstance(detail, ExploreDetail) or detail.milestones.status != "scored":
            return []
        expected = gold if isinstance(gold, ExploreGold) else ExploreGold.model_validate(gold)
        material = MilestoneMaterial(
            gold=expected.path,
            excerpts=detail.milestones.excerpts,
            steps=detail.milestones.agent_steps,
        )
        key = score.key
        call = f"{key.slug}:milestones"
        return [
            CalibrationCase(
                case_id=f"{call}:{milestone.key}",
                kind="milestone",
                task=task.key,
                family=score.family,
                agent=key.agent,
                model=key.model,
                trial=key.slug,
                run_id=score.run_id,
                question=expected.question,
                output=detail.given or "",
                milestone_key=milestone.key,
                call=call,
                milestones=material,
            )
            for milestone in expected.path.milestones
        ]

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        """No files: the reference answer (``ANSWER``), from the gold on the trial's dataset."""
        if dataset_dir is None:
            return None
        gold = self.prepare_gold(task, dataset_dir, work, datasets)
        folder = work / "explore-solutions" / task.spec.suite / task.spec.id / gold.dataset_version
        folder.mkdir(parents=True, exist_ok=True)
        (folder / SOLUTION_ANSWER_FILE).write_text(reference_answer(gold) + "\n")
        return folder

    def verify(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        options: VerifyOptions,
        judge: Judge | None = None,
    ) -> TaskVerification:
        gold = self.prepare_gold(task, dataset_dir, work)
        if judge is None:
            raise ValueError(f"{task.key}: {FAMILY} is judged; verification needs a judge")

        def scored(answer: str | None) -> SubmissionScore:
            return self.score(
                task, work, gold, dataset_dir, work, judge=judge, answer=answer, trajectory=[]
            )

        reference, empty = scored(reference_answer(gold)), scored(None)
        checks = [
            VerificationCheck.of_score(
                "reference accuracy", REFERENCE, reference.metrics.get(METRIC), 100.0
            ),
            VerificationCheck.of_score(
                "reference milestones", REFERENCE, reference.metrics.get("gpr"), 100.0
            ),
            VerificationCheck.of_score("empty accuracy", EMPTY, empty.metrics.get(METRIC), 0.0),
            VerificationCheck.of_score("empty milestones", EMPTY, empty.metrics.get("gpr"), 0.0),
        ]
        return TaskVerification(
            task=task.key,
            dataset=str(dataset_dir),
            checks=checks,
            problems=[f"{c.name} scores {c.observed}" for c in checks if not c.passed],
        )

    def run_report(self, context: RunReportContext) -> RunReportSection | None:
        # the report's modules (plots, numpy) load only when a report is built
        from benchforge.evaluation.explore.pages import run_section

        return run_section(context)


register(ExploreMilestoneFamily())

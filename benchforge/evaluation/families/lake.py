"""The ``lake_pipeline`` family: a question over a data lake (KramaBench style), in one setting,
answered with a typed value and the pipeline code that computed it.

========  ======================================================================================
agent     ``TASK.md``: the instructions, which state the question (every sub-task's in the
          ``subtasks`` mode; ``task validate`` checks they do); data: the files of the task's
          setting of the lake built from the dataset (seeded by the dataset's seed): every
          file (``full``), the gold files (``oracle``), the gold files and seeded distractors
          (``trimmed``), every file of the obscured lake (``obscured``); never the record, the
          gold or the reference pipeline; tools: the ``lake`` toolset (list_files, read_file,
          execute_python, submit_answer)
gold      the question's reference pipeline (``questions/<name>.py``) run over the gold files
          of the setting's lake (:mod:`benchforge.evaluation.lake.gold`): the answer and every
          sub-task's, recomputed on every seed and setting, the obscured one included
score     ``accuracy``: ``score_answer`` x 100 (the paraphrase judge for approximate strings);
          in the ``subtasks`` mode the mean over the sub-tasks of a JSON object's answers.
          ``pipeline_design``: ``judge_pipeline_design`` on the submitted code
          (``answer/pipeline.py``, else ds-star's ``ds-star/final.py``) x 100. A missing answer
          scores 0 and says so; a judge failure or a metric error raises (a scoring error,
          never a 0)
verify    the reference answer 100, no answer 0, and per answer type a wrong-but-close answer
          scoring as documented (``close_answer``)
oracle    ``solution``: the reference answer (``ANSWER``) and the reference code as
          ``pipeline.py``
========  ======================================================================================
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from benchforge.core.records.scores import ScoreBreakdown, register_breakdown
from benchforge.core.records.trials import SOLUTION_ANSWER_FILE
from benchforge.core.records.verification import (
    EMPTY,
    REFERENCE,
    TaskVerification,
    VerificationCheck,
)
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.families.base import (
    FamilyBase,
    SubmissionScore,
    VerifyOptions,
    spec_as,
)
from benchforge.evaluation.families.registry import register
from benchforge.evaluation.families.run_report import RunReportContext, RunReportSection
from benchforge.evaluation.families.scored_work import ScoredWork
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.lake.answers import AnswerType, GoldAnswer, Value
from benchforge.evaluation.lake.data import (
    LakeRecordInfo,
    gold_files,
    setting_files,
    setting_folder,
)
from benchforge.evaluation.lake.gold import (
    LakeGold,
    lake_gold,
    lake_spec_file,
    load_question,
    question_file,
    reference_file,
    task_lake,
)
from benchforge.evaluation.lake.judges import (
    JudgeParaphrase,
    PipelineDesignScore,
    judge_pipeline_design,
)
from benchforge.evaluation.lake.scorers import (
    AnswerScore,
    ParaphraseJudge,
    ScoreStatus,
    score_answer,
)
from benchforge.evaluation.lake.spec import LakePipelineTask
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase

FAMILY = "lake_pipeline"
ACCURACY = "accuracy"
PIPELINE_DESIGN = "pipeline_design"
SUBMISSION = "answer"
PIPELINE_FILE = "pipeline.py"
DSSTAR_FINAL = "ds-star/final.py"  # ds-star keeps its final script there (agents.dsstar)
CLOSE_CHECK = "close answer"


class LakeScoreError(Exception):
    """An answer the scorer could not score (a judge failure, a metric error): the trial gets
    a scoring error, never a 0."""


@register_breakdown
class LakeAnswerDetail(ScoreBreakdown):
    """This family's score detail: the answer as given, its score and the gold; per sub-task in
    the ``subtasks`` mode; the pipeline-design verdicts; the gold files."""

    kind: Literal["lake_answer"] = "lake_answer"
    setting: str
    mode: str
    answer_type: AnswerType
    given: str | None
    answer: AnswerScore | None = None
    expected: Value
    subtasks: dict[str, AnswerScore] = {}
    pipeline: PipelineDesignScore | None = None
    pipeline_file: str | None = None
    gold_files: list[str]
    lake_seed: int


def answer_text(value: Value) -> str:
    """A gold value as the oracle states it (a list as JSON)."""
    if isinstance(value, list):
        return json.dumps(value)
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() else repr(value)
    return value


class LakePipelineFamily(FamilyBase):
    name: str = FAMILY
    spec_type: type[TaskSpecBase] = LakePipelineTask
    toolset: str = "lake"
    submission: str = SUBMISSION
    heldout: bool = False  # the agent's lake is built from the trial's dataset: gold on the same
    judged: bool = True  # approximate strings and the pipeline design
    detail_template: str = "lake_detail.html.j2"

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        if not isinstance(spec, LakePipelineTask):
            raise TypeError(f"{spec.id} is a {spec.family} task, not a lake_pipeline task")
        problems: list[tuple[str, str]] = []
        if not (folder / spec.lake).is_file():
            problems.append(("lake", f"missing file '{folder / spec.lake}'"))
        if not (folder / spec.question).is_file():
            return [*problems, ("question", f"missing file '{folder / spec.question}'")]
        task = LoadedTask(spec=spec, folder=folder)
        try:
            question = load_question(task)
        except ValueError as exc:
            return [*problems, ("question", f"{folder / spec.question}: {exc}")]
        asked = _words(spec.instructions)
        stated = (
            [s.question for s in question.subtasks]
            if spec.mode == "subtasks"
            else [question.question]
        )
        problems += [
            ("instructions", f"the instructions do not ask {text!r} ({folder / spec.question})")
            for text in stated
            if _words(text) not in asked
        ]
        if not reference_file(task).is_file():
            problems.append(("question", f"missing reference '{reference_file(task)}'"))
        return problems

    def materials(self, task: LoadedTask, dest: Path) -> None:
        (dest / SUBMISSION).mkdir(exist_ok=True)

    def scored_work(self, task: LoadedTask) -> ScoredWork:
        """One answer of the question's type (the sub-tasks' in the ``subtasks`` mode)."""
        question = load_question(task)
        if spec_as(task, LakePipelineTask).mode == "subtasks":
            return ScoredWork(unit="sub-task", names=[s.id for s in question.subtasks])
        return ScoredWork(unit="answer", names=[question.answer_type.value])

    def agent_data(
        self, task: LoadedTask, dataset_dir: Path, work: Path, role: str | None = None
    ) -> Path:
        spec = spec_as(task, LakePipelineTask)
        lake = task_lake(task, dataset_dir, work)
        gold = _gold_paths(task, lake.record)
        paths = setting_files(lake.record, gold, spec.setting, spec.trimmed_distractors)
        return setting_folder(lake, spec.setting, paths)

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> LakeGold:
        return lake_gold(task, dataset_dir, work)

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
    ) -> SubmissionScore:
        spec = spec_as(task, LakePipelineTask)
        expected = gold if isinstance(gold, LakeGold) else LakeGold.model_validate(gold)
        paraphrase = JudgeParaphrase(judge) if judge is not None else None
        detail = LakeAnswerDetail(
            setting=spec.setting,
            mode=spec.mode,
            answer_type=expected.answer.answer_type,
            given=answer,
            expected=expected.answer.value,
            gold_files=expected.gold_files,
            lake_seed=expected.lake_seed,
        )
        if spec.mode == "subtasks":
            scores = _subtask_scores(answer, expected, paraphrase)
            accuracy = 100.0 * sum(s.score or 0.0 for s in scores.values()) / len(scores)
            detail = detail.model_copy(update={"subtasks": scores})
            missing = [k for k, s in scores.items() if s.status is not ScoreStatus.SCORED]
            why = f"sub-tasks not answered or unreadable: {', '.join(missing)}" if missing else ""
        else:
            scored = _answer_score(answer, expected.answer, expected.question, paraphrase)
            accuracy = 100.0 * (scored.score or 0.0)
            detail = detail.model_copy(update={"answer": scored})
            why = "" if scored.score == 1.0 else f"{scored.status.value}: {scored.detail}"
        metrics = {ACCURACY: accuracy}
        reusable = True
        code_file = pipeline_code(submission)
        if judge is not None and spec.mode == "task":
            code = code_file.read_text(encoding="utf-8", errors="replace") if code_file else ""
            design = judge_pipeline_design(
                judge,
                question=expected.question,
                functionalities=expected.key_functionalities,
                code=code,
            )
            detail = detail.model_copy(
                update={
                    "pipeline": design,
                    "pipeline_file": code_file.relative_to(submission.parent).as_posix()
                    if code_file
                    else None,
                }
            )
            if design.score is not None:
                metrics[PIPELINE_DESIGN] = 100.0 * design.score
            else:
                reusable = False  # the judge gave no verdict: try again on the next scoring
        return SubmissionScore(
            metrics=metrics,
            primary=ACCURACY,
            success=accuracy == 100.0,
            detail=why or None,
            breakdown=detail,
            reusable=reusable,
        )

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        """The reference answer (``ANSWER``) on the trial's lake, and the reference pipeline as
        ``pipeline.py``."""
        if dataset_dir is None:
            return None
        gold = self.prepare_gold(task, dataset_dir, work)
        spec = spec_as(task, LakePipelineTask)
        folder = work / "lake-solutions" / spec.suite / spec.id / f"seed-{gold.lake_seed}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / SOLUTION_ANSWER_FILE).write_text(reference_answer(spec, gold) + "\n")
        (folder / PIPELINE_FILE).write_text(reference_file(task).read_text(encoding="utf-8"))
        return folder

    def verify(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        options: VerifyOptions,
        judge: Judge | None = None,
    ) -> TaskVerification:
        spec = spec_as(task, LakePipelineTask)
        gold = self.prepare_gold(task, dataset_dir, work)
        paraphrase = JudgeParaphrase(judge) if judge is not None else None

        def scored(answer: str | None) -> float | None:
            if spec.mode == "subtasks":
                scores = _subtask_scores(answer, gold, paraphrase)
                return 100.0 * sum(s.score or 0.0 for s in scores.values()) / len(scores)
            result = score_answer(answer, gold.answer, question=gold.question, judge=paraphrase)
            return None if result.score is None else 100.0 * result.score

        checks = [
            VerificationCheck.of_score(
                "reference", REFERENCE, scored(reference_answer(spec, gold)), 100.0
            ),
            VerificationCheck.of_score("no answer", EMPTY, scored(None), 0.0),
        ]
        if spec.mode == "task":
            close = close_answer(gold.answer, judged=paraphrase is not None)
            if close is not None:
                text, expected_score = close
                check = VerificationCheck.of_score(CLOSE_CHECK, CLOSE_CHECK, scored(text), 0.0)
                checks.append(
                    check.model_copy(
                        update={
                            "expected": f"{expected_score:.4g}",
                            "passed": check.score is not None
                            and abs(check.score - expected_score) < 1e-6,
                            "detail": f"{gold.answer.answer_type.value}: {text[:80]}",
                        }
                    )
                )
        del options
        return TaskVerification(
            task=task.key,
            dataset=str(dataset_dir),
            checks=checks,
            problems=[f"{c.name} scores {c.observed}" for c in checks if not c.passed],
        )

    def run_report(self, context: RunReportContext) -> RunReportSection | None:
        # the report's modules (plots, numpy) load only when a report is built
        from benchforge.evaluation.lake.report import run_section

        return run_section(context)


def reference_answer(spec: LakePipelineTask, gold: LakeGold) -> str:
    if spec.mode == "subtasks":
        return json.dumps({k: g.value for k, g in gold.subtasks.items()})
    return answer_text(gold.answer.value)


def close_answer(gold: GoldAnswer, *, judged: bool) -> tuple[str, float] | None:
    """A wrong-but-close answer for the gold's type and the score (0-100) it must get:

    - numeric exact: the gold + 1 % scores 0 (no tolerance beyond 1e-4 relative);
    - numeric approximate: the gold x 1.1 scores 100 / 1.1 (1 / (1 + RAE));
    - string exact: the gold with its last character dropped scores 0;
    - string approximate: the gold with a word added scores 0 (the judge says it is not the
      same; checked only with a judge);
    - lists: the gold without its last item scores the F1 of n - 1 of n, 2(n-1)/(2n-1);
      a one-item list, that item changed, 0.
    """
    kind, value = gold.answer_type, gold.value
    if kind is AnswerType.NUMERIC_EXACT and isinstance(value, float):
        wrong = value * 1.01 if value else 1.0
        return answer_text(wrong), 0.0
    if kind is AnswerType.NUMERIC_APPROXIMATE and isinstance(value, float):
        return (answer_text(value * 1.1), 100.0 / 1.1) if value else None
    if kind is AnswerType.STRING_EXACT and isinstance(value, str) and len(value) > 1:
        return value[:-1], 0.0
    if kind is AnswerType.STRING_APPROXIMATE and isinstance(value, str):
        return (f"{value} region headquarters", 0.0) if judged else None
    if isinstance(value, list) and value:
        n = len(value)
        if n == 1:
            return json.dumps(["nothing like it"]), 0.0
        return json.dumps(value[:-1]), 100.0 * 2 * (n - 1) / (2 * n - 1)
    return None


def pipeline_code(submission: Path) -> Path | None:
    """The agent's pipeline: ``answer/pipeline.py``, else ds-star's final script."""
    for candidate in (submission / PIPELINE_FILE, submission.parent / DSSTAR_FINAL):
        if candidate.is_file():
            return candidate
    return None


def _answer_score(
    answer: str | None, gold: GoldAnswer, question: str, judge: ParaphraseJudge | None
) -> AnswerScore:
    scored = score_answer(answer, gold, question=question, judge=judge)
    if scored.status in (ScoreStatus.JUDGE_FAILED, ScoreStatus.METRIC_ERROR):
        raise LakeScoreError(f"the answer was not scored ({scored.status.value}): {scored.detail}")
    return scored


def _subtask_scores(
    answer: str | None, gold: LakeGold, judge: ParaphraseJudge | None
) -> dict[str, AnswerScore]:
    """Each sub-task's answer, read from a JSON object by id (a missing id: no answer)."""
    given: dict[str, Any] = {}
    if answer is not None:
        try:
            parsed = json.loads(answer)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            given = parsed
    scores = {}
    for key, expected in gold.subtasks.items():
        value = given.get(key)
        text = None if value is None else value if isinstance(value, str) else json.dumps(value)
        scores[key] = _answer_score(text, expected, gold.subtask_questions[key], judge)
    return scores


def _words(text: str) -> str:
    return " ".join(text.split())


def _gold_paths(task: LoadedTask, record: LakeRecordInfo) -> list[str]:
    return gold_files(record, load_question(task).data_sources)


__all__ = ["LakeAnswerDetail", "LakePipelineFamily", "lake_spec_file", "question_file"]

register(LakePipelineFamily())

"""The ``da_open`` family: an open business question over analysis-ready marts, answered by a
markdown report that LLM judges score (after DAComp's DA tasks).

========  ======================================================================================
agent     ``question.md`` + an empty ``report/`` folder (the submission); data: the task's
          marts in ``analysis.duckdb`` (:func:`benchforge.evaluation.da.analysis.analysis_db`)
gold      anchors evaluated on that database, the rubric and reports rendered with them
          (:class:`benchforge.evaluation.da.gold.DaGold`)
score     Score_da = a * rubric + (1 - a) * GSB (the judges of
          :mod:`benchforge.evaluation.judges`); an empty or missing report is 0, unjudged
verify    the reference scores >= 90, the empty report 0, the reference with every anchor
          wrong loses exactly the accuracy items citing them, and no rendered claim
          contradicts the numbers the reports print (on every dataset verified)
oracle    ``solution``: the reference rendered on the trial's dataset
========  ======================================================================================

The reference, baselines, anchors and rubric never reach a workspace: the agent sees the
question, the names of its tables and the data.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from benchforge.core.errors import UnsupportedTaskError
from benchforge.core.records.verification import HACKS, TaskVerification, VerificationCheck
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.calibration.cases import JudgedMaterial
from benchforge.evaluation.da.analysis import analysis_db
from benchforge.evaluation.da.anchors import perturbed
from benchforge.evaluation.da.checks import file_problems as da_file_problems
from benchforge.evaluation.da.gold import DaGold, claim_check, da_spec, prepare_da_gold
from benchforge.evaluation.da.render import WRONG_ANCHOR_FACTOR, render_report
from benchforge.evaluation.da.spec import DaOpenTask
from benchforge.evaluation.families.base import (
    FamilyBase,
    PreparedTask,
    SubmissionScore,
    VerifyOptions,
    spec_as,
)
from benchforge.evaluation.families.da_hacks import run_judged_hacks
from benchforge.evaluation.families.registry import register
from benchforge.evaluation.families.scored_work import ScoredWork
from benchforge.evaluation.gold import dataset_version
from benchforge.evaluation.judges.breakdown import JudgeRecord, judge_record_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.gsb import judge_gsb, score_da
from benchforge.evaluation.judges.hacks import load_judged_hacks
from benchforge.evaluation.judges.length import count_words
from benchforge.evaluation.judges.models import GsbScore, JudgedVerification, RubricScore
from benchforge.evaluation.judges.record import judge_record
from benchforge.evaluation.judges.render import rubric_markdown
from benchforge.evaluation.judges.rubric import judge_rubric
from benchforge.evaluation.judges.sanitize import sanitize_output
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase

PRIMARY_DA_METRIC = "score_da"
SUCCESS_SCORE = 90.0
REFERENCE_MIN_SCORE = 90.0
QUESTION_FILE = "question.md"
REPORT_DIR = "report"


class JudgedReport(BaseModel):
    """A report's score and the judges' verdicts behind it (verification compares items)."""

    model_config = ConfigDict(frozen=True)

    score: SubmissionScore
    rubric: RubricScore | None = None
    gsb: GsbScore | None = None


class DaOpenFamily(FamilyBase):
    name: str = "da_open"
    spec_type: type[TaskSpecBase] = DaOpenTask
    toolset: str = "da"
    submission: str = REPORT_DIR
    heldout: bool = False
    verifiable: bool = True
    judged: bool = True
    prepares: bool = True
    verifies_on_twin: bool = True  # the claims against the data, on a second seed
    detail_template: str = "judged_detail.html.j2"

    def scored_work(self, task: LoadedTask) -> ScoredWork:
        rubric = spec_as(task, DaOpenTask).rubric
        return ScoredWork(unit="rubric items", names=[item.id for item in rubric.items()])

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        if not isinstance(spec, DaOpenTask):
            raise TypeError(f"{spec.id} is a {spec.family} task, not a da_open task")
        return da_file_problems(spec, folder, root)

    def materials(self, task: LoadedTask, dest: Path) -> None:
        spec = da_spec(task)
        report = dest / REPORT_DIR
        report.mkdir(parents=True, exist_ok=True)
        (report / ".keep").write_text("")
        (dest / QUESTION_FILE).write_text(question_text(spec))

    def agent_data(
        self, task: LoadedTask, dataset_dir: Path, work: Path, role: str | None = None
    ) -> Path:
        if role not in (None, task.spec.primary_role):
            return dataset_dir
        return analysis_db(task, dataset_dir, work)

    def prepare(self, task: LoadedTask, dataset_dir: Path, work: Path, dest: Path) -> PreparedTask:
        """The anchors evaluated on ``dataset_dir``: the rubric with their values
        (``rubric.md``), the reference report, ``anchors.json`` and ``claims.json``; the
        rendered claims checked against the data."""
        gold = self.prepare_gold(task, dataset_dir, work)
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "rubric.md").write_text(rubric_markdown(gold.rubric), encoding="utf-8")
        (dest / "reference.md").write_text(gold.reference, encoding="utf-8")
        anchors = {k: v.model_dump(mode="json") for k, v in gold.anchors.items()}
        (dest / "anchors.json").write_text(json.dumps(anchors, indent=2) + "\n")
        claims = {k: v.model_dump(mode="json") for k, v in gold.claims.items()}
        (dest / "claims.json").write_text(json.dumps(claims, indent=2) + "\n")
        check = claim_check(task, gold)
        return PreparedTask(
            values=", ".join(f"{k}={v.text}" for k, v in sorted(gold.anchors.items())),
            lines=[
                f"rubric {gold.rubric.version} -> {dest}",
                f"claims: {check.claims} rendered, {len(check.problems)} contradicted, "
                f"{len(check.warnings)} near ties",
            ],
            problems=check.problems,
            warnings=check.warnings,
        )

    def judged_output(self, task: LoadedTask, workspace: Path) -> Path:
        return workspace / self.submission / da_spec(task).report

    def judged_material(self, task: LoadedTask, gold: Any) -> JudgedMaterial:
        if not isinstance(gold, DaGold):
            raise TypeError(f"{task.key}: a da_open gold is a DaGold, not {type(gold).__name__}")
        return JudgedMaterial(
            question=gold.question, rubric=gold.rubric, baselines=dict(gold.baselines)
        )

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> DaGold:
        return prepare_da_gold(task, dataset_dir, work)

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
        """Judges ``submission/<report>`` (no candidate code runs, so no sandbox is used)."""
        if judge is None:
            raise UnsupportedTaskError(f"{task.key}: da_open reports are judged; no judge given")
        if not isinstance(gold, DaGold):
            raise TypeError(f"{task.key}: the gold of a da_open task is a DaGold, not {gold!r}")
        report = submission / da_spec(task).report
        text = report.read_text(errors="replace") if report.is_file() else ""
        return self.judge_report(task, text, gold, judge).score

    def judge_report(self, task: LoadedTask, text: str, gold: DaGold, judge: Judge) -> JudgedReport:
        """Both judges on one report text, with a fresh ledger so the record's cost is this
        report's alone. An empty report scores 0 without a judge call."""
        spec = da_spec(task)
        if not text.strip():
            return JudgedReport(score=_empty_score(spec.report))
        judge = judge.for_task()
        limit = spec.max_report_words
        rubric = judge_rubric(judge, gold.rubric, text, question=gold.question, max_words=limit)
        gsb = judge_gsb(
            judge,
            text,
            gold.baselines,
            question=gold.question,
            max_words=limit,
            expected_words=count_words(sanitize_output(gold.reference, max_words=limit).text),
        )
        alpha = spec.gsb_alpha if spec.gsb_alpha is not None else judge.settings.gsb_alpha
        combined = score_da(rubric, gsb, alpha)
        record = judge_record(
            judge=judge,
            rubric=rubric,
            gsb=gsb,
            resolved=gold.rubric,
            output=f"{REPORT_DIR}/{spec.report}",
        )
        metrics = _metrics(combined, rubric, gsb)
        return JudgedReport(
            score=SubmissionScore(
                metrics=metrics,
                primary=PRIMARY_DA_METRIC,
                success=metrics.get(PRIMARY_DA_METRIC, 0.0) >= SUCCESS_SCORE,
                sandbox=None,
                detail=_detail(rubric, gsb),
                breakdown=record,
                reusable=not record.unscored,
            ),
            rubric=rubric,
            gsb=gsb,
        )

    def verify(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        options: VerifyOptions,
        judge: Judge | None = None,
    ) -> TaskVerification:
        """The reference scores >= 90, the empty report 0, and the reference with every numeric
        anchor multiplied by 1.37 loses exactly the anchored accuracy items of the paths the
        reference was judged on. Anchors and claims are evaluated (and fail) before any judge
        call; no rendered claim may contradict the numbers the reports print, on
        ``dataset_dir`` and on each of ``options.claim_datasets`` (no judge needed there)."""
        if judge is None:
            raise UnsupportedTaskError(f"{task.key}: verifying a da_open task needs a judge")
        spec = da_spec(task)
        gold = self.prepare_gold(task, dataset_dir, work)
        claim_problems = [f"claim: {p}" for p in claim_check(task, gold).problems]
        for other in options.claim_datasets:
            found = claim_check(task, self.prepare_gold(task, other, work)).problems
            claim_problems += [f"claim on {other.name}: {p}" for p in found]
        wrong_anchors = perturbed(gold.anchors, spec.anchors, WRONG_ANCHOR_FACTOR)
        changed = {n for n, a in wrong_anchors.items() if a.text != gold.anchors[n].text}
        wrong_text = render_report(
            task.file(spec.reference).read_text(),
            wrong_anchors,
            task.file(spec.reference),
            gold.claims,
        )
        reference = self.judge_report(task, gold.reference, gold, judge)
        empty = self.judge_report(task, "", gold, judge)
        wrong = self.judge_report(task, wrong_text, gold, judge)
        expected = expected_lost(gold, reference.rubric, changed)
        lost = lost_items(gold, reference.rubric, wrong.rubric)
        ref_score = reference.score.metrics.get(PRIMARY_DA_METRIC)
        empty_score = empty.score.metrics.get(PRIMARY_DA_METRIC)
        records = [
            j for r in (reference, empty, wrong) if (j := judge_record_of(r.score.breakdown))
        ]
        judged = JudgedVerification(
            reference_score=ref_score,
            empty_score=empty_score,
            wrong_anchor_score=wrong.score.metrics.get(PRIMARY_DA_METRIC),
            expected_lost=expected,
            lost=lost,
            unscored=list(reference.rubric.unscored) if reference.rubric else [],
            judge_requests=sum(r.requests for r in records),
        )
        problems: list[str] = list(claim_problems)
        if ref_score is None or ref_score < REFERENCE_MIN_SCORE:
            problems.append(f"the reference report scores {ref_score} (< {REFERENCE_MIN_SCORE:g})")
        if empty_score != 0.0:
            problems.append(f"the empty report scores {empty_score}")
        if judged.unscored:
            problems.append(f"the reference left items unscored: {', '.join(judged.unscored)}")
        if lost != expected:
            problems.append(
                f"the wrong-anchor report lost {lost or 'nothing'}, expected exactly {expected}"
            )
        hack_checks: list[VerificationCheck] = []
        if options.hacks:
            hacks = run_judged_hacks(
                lambda text: self.judge_report(task, text, gold, judge),
                task,
                gold,
                judge,
                load_judged_hacks(),
            )
            judged = judged.model_copy(
                update={
                    "hacks_tried": len(hacks.outcomes),
                    "hacks_failed": [o.hack_id for o in hacks.failed],
                }
            )
            problems += [
                f"judged reward hack {o.hack_id}: {'; '.join(o.problems)}" for o in hacks.failed
            ]
            hack_checks = [
                VerificationCheck(
                    name=f"reward hack {o.hack_id}",
                    group=HACKS,
                    expected="no more than its honest source",
                    observed="held" if o.held else "; ".join(o.problems),
                    passed=o.held,
                )
                for o in hacks.outcomes
            ]
        checks = judged.checks(REFERENCE_MIN_SCORE)
        checks.append(
            VerificationCheck(
                name="claims",
                group="claims",
                expected="no claim contradicts the data",
                observed=f"{len(claim_problems)} contradicted",
                passed=not claim_problems,
            )
        )
        checks += hack_checks
        return TaskVerification(
            task=task.key, dataset=str(dataset_dir), checks=checks, problems=problems, record=judged
        )

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        """The oracle's submission folder on ``dataset_dir`` (the trial's dataset): the
        reference rendered with that dataset's anchor values, as ``<report>``. Without a
        dataset there is none: the template's ``{{anchor}}`` placeholders are no answer."""
        if dataset_dir is None:
            return None
        spec = da_spec(task)
        gold = self.prepare_gold(task, dataset_dir, work)
        dest = (
            work
            / "solutions"
            / spec.suite
            / f"{spec.id}@{spec.version}"
            / dataset_version(dataset_dir)
        )
        dest.mkdir(parents=True, exist_ok=True)
        (dest / spec.report).write_text(gold.reference)
        return dest


def question_text(spec: DaOpenTask) -> str:
    """What the agent reads besides ``TASK.md``: the question, its tables, where to write."""
    tables = "\n".join(f"- `{name}`" for name in spec.marts)
    return (
        f"# {spec.title}\n\n{spec.instructions.strip()}\n\n"
        "## Data\n\n"
        "`analysis.duckdb` in your data folder holds these tables (schema `main`):\n\n"
        f"{tables}\n\n"
        "## Deliverable\n\n"
        f"Write your report in markdown to `{REPORT_DIR}/{spec.report}` (charts, if any, as PNG "
        f"files in `{REPORT_DIR}/`).\n"
    )


def expected_lost(gold: DaGold, reference: RubricScore | None, changed: set[str]) -> list[str]:
    """Accuracy items citing an anchor whose value the wrong report ``changed``, in the paths
    the reference was judged on (the other paths' items were never earned)."""
    if reference is None:
        return []
    chosen = _chosen_paths(reference)
    return sorted(
        item.id
        for item in gold.rubric.items
        if item.type == "accuracy"
        and item.points > 0
        and item.anchor is not None
        and item.anchor.name in changed
        and (item.standard_id, item.path_id) in chosen
    )


def lost_items(gold: DaGold, reference: RubricScore | None, wrong: RubricScore | None) -> list[str]:
    """Items of the reference's judged paths that it earned points on and the wrong report
    earned fewer on (an item the wrong report's judge did not score counts as 0)."""
    if reference is None:
        return []
    chosen = _chosen_paths(reference)
    where = {i.id: (i.standard_id, i.path_id) for i in gold.rubric.items}
    earned = {
        v.item_id: v.earned
        for v in (wrong.items if wrong is not None else [])
        if v.status == "scored" and v.earned is not None
    }
    return sorted(
        v.item_id
        for v in reference.items
        if v.status == "scored"
        and v.earned is not None
        and v.earned > 0
        and where.get(v.item_id) in chosen
        and earned.get(v.item_id, 0.0) < v.earned - 1e-9
    )


def _chosen_paths(score: RubricScore) -> set[tuple[str, str]]:
    return {(s.standard_id, s.path_id) for s in score.standards if s.path_id is not None}


def _metrics(combined: float | None, rubric: RubricScore, gsb: GsbScore) -> dict[str, float]:
    """0-100 metrics; a metric with no value (every item unscored) is left out."""
    values: dict[str, float | None] = {
        PRIMARY_DA_METRIC: combined,
        "rubric": rubric.score,
        **{
            kind: rubric.by_type.get(kind)
            for kind in ("completeness", "accuracy", "insightfulness")
        },
        "gsb": gsb.score,
        **{dim: gsb.by_dimension.get(dim) for dim in ("readability", "depth")},
    }
    return {name: round(100.0 * v, 4) for name, v in values.items() if v is not None}


def _detail(rubric: RubricScore, gsb: GsbScore) -> str | None:
    parts: list[str] = [f"report {gsb.truncated}"] if gsb.truncated else []
    if rubric.unscored:
        parts.append(f"unscored items: {', '.join(rubric.unscored)}")
    inconsistent = [f"{p.baseline_id}/{p.dimension}" for p in gsb.pairs if not p.consistent]
    if inconsistent:
        parts.append(f"inconsistent pairs: {', '.join(inconsistent)}")
    unscored_pairs = [f"{p.baseline_id}/{p.dimension}" for p in gsb.pairs if p.status != "scored"]
    if unscored_pairs:
        parts.append(f"unscored pairs: {', '.join(unscored_pairs)}")
    if rubric.injection_flags:
        parts.append(f"injection flags: {len(rubric.injection_flags)}")
    return "; ".join(parts)[:2000] or None


def _empty_score(report: str) -> SubmissionScore:
    metrics = dict.fromkeys(
        (
            PRIMARY_DA_METRIC,
            "rubric",
            "completeness",
            "accuracy",
            "insightfulness",
            "gsb",
            "readability",
            "depth",
        ),
        0.0,
    )
    return SubmissionScore(
        metrics=metrics,
        primary=PRIMARY_DA_METRIC,
        success=False,
        detail=f"no report: {REPORT_DIR}/{report} is missing or empty (not judged)",
        breakdown=JudgeRecord(),
    )


DA_OPEN = register(DaOpenFamily())

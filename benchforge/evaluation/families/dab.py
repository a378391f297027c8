"""The ``dab_query`` family: one question over a dataset spread over several databases with
reformatted keys and values hidden in text (after DataAgentBench), answered in free text.

========  ======================================================================================
agent     ``TASK.md`` (the question); data: the dataset perturbed by the task's perturb spec,
          seeded by the dataset's seed (``db_config.yaml``, the databases, ``schema.md``,
          ``hints.md``; never the record ``perturbations.json``, never the clean warehouse);
          tools: the ``dab`` toolset (list_db, read_doc, query_db, execute_python, return_answer)
gold      ``gold_sql`` run read-only on the unperturbed dataset, and the task's validator built
          with its value (:class:`benchforge.evaluation.dab.gold.DabGold`)
score     the validator's verdict on the answer: success = passed; the breakdown records the
          answer, the verdict, the validator's kind and version
verify    the gold answer as a sentence passes, no answer fails, a hedge (the gold beside a
          wrong value) fails
oracle    ``solution``: the gold answer as a sentence (``ANSWER``)
========  ======================================================================================

A perturb spec may place databases on PostgreSQL: the run makes a server available, loads
their templates once and gives each trial its own copy (``benchforge.harness.postgres``); the
family only says so (:meth:`DabQueryFamily.uses_postgres`, :meth:`postgres_templates`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml

from benchforge.core.engines import DB_CONFIG_FILE, load_db_config
from benchforge.core.engines.models import PostgresEntry
from benchforge.core.records.scores import ScoreBreakdown, register_breakdown
from benchforge.core.records.trials import SOLUTION_ANSWER_FILE
from benchforge.core.records.verification import (
    EMPTY,
    HACKS,
    REFERENCE,
    TaskVerification,
    VerificationCheck,
)
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.dab.agent_data import perturb_folder, perturbed_data
from benchforge.evaluation.dab.gold import DabGold, dab_gold, gold_sentence
from benchforge.evaluation.dab.probes import legitimate_answers, near_misses
from benchforge.evaluation.dab.spec import DabQueryTask
from benchforge.evaluation.dab.validators import (
    ExactValue,
    NumberWithin,
    Verdict,
    validator_version,
)
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
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase

FAMILY = "dab_query"
METRIC = "passed"
SUBMISSION = "answer"
ENGINES = ("duckdb", "sqlite", "postgres")


@register_breakdown
class DabAnswerDetail(ScoreBreakdown):
    """This family's score detail: the answer as given and the validator's verdict on it."""

    kind: Literal["dab_answer"] = "dab_answer"
    given: str | None
    verdict: Verdict
    validator_kind: str
    validator_version: int
    expected: str  # the gold answer, as the oracle writes it


def perturb_spec_file(task: LoadedTask) -> Path:
    return task.file(spec_as(task, DabQueryTask).perturb)


def _perturb_engines(path: Path) -> dict[str, object]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    databases = data.get("databases") if isinstance(data, dict) else None
    if not isinstance(databases, dict):
        return {}
    return {
        name: entry.get("engine") if isinstance(entry, dict) else None
        for name, entry in databases.items()
    }


def _perturb_problems(path: Path) -> list[str]:
    if not path.is_file():
        return [f"missing file '{path}'"]
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        return [f"{path}: not YAML ({exc})"]
    databases = data.get("databases") if isinstance(data, dict) else None
    if not isinstance(databases, dict) or not databases:
        return [f"{path}: names no databases"]
    return [
        f"{path}: database '{name}' is {entry.get('engine')!r}; one of {', '.join(ENGINES)}"
        for name, entry in databases.items()
        if isinstance(entry, dict) and entry.get("engine") not in ENGINES
    ]


class DabQueryFamily(FamilyBase):
    name: str = FAMILY
    spec_type: type[TaskSpecBase] = DabQueryTask
    toolset: str = "dab"
    submission: str = SUBMISSION
    heldout: bool = False  # the agent's data is the trial's dataset, perturbed: gold is on the same
    detail_template: str = "dab_detail.html.j2"

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        if not isinstance(spec, DabQueryTask):
            raise TypeError(f"{spec.id} is a {spec.family} task, not a dab_query task")
        return [("perturb", problem) for problem in _perturb_problems(folder / spec.perturb)]

    def materials(self, task: LoadedTask, dest: Path) -> None:
        (dest / SUBMISSION).mkdir(exist_ok=True)

    def scored_work(self, task: LoadedTask) -> ScoredWork:
        """One answer, judged by the task's typed validator."""
        return ScoredWork(unit="answer", names=[spec_as(task, DabQueryTask).answer.kind])

    def agent_data(
        self, task: LoadedTask, dataset_dir: Path, work: Path, role: str | None = None
    ) -> Path:
        if role not in (None, task.spec.primary_role):
            return dataset_dir
        return perturbed_data(dataset_dir, perturb_spec_file(task), work)

    def uses_postgres(self, task: LoadedTask) -> bool:
        return "postgres" in _perturb_engines(perturb_spec_file(task)).values()

    def postgres_templates(self, task: LoadedTask, agent_data: Path) -> Path | None:
        config = agent_data / DB_CONFIG_FILE
        if not config.is_file():
            return None
        databases = load_db_config(config).databases.values()
        if not any(isinstance(entry, PostgresEntry) for entry in databases):
            return None
        return perturb_folder(agent_data)

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> DabGold:
        return dab_gold(spec_as(task, DabQueryTask), dataset_dir)

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
        expected = gold if isinstance(gold, DabGold) else DabGold.model_validate(gold)
        validator = expected.validator
        if answer is None:
            verdict = Verdict(
                passed=False,
                kind=validator.kind,
                version=validator_version(validator),
                reason="no answer",
            )
        else:
            verdict = validator.validate(answer)
        return SubmissionScore(
            metrics={METRIC: 100.0 if verdict.passed else 0.0},
            primary=METRIC,
            success=verdict.passed,
            detail=None if verdict.passed else verdict.reason,
            breakdown=DabAnswerDetail(
                given=answer,
                verdict=verdict,
                validator_kind=validator.kind,
                validator_version=validator_version(validator),
                expected=gold_sentence(validator),
            ),
        )

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        """No files: the reference answer (``ANSWER``), the gold on the trial's dataset."""
        if dataset_dir is None:
            return None
        gold = self.prepare_gold(task, dataset_dir, work, datasets)
        folder = work / "dab-solutions" / task.spec.suite / task.spec.id / gold.dataset_version
        folder.mkdir(parents=True, exist_ok=True)
        (folder / SOLUTION_ANSWER_FILE).write_text(gold_sentence(gold.validator) + "\n")
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

        def scored(answer: str | None) -> float:
            return self.score(task, work, gold, dataset_dir, work, answer=answer).metrics[METRIC]

        checks = [
            VerificationCheck.of_score(
                "gold", REFERENCE, scored(gold_sentence(gold.validator)), 100.0
            ),
            VerificationCheck.of_score("empty", EMPTY, scored(None), 0.0),
        ]
        hedge = _hedge(gold)
        if hedge is not None:
            checks.append(VerificationCheck.of_score("hedge", HACKS, scored(hedge), 0.0))
        for name, answer in legitimate_answers(gold.validator):
            checks.append(
                VerificationCheck.of_score(f"format: {name}", FORMATS, scored(answer), 100.0)
            )
        for name, answer in near_misses(gold.validator):
            checks.append(
                VerificationCheck.of_score(f"near miss: {name}", HACKS, scored(answer), 0.0)
            )
        return TaskVerification(
            task=task.key,
            dataset=str(dataset_dir),
            checks=checks,
            problems=[f"{c.name} scores {c.observed}" for c in checks if not c.passed],
        )

    def run_report(self, context: RunReportContext) -> RunReportSection | None:
        # the report's modules (plots, numpy) load only when a report is built
        from benchforge.evaluation.dab.report import run_section

        return run_section(context)


def _hedge(gold: DabGold) -> str | None:
    """The gold answer beside a wrong one, for one-value answers (a list's extras are the
    validator's ``max_extra``)."""
    validator = gold.validator
    if isinstance(validator, ExactValue) and isinstance(validator.value, int):
        return f"{validator.value} or maybe {validator.value + 1}"
    if isinstance(validator, NumberWithin):
        wrong = validator.value * 2 + 1
        return f"either {validator.value:g} or {wrong:g}"
    return None


FORMATS = "formats"  # the gold written in other legitimate ways (``dab.probes``)

register(DabQueryFamily())

"""The ``TaskFamily`` protocol: everything the loader, the runner, the scorer and the verifier
need to know about a kind of task, in one object per family.

A family is registered by name (:mod:`benchforge.evaluation.families.registry`) and looked up
from a task spec's ``family`` field; nothing outside the family's own module branches on it.

Tools. A family names the toolset its agents act through (``toolset``, e.g. ``"de"``); the
tools themselves live in the agents layer (:mod:`benchforge.agents.tools`, which registers
toolsets by name), above this one: a family only names them, so evaluation never imports
agents, and a family with new tools adds a toolset module there beside its family module here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from benchforge.core.errors import UnsupportedTaskError
from benchforge.core.records import TaskVerification
from benchforge.core.records.scores import Breakdown
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.families.scored_work import ScoredWork
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase

if TYPE_CHECKING:
    from benchforge.core.records import TrialScore
    from benchforge.evaluation.calibration.cases import CalibrationCase, JudgedMaterial
    from benchforge.evaluation.families.run_report import RunReportContext, RunReportSection
    from benchforge.evaluation.judges.client import Judge

__all__ = [
    "FamilyBase",
    "PreparedTask",
    "SubmissionScore",
    "TaskFamily",
    "VerifyOptions",
    "spec_as",
]

S = TypeVar("S", bound=TaskSpecBase)
NO_DETAIL_TEMPLATE = "no_detail.html.j2"  # the neutral partials: nothing beyond the metrics


class VerifyOptions(BaseModel):
    """Which of a family's self-checks to run besides gold = 100 and do-nothing = 0."""

    model_config = ConfigDict(frozen=True)

    mutations: bool = True  # mutations of the gold each score as predicted
    hacks: bool = True  # every reward hack of the catalogue scores 0, contained
    visible_dataset: Path | None = None  # with a held-out ``dataset_dir``: what agents see
    # more datasets for the checks that need no judge (da_open: claims against the data)
    claim_datasets: tuple[Path, ...] = ()
    # every role of the task -> the folder verified on (the primary one is ``dataset_dir``)
    datasets: dict[str, Path] = {}


class SubmissionScore(BaseModel):
    """A family's score of one submission on one dataset: what a ``TrialScore`` is made of."""

    metrics: dict[str, float]
    primary: str  # the metric leaderboards rank by
    success: bool
    sandbox: str | None = None  # the backend candidate code ran in; "none": unsandboxed
    detail: str | None = None  # why it lost points, short (the candidate's errors)
    # the family's own detail (DE nodes, judged items), kept whole and read back as its type
    breakdown: Breakdown | None = None
    reused: bool = False  # kept from an earlier scoring of the identical submission
    # False when a transient failure is in it (a judge call that failed, an item unscored):
    # such a score is never kept for reuse, so the next scoring tries again
    reusable: bool = True


class PreparedTask(BaseModel):
    """What ``task prepare`` made of one task on one dataset: its values there (one line),
    what it wrote and checked, and what failed (``problems``) or is close (``warnings``)."""

    values: str
    lines: list[str]
    problems: list[str] = []
    warnings: list[str] = []


@runtime_checkable
class TaskFamily(Protocol):
    """One kind of task. Attributes:

    - ``name``: the spec's ``family`` value; ``spec_type``: its pydantic spec model (a
      ``TaskSpecBase`` subclass with ``family: Literal[name]``);
    - ``toolset``: the name of the agents' toolset for its tasks;
    - ``submission``: the workspace folder holding the answer (scored, digested, and where the
      oracle copies the reference solution);
    - ``heldout``: whether trials are scored on the held-out twin of the task's dataset;
    - ``verifiable``: whether ``benchforge task verify`` checks it (gold 100, do-nothing 0);
    - ``unscored``: why its trials get no score (None: they are scored);
    - ``judged``: its score calls an LLM judge (the harness passes ``judge`` to ``score``);
    - ``generated``: spec fields naming files ``generate`` writes from a gold build (they may be
      missing until then: ``task new`` scaffolds, then generates);
    - ``prepares``: ``task prepare`` evaluates its tasks on a dataset (``prepare``);
    - ``verifies_on_twin``: verification also checks a task on the held-out twin of its
      dataset, without a judge (``VerifyOptions.claim_datasets``);
    - ``shares_scoring_work``: its scorers share a work folder across processes, so the
      exhaustive verification also scores the reference from several processes at once.
    - ``detail_template``: the page partial (a Jinja2 template in a ``templates/`` folder
      beside the family's module) that shows a score's detail; it defines the macros
      ``verdict(view)`` (words added to the trial's verdict line) and ``sections(view)``.
    """

    name: str
    spec_type: type[TaskSpecBase]
    toolset: str
    submission: str
    heldout: bool
    verifiable: bool
    unscored: str | None
    judged: bool
    generated: tuple[str, ...]
    prepares: bool
    verifies_on_twin: bool
    shares_scoring_work: bool
    detail_template: str

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        """Problems with the files a valid spec names, as (field path, problem); ``root`` is
        the catalogue root its ``repo`` is relative to."""
        ...

    def materials(self, task: LoadedTask, dest: Path) -> None:
        """Writes what the agent receives into ``dest`` (``TASK.md`` is written for it)."""
        ...

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> Any:
        """What submissions are scored against on ``dataset_dir`` (the primary role's
        folder), built (or reused) under ``work``; passed back to ``score`` as is.
        ``datasets``: every role of the task -> its folder on the same seed (the primary
        one is ``dataset_dir``), for families whose tasks name several datasets."""
        ...

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
        """Scores the ``submission`` folder; candidate code runs in ``sandbox`` (default: the
        machine's best) unless ``unsandboxed``. Judged families (``judged``) call ``judge``
        (the harness gives one; without it they raise ``UnsupportedTaskError``). ``answer``:
        what the agent returned when it finished (text or JSON; None when it gave none), for
        families that score an answer rather than, or beside, files. ``datasets``: every role
        -> its folder, as for ``prepare_gold``."""
        ...

    def verify(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        options: VerifyOptions,
        judge: Judge | None = None,
    ) -> TaskVerification:
        """Gold scores 100, the do-nothing submission 0, and the family's own checks
        (``judge``: given to judged families only)."""
        ...

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        """The reference solution (a folder copied over ``submission``), or None; families
        whose reference depends on the data (DA reports cite anchor values) render it for
        ``dataset_dir``, the trial's dataset (``datasets``: every role's). A file
        ``ANSWER`` in it (``SOLUTION_ANSWER_FILE``) is the answer the oracle returns."""
        ...

    def scored_work(self, task: LoadedTask) -> ScoredWork | None:
        """What ``task`` is scored on (models, rubric items), read from its files alone, or
        None where the family cannot say without scoring."""
        ...

    def repository_pin(self, task: LoadedTask) -> tuple[str | None, str] | None:
        """For a task authored against one version of its repository (de_evol's gold_v2
        overlay): the version it names (None: not set yet) and the repository's now; None
        for tasks that pin none (``benchforge task base-version``)."""
        ...

    def agent_data(
        self, task: LoadedTask, dataset_dir: Path, work: Path, role: str | None = None
    ) -> Path:
        """The data folder a trial's agent gets for the dataset of ``role`` (None: the
        primary one; ``TaskEnvironment.data_dir`` and ``data_dirs``): the dataset itself for
        DE tasks; analysis-ready marts built from it for DA tasks. Called once per role."""
        ...

    def uses_postgres(self, task: LoadedTask) -> bool:
        """Whether the task's agent data places a database on PostgreSQL: the run then makes
        a server available (configured or started for the run) before its trials."""
        ...

    def postgres_templates(self, task: LoadedTask, agent_data: Path) -> Path | None:
        """For agent data (what :meth:`agent_data` returned) whose ``db_config.yaml`` names
        PostgreSQL databases: the folder holding their perturb record and scripts, which the
        harness loads once into template databases and copies per trial; None otherwise."""
        ...

    def judged_output(self, task: LoadedTask, workspace: Path) -> Path | None:
        """The file of a trial's ``workspace`` the family's judge reads (None: its tasks are not
        judged): what judge calibration shows raters and judges again."""
        ...

    def judged_material(self, task: LoadedTask, gold: Any) -> JudgedMaterial | None:
        """What the family's judge scores that output against, from ``gold`` (what
        ``prepare_gold`` returned): the question, the rubric, the GSB baselines (None: not
        judged). Judge calibration builds its cases from it."""
        ...

    def verdict_cases(
        self, task: LoadedTask, gold: Any, score: TrialScore
    ) -> list[CalibrationCase]:
        """Calibration cases for what the family's judge decided on a scored trial beyond
        the judged output's rubric (e.g. one case per milestone of the trial's gold path),
        from ``gold`` and the trial's score breakdown, each self-contained; [] when none."""
        ...

    def generate(
        self, task: LoadedTask, dataset_dir: Path, work: Path, first: bool = False
    ) -> list[Path]:
        """(Re)writes the files ``generated`` names from a gold build on ``dataset_dir``
        (``first``: right after ``task new`` scaffolded the task); returns them."""
        ...

    def prepare(self, task: LoadedTask, dataset_dir: Path, work: Path, dest: Path) -> PreparedTask:
        """What an author reviews of the task on ``dataset_dir`` (``task prepare``), written
        into ``dest``, with the checks of it (families that ``prepares``)."""
        ...

    def next_steps(self, task: LoadedTask, shown: Callable[[Path], str]) -> list[str]:
        """What a maintainer writes next in a task ``task new`` scaffolded, one line each
        (``shown``: a path as the user types it)."""
        ...

    def run_report(self, context: RunReportContext) -> RunReportSection | None:
        """The family's own section of a scored run's report (markdown appended to the
        leaderboard's, and pages beside it), from the run's scores of this family; None: the
        leaderboard says it all. Called only for a run with scores of the family."""
        ...


class FamilyBase:
    """Defaults for a family: subclass it, set the attributes, implement what differs."""

    name: str
    spec_type: type[TaskSpecBase]
    toolset: str = "de"
    submission: str = "repo"
    heldout: bool = False
    verifiable: bool = True
    unscored: str | None = None
    judged: bool = False
    generated: tuple[str, ...] = ()
    prepares: bool = False
    verifies_on_twin: bool = False
    shares_scoring_work: bool = False
    detail_template: str = NO_DETAIL_TEMPLATE
    # the harness also passes ``trajectory=`` (the trial's steps) and ``termination=`` (how it
    # ended) to ``score``: for families that score the way to the answer (explore_milestone)
    scores_trajectory: bool = False

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        return []

    def materials(self, task: LoadedTask, dest: Path) -> None:
        return None

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> Any:
        raise UnsupportedTaskError(f"{self.name} tasks have no gold to score against")

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
        raise UnsupportedTaskError(f"{self.name} tasks are not scored: {self.unscored}")

    def verify(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        options: VerifyOptions,
        judge: Judge | None = None,
    ) -> TaskVerification:
        raise UnsupportedTaskError(f"{self.name} tasks are not verified")

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        return None

    def scored_work(self, task: LoadedTask) -> ScoredWork | None:
        return None

    def repository_pin(self, task: LoadedTask) -> tuple[str | None, str] | None:
        return None

    def agent_data(
        self, task: LoadedTask, dataset_dir: Path, work: Path, role: str | None = None
    ) -> Path:
        return dataset_dir

    def uses_postgres(self, task: LoadedTask) -> bool:
        return False

    def postgres_templates(self, task: LoadedTask, agent_data: Path) -> Path | None:
        return None

    def judged_output(self, task: LoadedTask, workspace: Path) -> Path | None:
        return None

    def judged_material(self, task: LoadedTask, gold: Any) -> JudgedMaterial | None:
        return None

    def verdict_cases(
        self, task: LoadedTask, gold: Any, score: TrialScore
    ) -> list[CalibrationCase]:
        return []

    def generate(
        self, task: LoadedTask, dataset_dir: Path, work: Path, first: bool = False
    ) -> list[Path]:
        return []

    def prepare(self, task: LoadedTask, dataset_dir: Path, work: Path, dest: Path) -> PreparedTask:
        raise UnsupportedTaskError(f"{self.name} tasks have nothing to prepare")

    def next_steps(self, task: LoadedTask, shown: Callable[[Path], str]) -> list[str]:
        return []

    def run_report(self, context: RunReportContext) -> RunReportSection | None:
        return None


def spec_as(task: LoadedTask, spec_type: type[S]) -> S:
    """``task.spec`` as the family's spec model ``spec_type`` (a loader bug if it is not)."""
    if not isinstance(task.spec, spec_type):
        raise TypeError(f"{task.key} is a {task.spec.family} task, not {spec_type.__name__}")
    return task.spec

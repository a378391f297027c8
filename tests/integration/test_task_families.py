"""A new task family is one new module: a TOY family, registered here only (no shipped module
knows it), loads from a task folder, is verified by the ``verify_tasks`` flow, and runs through
``run_suite`` + ``score_run`` (the oracle scores 100, the null agent 0).

The toy task: the agent writes ``answer/answer.txt``; it scores 100 when the text equals the
task's hidden ``expected.txt``. It has no dbt repository, no held-out dataset and its own
toolset."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from benchforge.agents.tools.toolsets import (
    register_toolset,
    subset,
    toolset,
    unregister_toolset,
)
from benchforge.core.artifacts import open_store
from benchforge.core.records.verification import (
    EMPTY,
    REFERENCE,
    TaskVerification,
    VerificationCheck,
)
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.families import (
    FamilyBase,
    SubmissionScore,
    UnknownFamilyError,
    VerifyOptions,
    family_of,
    get_family,
    register,
    spec_as,
    unregister,
    workspace,
)
from benchforge.evaluation.tasks import TaskSpecError, load_task, task_json_schema
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase
from benchforge.flows.runs import run_suite, score_run
from benchforge.flows.verify import verify_tasks
from benchforge.harness.store import RunStore

SUITE = "toy-suite"


class ToyTask(TaskSpecBase):
    family: Literal["toy_answer"]
    question: str = "question.md"
    expected: str = "expected.txt"  # the gold answer: never copied into a workspace


class ToyFamily(FamilyBase):
    name = "toy_answer"
    spec_type = ToyTask
    toolset = "toy"
    submission = "answer"
    heldout = False

    def file_problems(self, spec: Any, folder: Path, root: Path) -> list[tuple[str, str]]:
        return [
            (field, f"missing file '{rel}' in {folder}")
            for field, rel in (("question", spec.question), ("expected", spec.expected))
            if not (folder / rel).is_file()
        ]

    def materials(self, task: LoadedTask, dest: Path) -> None:
        spec = spec_as(task, ToyTask)
        shutil.copyfile(task.file(spec.question), dest / "question.md")

    def prepare_gold(self, task: LoadedTask, dataset_dir: Path, work: Path) -> str:
        return task.file(spec_as(task, ToyTask).expected).read_text().strip()

    def score(
        self,
        task: LoadedTask,
        submission: Path,
        gold: Any,
        dataset_dir: Path,
        work: Path,
        sandbox: SandboxBackend | None = None,
        unsandboxed: bool = False,
        answer: str | None = None,
    ) -> SubmissionScore:
        answer_file = submission / "answer.txt"
        right = answer_file.is_file() and answer_file.read_text().strip() == gold
        return SubmissionScore(
            metrics={"exact": 100.0 if right else 0.0},
            primary="exact",
            success=right,
            detail=None if right else "wrong or missing answer.txt",
        )

    def verify(
        self, task: LoadedTask, dataset_dir: Path, work: Path, options: VerifyOptions
    ) -> TaskVerification:
        gold = self.prepare_gold(task, dataset_dir, work)
        solution = self.solution(task, work)
        assert solution is not None
        empty = work / "empty"
        empty.mkdir(parents=True, exist_ok=True)

        def scored(folder: Path) -> float:
            return self.score(task, folder, gold, dataset_dir, work).metrics["exact"]

        checks = [
            VerificationCheck.of_score("gold", REFERENCE, scored(solution), 100.0),
            VerificationCheck.of_score("empty", EMPTY, scored(empty), 0.0),
        ]
        return TaskVerification(
            task=task.key,
            dataset=str(dataset_dir),
            checks=checks,
            problems=[f"{c.name} scores {c.observed}" for c in checks if not c.passed],
        )

    def solution(
        self, task: LoadedTask, work: Path, dataset_dir: Path | None = None
    ) -> Path | None:
        folder = work / "toy-solutions" / task.spec.id
        folder.mkdir(parents=True, exist_ok=True)
        gold = self.prepare_gold(task, Path(), work)
        (folder / "answer.txt").write_text(gold + "\n")
        return folder


@pytest.fixture(scope="module")
def toy() -> Iterator[ToyFamily]:
    family = ToyFamily()
    register(family)
    register_toolset(subset(toolset("de"), ("bash", "create_file", "terminate"), name="toy"))
    yield family
    unregister(family.name)
    unregister_toolset("toy")


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``<root>/task_specs/toy-suite/toy-one`` (the task: no repository) and ``<root>/dataset``
    (a dataset record only)."""
    root = tmp_path_factory.mktemp("toy")
    (root / "dataset").mkdir()
    (root / "dataset" / "dataset.json").write_text(json.dumps({"toy": True}))
    task = root / "task_specs" / SUITE / "toy-one"
    task.mkdir(parents=True)
    (task / "question.md").write_text("What is six times seven?\n")
    (task / "expected.txt").write_text("42\n")
    (task / "task.yaml").write_text(
        "family: toy_answer\nid: toy-one\nsuite: toy-suite\ntitle: Multiply\ndomain: toy\n"
        "dataset: {domain: toy}\n"
        "instructions: Write the answer to question.md into answer/answer.txt.\n"
    )
    return root


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("artifacts")
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    mp.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    mp.delenv("BENCHFORGE_OPENAI_BASE_URL", raising=False)
    yield root
    mp.undo()


def test_an_unknown_family_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UnknownFamilyError, match="de_arch, de_evol, de_impl"):
        get_family("toy_nothing")
    task = tmp_path / "task_specs" / "s" / "t"
    task.mkdir(parents=True)
    (task / "task.yaml").write_text("family: toy_nothing\nid: t\n")
    with pytest.raises(TaskSpecError, match="does not match any of the expected tags"):
        load_task(task)


def test_the_toy_family_loads_and_gives_its_workspace_and_tools(
    toy: ToyFamily, catalogue: Path, tmp_path: Path
) -> None:
    loaded = load_task(catalogue / "task_specs" / SUITE / "toy-one")
    assert isinstance(loaded.spec, ToyTask) and family_of(loaded) is toy
    assert '"toy_answer"' in task_json_schema()
    dest = workspace(loaded, tmp_path / "ws")
    assert sorted(p.name for p in dest.iterdir()) == ["TASK.md", "question.md"]
    assert toolset(toy.toolset).names == ("bash", "create_file", "terminate")
    (loaded.folder / "expected.txt").rename(loaded.folder / "gone.txt")
    try:
        with pytest.raises(TaskSpecError, match=r"task.yaml: expected: missing file"):
            load_task(loaded.folder)
    finally:
        (loaded.folder / "gone.txt").rename(loaded.folder / "expected.txt")


def test_the_toy_family_is_verified_run_and_scored(
    toy: ToyFamily, catalogue: Path, artifacts: Path
) -> None:
    tasks_root = str(catalogue / "task_specs")
    datasets = {"toy": str(catalogue / "dataset")}
    [checked] = verify_tasks(path=f"{tasks_root}/{SUITE}", datasets=datasets)
    assert checked.ok and (checked.score(REFERENCE), checked.score(EMPTY)) == (100.0, 0.0)
    assert checked.shown(REFERENCE) == "gold 100"

    summary = run_suite(
        suites=[SUITE],
        agents=["oracle", "null"],
        models=["mock-echo"],
        epochs=1,
        run_id="toy-run",
        tasks_root=tasks_root,
        datasets=datasets,
    )
    assert (summary.trials, summary.completed, summary.infra_errors) == (2, 2, 0)
    scored = score_run(run_id="toy-run")
    assert scored.statuses == {"scored": 2}
    run = RunStore(open_store(str(artifacts)), "toy-run")
    spec = run.read_spec()
    assert spec is not None and spec.heldout_datasets == {}  # the toy family has no held-out
    scores = {s.key.agent: s for s in run.read_scores()}
    assert scores["oracle"].metrics == {"exact": 100.0} and scores["oracle"].success
    assert scores["null"].metrics == {"exact": 0.0} and not scores["null"].success
    assert scores["oracle"].family == "toy_answer" and scores["oracle"].primary == "exact"

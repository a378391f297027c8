"""The data-engineering families (after DAComp): ``de_impl``, ``de_evol`` and ``de_arch``.

All three hand the agent a dbt repository (``repo/``) and the DE toolset. de_impl and de_evol
submit the repository and are scored by execution on the held-out twin of their dataset;
de_arch submits a blueprint (``design/``), judged on a flat rubric. What differs:

========  ==========================  ==========================  ==============================
family    workspace                   gold (and the do-nothing)   reference solution
========  ==========================  ==========================  ==============================
de_impl   skeleton + data contract    the gold repo (skeleton)    the gold repository
de_evol   gold v1 + change request    v1 + gold_v2 overlay (v1)   v1 with the overlay applied
de_arch   the repo + requirement      none: judged on a rubric    the reference blueprint
========  ==========================  ==========================  ==============================

Only de_impl runs the domain's mutation catalogue and the reward-hack catalogue in
verification; de_evol also checks that its overlay was authored against today's repository.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchforge.core.catalogue import catalogue as find_catalogue
from benchforge.core.errors import UnsupportedTaskError
from benchforge.core.sandbox import SandboxBackend
from benchforge.evaluation.de.details import node_details
from benchforge.evaluation.de.hacks import HackCatalogue, load_hack_catalogue
from benchforge.evaluation.de.mutations import MutationCatalogue, PredictedScore, load_catalogue
from benchforge.evaluation.de.tasks import (
    TaskGold,
    TaskVerification,
    changed_nodes,
    check_gold,
    gold_cache,
    score_task,
)
from benchforge.evaluation.families.base import (
    FamilyBase,
    SubmissionScore,
    VerifyOptions,
    spec_as,
)
from benchforge.evaluation.families.registry import register
from benchforge.evaluation.gold import repo_version
from benchforge.evaluation.judges.architecture import judge_architecture
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.models import FlatRubricItem, JudgedVerification, content_hash
from benchforge.evaluation.judges.record import judge_record
from benchforge.evaluation.tasks.materials import apply_overlay, copy_repo, make_skeleton
from benchforge.evaluation.tasks.models import (
    DeArchTask,
    DeEvolTask,
    DeImplTask,
    LoadedTask,
    TaskSpecBase,
)

PRIMARY_DE_METRIC = "cs"
SUCCESS_FRACTION = 0.9  # a judged output at 90% of its rubric points counts as a success


class DeFamily(FamilyBase):
    """What the DE families share: a dbt repository as the submission, DE scoring."""

    toolset: str = "de"
    submission: str = "repo"
    heldout: bool = True
    checks_mutations: bool = False
    checks_hacks: bool = False

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if not (root / spec.repo / "dbt_project.yml").is_file():
            problems.append(("repo", f"'{spec.repo}' is not a dbt project"))
        problems += self.repo_problems(spec, root)
        for field, rel in self.documents(spec).items():
            if rel is not None and not (folder / rel).exists():
                problems.append((field, f"missing file '{rel}' in {folder}"))
        return problems

    def documents(self, spec: Any) -> dict[str, str | None]:
        """The spec's fields naming files of the task folder, by field name."""
        return {}

    def repo_problems(self, spec: Any, root: Path) -> list[tuple[str, str]]:
        return []

    def copy_documents(self, task: LoadedTask, dest: Path, names: dict[str, str]) -> None:
        for field, target in names.items():
            shutil.copyfile(task.file(getattr(task.spec, field)), dest / target)

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
    ) -> SubmissionScore:
        score = score_task(
            task, submission, gold, dataset_dir, work, sandbox=sandbox, unsandboxed=unsandboxed
        )
        sandboxed_by = score.isolation.backend if score.isolation else None
        return SubmissionScore(
            metrics={"cs": score.cs, "cfs": score.cfs, "sr": score.sr},
            primary=PRIMARY_DE_METRIC,
            success=score.sr >= 100.0,
            sandbox="none" if score.unsandboxed else sandboxed_by,
            detail="; ".join(score.candidate_errors)[:2000] or None,
            nodes=node_details(score),
        )

    def verify(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        options: VerifyOptions,
        judge: Judge | None = None,
    ) -> TaskVerification:
        catalogue = None
        if options.mutations and self.checks_mutations:
            path = find_catalogue().mutations_dir / f"{task.spec.domain}.yaml"
            catalogue = load_catalogue(path) if path.exists() else None
        hacks = load_hack_catalogue() if options.hacks and self.checks_hacks else None
        return self.check(task, dataset_dir, work, catalogue, hacks, options.visible_dataset)

    def check(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        catalogue: MutationCatalogue | None = None,
        hacks: HackCatalogue | None = None,
        visible_dataset: Path | None = None,
    ) -> TaskVerification:
        """Verification with the catalogues given (those this family does not check are
        ignored): see :func:`benchforge.evaluation.de.tasks.verify_task`."""
        gold = self.prepare_gold(task, dataset_dir, work)
        hacks = hacks if self.checks_hacks else None
        visible = None
        if hacks is not None and visible_dataset is not None:
            visible = self.prepare_gold(task, visible_dataset, work)
        return check_gold(
            task,
            gold,
            dataset_dir,
            work,
            problems=self.authoring_problems(task),
            catalogue=catalogue if self.checks_mutations else None,
            hacks=hacks,
            visible=visible,
        )

    def authoring_problems(self, task: LoadedTask) -> list[str]:
        """Problems of the task's authored files found before any scoring."""
        return []


class DeImplFamily(DeFamily):
    """A data contract + a skeleton dbt project: the agent writes every model."""

    name: str = "de_impl"
    spec_type: type[TaskSpecBase] = DeImplTask
    checks_mutations: bool = True
    checks_hacks: bool = True

    def documents(self, spec: Any) -> dict[str, str | None]:
        return {"contract": spec.contract, "contract_metadata": spec.contract_metadata}

    def materials(self, task: LoadedTask, dest: Path) -> None:
        make_skeleton(task.repo, dest / "repo")
        self.copy_documents(task, dest, {"contract": "data_contract.yaml"})

    def prepare_gold(self, task: LoadedTask, dataset_dir: Path, work: Path) -> TaskGold:
        spec = spec_as(task, DeImplTask)
        folder = gold_cache(work / "gold", spec.domain, task.repo, dataset_dir)
        skeleton = make_skeleton(task.repo, work / "materials" / spec.id / "skeleton")
        return TaskGold(gold_folder=folder, repo=task.repo, base_repo=skeleton, scored_nodes=None)

    def solution(
        self, task: LoadedTask, work: Path, dataset_dir: Path | None = None
    ) -> Path | None:
        return task.repo


class DeEvolFamily(DeFamily):
    """A working repository (gold v1) + a change request: the agent evolves it; gold v2 is an
    authored overlay of the repository."""

    name: str = "de_evol"
    spec_type: type[TaskSpecBase] = DeEvolTask

    def documents(self, spec: Any) -> dict[str, str | None]:
        return {"change_request": spec.change_request, "gold_v2": spec.gold_v2}

    def repo_problems(self, spec: Any, root: Path) -> list[tuple[str, str]]:
        return [
            (f"removed[{i}]", f"'{removed}' is not a file of {spec.repo}")
            for i, removed in enumerate(spec.removed)
            if not (root / spec.repo / removed).is_file()
        ]

    def materials(self, task: LoadedTask, dest: Path) -> None:
        copy_repo(task.repo, dest / "repo")
        self.copy_documents(task, dest, {"change_request": "change_request.md"})

    def prepare_gold(self, task: LoadedTask, dataset_dir: Path, work: Path) -> TaskGold:
        spec = spec_as(task, DeEvolTask)
        cache = work / "gold"
        v1 = gold_cache(cache, spec.domain, task.repo, dataset_dir)
        v2_repo = apply_overlay(
            task.repo,
            task.file(spec.gold_v2),
            spec.removed,
            work / "materials" / spec.id / "gold_v2",
        )
        v2 = gold_cache(cache, spec.domain, v2_repo, dataset_dir)
        changed = changed_nodes(v1, v2)
        return TaskGold(
            gold_folder=v2, repo=v2_repo, base_repo=task.repo, scored_nodes=sorted(changed)
        )

    def authoring_problems(self, task: LoadedTask) -> list[str]:
        spec = spec_as(task, DeEvolTask)
        if spec.base_version is None:
            return []
        current = repo_version(task.repo)
        if current == spec.base_version:
            return []
        return [
            f"{spec.repo} changed since the gold_v2 overlay was authored "
            f"(base_version {spec.base_version}, now {current}): re-check the overlay"
        ]

    def solution(
        self, task: LoadedTask, work: Path, dataset_dir: Path | None = None
    ) -> Path | None:
        spec = spec_as(task, DeEvolTask)
        dest = work / "solutions" / spec.suite / f"{spec.id}@{spec.version}"
        return apply_overlay(task.repo, task.file(spec.gold_v2), spec.removed, dest)


class DeArchFamily(DeFamily):
    """A business requirement + the repository: a blueprint (``design/blueprint.yaml``),
    judged by the architecture judge on the task's flat rubric. The reference blueprint is the
    oracle's answer and, with the empty blueprint, what verification checks the judge on."""

    name: str = "de_arch"
    spec_type: type[TaskSpecBase] = DeArchTask
    submission: str = "design"
    heldout: bool = False  # judged, not executed: the blueprint does not depend on the data
    judged: bool = True

    def documents(self, spec: Any) -> dict[str, str | None]:
        return {"requirement": spec.requirement, "reference": spec.reference}

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        problems = super().file_problems(spec, folder, root)
        arch = spec if isinstance(spec, DeArchTask) else None
        if arch is not None and not arch.expected_output.startswith(f"{self.submission}/"):
            problems.append(
                ("expected_output", f"must be a file under {self.submission}/ (the submission)")
            )
        return problems

    def materials(self, task: LoadedTask, dest: Path) -> None:
        copy_repo(task.repo, dest / "repo")
        self.copy_documents(task, dest, {"requirement": "requirement.md"})
        (dest / self.submission).mkdir(exist_ok=True)
        (dest / self.submission / ".keep").write_text("")

    def prepare_gold(self, task: LoadedTask, dataset_dir: Path, work: Path) -> ArchGold:
        spec = spec_as(task, DeArchTask)
        items = [FlatRubricItem.model_validate(i.model_dump()) for i in spec.rubric]
        return ArchGold(
            items=items,
            requirement=task.file(spec.requirement).read_text(encoding="utf-8"),
            rubric_version=content_hash([i.model_dump(mode="json") for i in items]),
            reference=task.file(spec.reference).read_text(encoding="utf-8"),
        )

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
    ) -> SubmissionScore:
        spec = spec_as(task, DeArchTask)
        blueprint = _read_text(submission.parent / spec.expected_output)
        return self.judge_blueprint(gold, blueprint, judge)

    def judge_blueprint(
        self, gold: ArchGold, blueprint: str, judge: Judge | None
    ) -> SubmissionScore:
        if judge is None:
            raise UnsupportedTaskError("de_arch blueprints are judged: no judge was given")
        mine = judge.for_task()
        verdict = judge_architecture(
            mine,
            gold.items,
            blueprint,
            requirement=gold.requirement,
            rubric_version=gold.rubric_version,
        )
        metrics = {"rubric": 100.0 * verdict.score} if verdict.score is not None else {}
        metrics |= {k: 100.0 * v for k, v in verdict.by_dimension.items() if v is not None}
        unscored = f"unscored items: {', '.join(verdict.unscored)}" if verdict.unscored else None
        return SubmissionScore(
            metrics=metrics,
            primary="rubric",
            success=verdict.score is not None and verdict.score >= SUCCESS_FRACTION,
            detail=unscored,
            judged=judge_record(judge=mine, architecture=verdict),
        )

    def verify(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        options: VerifyOptions,
        judge: Judge | None = None,
    ) -> TaskVerification:
        """The reference blueprint scores >= 90 and the empty one 0."""
        gold = self.prepare_gold(task, dataset_dir, work)
        reference = self.judge_blueprint(gold, gold.reference, judge)
        empty = self.judge_blueprint(gold, "", judge)
        ref, nothing = reference.metrics.get("rubric"), empty.metrics.get("rubric")
        problems = []
        if ref is None or ref < 100.0 * SUCCESS_FRACTION:
            problems.append(f"the reference blueprint scores {ref} (< 90)")
        if nothing != 0.0:
            problems.append(f"the empty blueprint scores {nothing} (not 0)")
        requests = sum(s.judged.requests for s in (reference, empty) if s.judged is not None)
        unscored = reference.judged.unscored if reference.judged is not None else []
        return TaskVerification(
            task=task.key,
            dataset=str(dataset_dir),
            gold=PredictedScore(cs=ref or 0.0, cfs=ref or 0.0, sr=ref or 0.0),
            empty=PredictedScore(cs=nothing or 0.0, cfs=nothing or 0.0, sr=nothing or 0.0),
            problems=problems,
            judged=JudgedVerification(
                reference_score=ref,
                empty_score=nothing,
                unscored=unscored,
                judge_requests=requests,
            ),
        )

    def solution(
        self, task: LoadedTask, work: Path, dataset_dir: Path | None = None
    ) -> Path | None:
        spec = spec_as(task, DeArchTask)
        dest = work / "solutions" / spec.suite / f"{spec.id}@{spec.version}"
        target = dest / Path(spec.expected_output).relative_to(self.submission)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task.file(spec.reference), target)
        return dest


class ArchGold(BaseModel):
    """What a blueprint is judged against: the flat rubric and the requirement."""

    items: list[FlatRubricItem]
    requirement: str
    rubric_version: str
    reference: str


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


DE_IMPL = register(DeImplFamily())
DE_EVOL = register(DeEvolFamily())
DE_ARCH = register(DeArchFamily())

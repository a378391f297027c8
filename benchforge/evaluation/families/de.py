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

Verification runs mutation checks: de_impl the domain's catalogue
(``task_specs/mutations/<domain>.yaml``, every model of the gold scored), de_evol the task's own
``mutations.yaml`` (edits of gold v2 on the models v2 adds or changes: the scored ones; a
domain catalogue cannot know them). Only de_impl runs the reward-hack catalogue. ``task
validate`` reports what each family's authored files get wrong (``authoring_problems``: a
stale or empty contract, an overlay authored against another repository version) and what
looks unintended (``authoring_warnings``: models of weight 0, no mutations yet).

``task new`` scaffolds the three families (``scaffold``): see
:mod:`benchforge.evaluation.tasks.scaffold`.
"""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from benchforge.core.errors import ConfigError, UnsupportedTaskError
from benchforge.core.records import TaskVerification
from benchforge.core.sandbox import SandboxBackend
from benchforge.core.scratch import content_key, publish_once
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.calibration.cases import FlatRubricRecord, JudgedMaterial
from benchforge.evaluation.dbt.manifest import DbtManifest, assign_layers, unmatched_rules
from benchforge.evaluation.dbt.runner import PROFILES_DIR, write_profile
from benchforge.evaluation.de.details import de_breakdown
from benchforge.evaluation.de.hacks import HackCatalogue, load_hack_catalogue
from benchforge.evaluation.de.mutations import MutationCatalogue
from benchforge.evaluation.de.scoring import zero_weight_models
from benchforge.evaluation.de.tasks import (
    TaskGold,
    changed_models,
    changed_nodes,
    check_gold,
    gold_cache,
    score_task,
    scoring_of,
)
from benchforge.evaluation.families.base import (
    FamilyBase,
    SubmissionScore,
    VerifyOptions,
    spec_as,
)
from benchforge.evaluation.families.registry import register
from benchforge.evaluation.families.scored_work import (
    ScoredWork,
    evol_changed_models,
    repo_models,
    weighted,
)
from benchforge.evaluation.gold import repo_version
from benchforge.evaluation.judges.architecture import judge_architecture
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.length import DEFAULT_MAX_BLUEPRINT_WORDS
from benchforge.evaluation.judges.models import FlatRubricItem, JudgedVerification, content_hash
from benchforge.evaluation.judges.record import judge_record
from benchforge.evaluation.tasks.authoring import ParsedRepos
from benchforge.evaluation.tasks.contracts import generate_contract, mark_undescribed_models
from benchforge.evaluation.tasks.materials import (
    apply_overlay,
    contract_problems,
    copy_repo,
    gold_as_received,
    make_skeleton,
    overlay_key,
    skeleton_key,
)
from benchforge.evaluation.tasks.models import (
    DeArchTask,
    DeEvolTask,
    DeImplTask,
    DeScoring,
    LoadedTask,
    RubricItem,
    TaskSpecBase,
)
from benchforge.evaluation.tasks.scaffold import FamilyScaffold, TaskDraft, ensure_domain_mutations
from benchforge.evaluation.tasks.templates import (
    CHANGE_REQUEST,
    CONTRACT_METADATA,
    INSTRUCTIONS,
    REFERENCE_BLUEPRINT,
    REQUIRED_KINDS,
    REQUIREMENT,
    RUBRIC,
    SCAFFOLD_MARK,
    evol_mutations,
)

PRIMARY_DE_METRIC = "cs"
SUCCESS_FRACTION = 0.9  # a judged output at 90% of its rubric points counts as a success
EVOL_MUTATIONS = "mutations.yaml"  # a de_evol task's own mutation catalogue (optional)
KEEP = ".gitkeep"  # keeps an empty overlay folder in git; not a repository file (no suffix)


def read_mutations(path: Path) -> MutationCatalogue | None:
    """The mutation catalogue at ``path``; None when there is none yet (no file, or a file
    listing no mutation: what ``task new`` writes). An invalid one is a ``ConfigError`` naming
    the file and the field."""
    if not path.is_file():
        return None
    try:
        data = read_yaml(path.read_text())
    except Exception as err:  # yaml errors carry their own line numbers
        raise ConfigError(f"{path}: not YAML: {str(err).splitlines()[0]}") from None
    if isinstance(data, dict) and not data.get("mutations"):
        return None
    try:
        return MutationCatalogue.model_validate(data)
    except ValidationError as err:
        problems = "\n  ".join(
            f"{path}: {_where(e['loc'], data)}: {e['msg']}" for e in err.errors()
        )
        raise ConfigError(f"invalid mutation catalogue\n  {problems}") from None


def _where(loc: tuple[int | str, ...], data: Any) -> str:
    """A validation error's location, with a mutation named by its id, not its index."""
    parts: list[str] = []
    node = data
    for part in loc:
        if isinstance(part, int) and isinstance(node, list) and part < len(node):
            node = node[part]
            ident = node.get("id") if isinstance(node, dict) else None
            parts.append(f"[{ident}]" if ident else f"[{part}]")
        else:
            node = node.get(part) if isinstance(node, dict) else None
            parts.append(f".{part}" if parts else str(part))
    return "".join(parts) or "(root)"


class DeFamily(FamilyBase, ABC):
    """What the DE families share: a dbt repository as the submission, DE scoring."""

    toolset: str = "de"
    submission: str = "repo"
    heldout: bool = True
    detail_template: str = "de_detail.html.j2"
    checks_mutations: bool = False
    checks_hacks: bool = False

    def materials(self, task: LoadedTask, dest: Path) -> None:
        """The family's repository and documents (:meth:`repo_materials`), and the dbt profile
        every DE workspace builds with (``.dbt/profiles.yml``, pointed at the sandbox's
        database by ``$BENCHFORGE_DBT_DB``)."""
        self.repo_materials(task, dest)
        write_profile(dest / PROFILES_DIR, threads=1)

    @abstractmethod
    def repo_materials(self, task: LoadedTask, dest: Path) -> None:
        """The repository the agent works on and the family's documents."""

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if spec.repo is None:  # required by the DE specs (RepoTaskSpec)
            return [("repo", "a data-engineering task needs its gold dbt project")]
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
        answer: str | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> SubmissionScore:
        score = score_task(
            task,
            submission,
            gold,
            dataset_dir,
            work,
            sandbox=sandbox,
            unsandboxed=unsandboxed,
            reuse=True,
        )
        sandboxed_by = score.isolation.backend if score.isolation else None
        return SubmissionScore(
            metrics={"cs": score.cs, "cfs": score.cfs, "sr": score.sr},
            primary=PRIMARY_DE_METRIC,
            success=score.sr >= 100.0,
            sandbox="none" if score.unsandboxed else sandboxed_by,
            detail="; ".join(score.candidate_errors)[:2000] or None,
            breakdown=de_breakdown(score),
            reused=score.reused,
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
            catalogue = read_mutations(self.mutations_file(task))
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

    def mutations_file(self, task: LoadedTask) -> Path:
        """Where the task's mutations are: the domain's catalogue beside the task's suites
        (``<tasks folder>/mutations/<domain>.yaml``)."""
        return task.folder.parents[1] / "mutations" / f"{task.spec.domain}.yaml"

    def authoring_problems(self, task: LoadedTask) -> list[str]:
        """Problems of the task's authored files found before any scoring (verification
        fails on them; ``task validate`` reports them)."""
        try:
            read_mutations(self.mutations_file(task))
        except ConfigError as err:
            return [str(err)] if self.checks_mutations else []
        return []

    def authoring_warnings(self, task: LoadedTask, parsed: ParsedRepos) -> list[str]:
        """What is valid but looks unintended: models that weigh nothing, layer rules that
        match no model, no mutations to check."""
        warnings = self.weight_warnings(task, parsed)
        if self.checks_mutations:
            warnings += self.mutation_warnings(task)
        return warnings

    def scored_repo(self, task: LoadedTask, parsed: ParsedRepos) -> Path:
        """The repository whose models are scored (the gold; v2 for de_evol)."""
        return task.repo

    def scored_models(
        self, task: LoadedTask, manifest: DbtManifest, parsed: ParsedRepos
    ) -> set[str] | None:
        """The scored models of ``manifest`` (the scored repository's); None: all."""
        return None

    def weight_warnings(self, task: LoadedTask, parsed: ParsedRepos) -> list[str]:
        scoring = scoring_of(task)
        repo = self.scored_repo(task, parsed)
        if every_model_weighted(repo, scoring):
            return []  # no model can weigh 0: no dbt parse needed
        manifest = assign_layers(parsed.manifest(repo), scoring.layers)
        warnings = [
            f"scoring.layers rule {r.model_dump(exclude_none=True)} matches no model"
            for r in unmatched_rules(manifest, scoring.layers)
        ]
        scored = self.scored_models(task, manifest, parsed)
        for name in zero_weight_models(manifest, scoring, scored):
            if scoring.node_weights.get(name, 1.0) <= 0:
                why = "scoring.node_weights gives it 0"
            else:
                layer = manifest.models[name].layer
                why = (
                    f"layer '{layer}' has no weight in scoring.layer_weights; add a "
                    "scoring.layers rule or a weight"
                )
            warnings.append(f"model {name} gets weight 0 ({why})")
        return warnings

    def mutation_warnings(self, task: LoadedTask) -> list[str]:
        path = self.mutations_file(task)
        try:
            catalogue = read_mutations(path)
        except ConfigError:
            return []  # an authoring problem, reported as such
        if catalogue is None:
            state = "lists no mutation yet" if path.exists() else "does not exist"
            return [f"{_rel(path, task)} {state}: verify checks no mutations"]
        return []


def _rel(path: Path, task: LoadedTask) -> str:
    root = task.folder.parents[2]
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def every_model_weighted(repo: Path, scoring: DeScoring) -> bool:
    """Whether every model file of ``repo`` sits where no model can get weight 0: no layer
    rules, the default model path, each file in a first folder with a positive layer weight,
    no node weight of 0. Then ``task validate`` needs no dbt parse to know (the shipped
    catalogue validates in well under a second)."""
    if scoring.layers:
        return False
    project = read_yaml((repo / "dbt_project.yml").read_text()) or {}
    if project.get("model-paths", ["models"]) != ["models"]:
        return False
    for path in (repo / "models").rglob("*"):
        if not path.is_file() or path.suffix not in (".sql", ".py"):
            continue
        parts = path.relative_to(repo / "models").parts
        if len(parts) < 2 or scoring.layer_weights.get(parts[0], 0.0) <= 0:
            return False
        if scoring.node_weights.get(path.stem, 1.0) <= 0:
            return False
    return True


class DeImplFamily(DeFamily):
    """A data contract + a skeleton dbt project: the agent writes every model."""

    name: str = "de_impl"
    spec_type: type[TaskSpecBase] = DeImplTask
    checks_mutations: bool = True
    checks_hacks: bool = True
    generated: tuple[str, ...] = ("contract",)
    shares_scoring_work: bool = True

    def generate(
        self, task: LoadedTask, dataset_dir: Path, work: Path, first: bool = False
    ) -> list[Path]:
        """The contract, from a gold build; a first one also marks the models it cannot
        describe in ``contract_metadata.yaml`` (for ``task validate`` to warn about)."""
        contract = generate_contract(task, dataset_dir, work / "contracts")
        if first and mark_undescribed_models(task, contract):
            contract = generate_contract(task, dataset_dir, work / "contracts")
        return [contract]

    def next_steps(self, task: LoadedTask, shown: Callable[[Path], str]) -> list[str]:
        folder = shown(task.folder)
        return [
            f"  fill {folder}/contract_metadata.yaml (metrics, data-quality rules, notes), then "
            f"regenerate the contract: benchforge task contract {folder}",
            f"  add mutations to {shown(task.folder.parents[1] / 'mutations')}/"
            f"{task.spec.domain}.yaml (six kinds; see task_specs/mutations/README.md)",
        ]

    def documents(self, spec: Any) -> dict[str, str | None]:
        return {"contract": spec.contract, "contract_metadata": spec.contract_metadata}

    def scored_work(self, task: LoadedTask) -> ScoredWork:
        """Every model of the gold repository but those of weight 0."""
        spec = spec_as(task, DeImplTask)
        return ScoredWork(unit="models", names=weighted(list(repo_models(task.repo)), spec.scoring))

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        return [
            (field, f"{problem} (generate it: benchforge task contract {folder})")
            if field == "contract"
            else (field, problem)
            for field, problem in super().file_problems(spec, folder, root)
        ]

    def authoring_problems(self, task: LoadedTask) -> list[str]:
        spec = spec_as(task, DeImplTask)
        found = [
            f"{problem}: run `benchforge task contract {task.folder}`"
            for problem in contract_problems(
                task.file(spec.contract),
                task.repo,
                repo_version(task.repo),
                spec.scoring.layers,
                task.file(spec.contract_metadata) if spec.contract_metadata else None,
            )
        ]
        return found + super().authoring_problems(task)

    def mutation_warnings(self, task: LoadedTask) -> list[str]:
        """Besides none yet: a domain catalogue covering fewer than the required kinds."""
        warnings = super().mutation_warnings(task)
        path = self.mutations_file(task)
        try:
            catalogue = read_mutations(path)
        except ConfigError:
            return warnings
        kinds: set[str] = (
            {m.kind for m in catalogue.mutations} if catalogue else set(REQUIRED_KINDS)
        )
        missing = [k for k in REQUIRED_KINDS if k not in kinds]
        if missing:
            warnings.append(
                f"{_rel(path, task)} has no mutation of kind {', '.join(missing)} (a domain "
                f"catalogue covers all {len(REQUIRED_KINDS)}: task_specs/mutations/README.md)"
            )
        return warnings

    def scaffold(self, draft: TaskDraft, folder: Path) -> FamilyScaffold:
        """contract_metadata.yaml to fill, the domain's mutation catalogue if it has none; the
        contract is generated by the caller from a gold build (it has the dataset)."""
        (folder / "contract_metadata.yaml").write_text(CONTRACT_METADATA.format(id=draft.id))
        spec = DeImplTask.model_validate(
            {**draft.common(), "instructions": INSTRUCTIONS[self.name]}
        )
        written = ensure_domain_mutations(folder.parents[1], draft.domain)
        return FamilyScaffold(spec=spec, outside=[written] if written else [])

    def repo_materials(self, task: LoadedTask, dest: Path) -> None:
        spec = spec_as(task, DeImplTask)
        make_skeleton(task.repo, dest / "repo", spec.workspace_include)
        self.copy_documents(task, dest, {"contract": "data_contract.yaml"})

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> TaskGold:
        spec = spec_as(task, DeImplTask)
        folder = gold_cache(work / "gold", spec.domain, task.repo, dataset_dir)
        skeleton, received = _impl_materials(task, work / "materials" / spec.id)
        return TaskGold(
            gold_folder=folder,
            repo=task.repo,
            base_repo=skeleton,
            scored_nodes=None,
            received=received,
        )

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        """The gold as an agent would submit it (what verification scores, so the oracle's
        submission finds verification's kept score)."""
        spec = spec_as(task, DeImplTask)
        return _impl_materials(task, work / "solutions" / spec.suite / spec.id)[1]


class DeEvolFamily(DeFamily):
    """A working repository (gold v1) + a change request: the agent evolves it; gold v2 is an
    authored overlay of the repository."""

    name: str = "de_evol"
    spec_type: type[TaskSpecBase] = DeEvolTask
    checks_mutations: bool = True
    shares_scoring_work: bool = True

    def repository_pin(self, task: LoadedTask) -> tuple[str | None, str] | None:
        return spec_as(task, DeEvolTask).base_version, repo_version(task.repo)

    def next_steps(self, task: LoadedTask, shown: Callable[[Path], str]) -> list[str]:
        folder = shown(task.folder)
        return [
            f"  write {folder}/change_request.md",
            f"  put gold v2 in {folder}/gold_v2/: every file v2 adds or changes, whole, at its "
            "path in the repository (models/..., their .yml); files v2 deletes go under "
            "removed: in task.yaml",
            f"  optionally, mutations of the models v2 adds or changes in {folder}/mutations.yaml",
        ]

    def documents(self, spec: Any) -> dict[str, str | None]:
        return {"change_request": spec.change_request, "gold_v2": spec.gold_v2}

    def scored_work(self, task: LoadedTask) -> ScoredWork:
        """The models gold v2 adds or edits, but those of weight 0."""
        spec = spec_as(task, DeEvolTask)
        changed = evol_changed_models(task.repo, task.file(spec.gold_v2), spec.removed)
        return ScoredWork(unit="changed models", names=weighted(changed, spec.scoring))

    def repo_problems(self, spec: Any, root: Path) -> list[tuple[str, str]]:
        return [
            (f"removed[{i}]", f"'{removed}' is not a file of {spec.repo}")
            for i, removed in enumerate(spec.removed)
            if not (root / spec.repo / removed).is_file()
        ]

    def repo_materials(self, task: LoadedTask, dest: Path) -> None:
        copy_repo(task.repo, dest / "repo")
        self.copy_documents(task, dest, {"change_request": "change_request.md"})

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> TaskGold:
        spec = spec_as(task, DeEvolTask)
        cache = work / "gold"
        v1 = gold_cache(cache, spec.domain, task.repo, dataset_dir)
        v2_repo = _gold_v2(task, work / "materials" / spec.id)
        v2 = gold_cache(cache, spec.domain, v2_repo, dataset_dir)
        changed = changed_nodes(v1, v2)
        return TaskGold(
            gold_folder=v2, repo=v2_repo, base_repo=task.repo, scored_nodes=sorted(changed)
        )

    def mutations_file(self, task: LoadedTask) -> Path:
        """The task's own catalogue: its mutations edit models only v2 has or changes."""
        return task.file(EVOL_MUTATIONS)

    def authoring_problems(self, task: LoadedTask) -> list[str]:
        spec = spec_as(task, DeEvolTask)
        found = super().authoring_problems(task)
        if spec.base_version is None:
            return found
        current = repo_version(task.repo)
        if current == spec.base_version:
            return found
        return [
            f"{spec.repo} changed since the gold_v2 overlay was authored: base_version is "
            f"{spec.base_version}, the repository is now {current}. Re-check the overlay "
            f'against it, then set base_version: "{current}" (benchforge task base-version '
            f"{task.folder} prints it)",
            *found,
        ]

    def authoring_warnings(self, task: LoadedTask, parsed: ParsedRepos) -> list[str]:
        spec = spec_as(task, DeEvolTask)
        warnings = []
        if spec.base_version is None:
            warnings.append(
                f'no base_version: set it to "{repo_version(task.repo)}" (the repository '
                "version the overlay is authored against)"
            )
        overlay = task.file(spec.gold_v2)
        if not spec.removed and not any(p.is_file() and p.name != KEEP for p in overlay.rglob("*")):
            # v2 is v1: nothing is scored yet, so no weight or mutation to warn about
            return [*warnings, f"{spec.gold_v2}/ is empty: gold v2 changes nothing yet"]
        return warnings + super().authoring_warnings(task, parsed)

    def mutation_warnings(self, task: LoadedTask) -> list[str]:
        """The task's catalogue is optional: a warning only for one written but empty."""
        return super().mutation_warnings(task) if task.file(EVOL_MUTATIONS).exists() else []

    def scored_repo(self, task: LoadedTask, parsed: ParsedRepos) -> Path:
        spec = spec_as(task, DeEvolTask)
        return _gold_v2(task, parsed.scratch / "gold_v2" / spec.suite / spec.id)

    def scored_models(
        self, task: LoadedTask, manifest: DbtManifest, parsed: ParsedRepos
    ) -> set[str] | None:
        return changed_models(parsed.manifest(task.repo), manifest)

    def scaffold(self, draft: TaskDraft, folder: Path) -> FamilyScaffold:
        """change_request.md to write, an empty gold_v2/ overlay, an empty mutations.yaml;
        base_version is the repository's version now."""
        (folder / "change_request.md").write_text(
            CHANGE_REQUEST.format(title=draft.title, mark=SCAFFOLD_MARK)
        )
        (folder / "gold_v2").mkdir(exist_ok=True)
        (folder / "gold_v2" / KEEP).write_text("")
        (folder / EVOL_MUTATIONS).write_text(evol_mutations(draft.id, draft.domain))
        spec = DeEvolTask.model_validate(
            {
                **draft.common(),
                "instructions": INSTRUCTIONS[self.name],
                "base_version": repo_version(draft.repo_path),
            }
        )
        return FamilyScaffold(spec=spec)

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        spec = spec_as(task, DeEvolTask)
        return _gold_v2(task, work / "solutions" / spec.suite / f"{spec.id}@{spec.version}")


class DeArchFamily(DeFamily):
    """A business requirement + the repository: a blueprint (``design/blueprint.yaml``),
    judged by the architecture judge on the task's flat rubric. The reference blueprint is the
    oracle's answer and, with the empty blueprint, what verification checks the judge on."""

    name: str = "de_arch"
    spec_type: type[TaskSpecBase] = DeArchTask
    submission: str = "design"
    heldout: bool = False  # judged, not executed: the blueprint does not depend on the data
    judged: bool = True
    detail_template: str = "judged_detail.html.j2"

    def next_steps(self, task: LoadedTask, shown: Callable[[Path], str]) -> list[str]:
        folder = shown(task.folder)
        return [
            f"  write {folder}/requirement.md, {folder}/reference_blueprint.yaml and the "
            "rubric in task.yaml (replace each TODO(scaffold))"
        ]

    def documents(self, spec: Any) -> dict[str, str | None]:
        return {"requirement": spec.requirement, "reference": spec.reference}

    def scored_work(self, task: LoadedTask) -> ScoredWork:
        return ScoredWork(
            unit="rubric items", names=[item.id for item in spec_as(task, DeArchTask).rubric]
        )

    def file_problems(self, spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
        problems = super().file_problems(spec, folder, root)
        arch = spec if isinstance(spec, DeArchTask) else None
        if arch is not None and not arch.expected_output.startswith(f"{self.submission}/"):
            problems.append(
                ("expected_output", f"must be a file under {self.submission}/ (the submission)")
            )
        return problems

    def authoring_warnings(self, task: LoadedTask, parsed: ParsedRepos) -> list[str]:
        return []  # judged on its rubric: no weights, no mutations

    def scaffold(self, draft: TaskDraft, folder: Path) -> FamilyScaffold:
        """requirement.md and the reference blueprint to write, a rubric of one item per
        dimension to replace (each marked for ``task validate`` to warn about)."""
        (folder / "requirement.md").write_text(
            REQUIREMENT.format(title=draft.title, mark=SCAFFOLD_MARK)
        )
        (folder / "reference_blueprint.yaml").write_text(
            REFERENCE_BLUEPRINT.format(id=draft.id, mark=SCAFFOLD_MARK)
        )
        spec = DeArchTask.model_validate(
            {
                **draft.common(),
                "instructions": INSTRUCTIONS[self.name],
                "expected_output": f"{self.submission}/blueprint.yaml",
                "rubric": [RubricItem.model_validate(item) for item in RUBRIC],
            }
        )
        return FamilyScaffold(spec=spec)

    def repo_materials(self, task: LoadedTask, dest: Path) -> None:
        copy_repo(task.repo, dest / "repo")
        self.copy_documents(task, dest, {"requirement": "requirement.md"})
        (dest / self.submission).mkdir(exist_ok=True)
        (dest / self.submission / ".keep").write_text("")

    def judged_output(self, task: LoadedTask, workspace: Path) -> Path:
        return workspace / spec_as(task, DeArchTask).expected_output

    def judged_material(self, task: LoadedTask, gold: Any) -> JudgedMaterial:
        if not isinstance(gold, ArchGold):
            raise TypeError(f"{task.key}: a de_arch gold is an ArchGold, not {type(gold).__name__}")
        rubric = FlatRubricRecord(
            version=gold.rubric_version,
            task=task.key,
            requirement=gold.requirement,
            items=gold.items,
        )
        return JudgedMaterial(question=gold.requirement, rubric=rubric)

    def prepare_gold(
        self,
        task: LoadedTask,
        dataset_dir: Path,
        work: Path,
        datasets: Mapping[str, Path] | None = None,
    ) -> ArchGold:
        spec = spec_as(task, DeArchTask)
        items = [FlatRubricItem.model_validate(i.model_dump()) for i in spec.rubric]
        return ArchGold(
            items=items,
            requirement=task.file(spec.requirement).read_text(encoding="utf-8"),
            rubric_version=content_hash([i.model_dump(mode="json") for i in items]),
            reference=task.file(spec.reference).read_text(encoding="utf-8"),
            max_words=spec.max_blueprint_words,
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
        answer: str | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> SubmissionScore:
        spec = spec_as(task, DeArchTask)
        blueprint = _read_text(submission.parent / spec.expected_output)
        return self.judge_blueprint(gold, blueprint, judge, output=spec.expected_output)

    def judge_blueprint(
        self, gold: ArchGold, blueprint: str, judge: Judge | None, output: str | None = None
    ) -> SubmissionScore:
        """``output``: where the blueprint was read from, relative to the workspace (kept in
        the record, for the run browser)."""
        if judge is None:
            raise UnsupportedTaskError("de_arch blueprints are judged: no judge was given")
        mine = judge.for_task()
        verdict = judge_architecture(
            mine,
            gold.items,
            blueprint,
            requirement=gold.requirement,
            rubric_version=gold.rubric_version,
            max_words=gold.max_words,
        )
        metrics = {"rubric": 100.0 * verdict.score} if verdict.score is not None else {}
        metrics |= {k: 100.0 * v for k, v in verdict.by_dimension.items() if v is not None}
        notes = [f"unscored items: {', '.join(verdict.unscored)}"] if verdict.unscored else []
        notes += [f"blueprint {verdict.truncated}"] if verdict.truncated else []
        return SubmissionScore(
            metrics=metrics,
            primary="rubric",
            success=verdict.score is not None and verdict.score >= SUCCESS_FRACTION,
            detail="; ".join(notes) or None,
            breakdown=judge_record(judge=mine, architecture=verdict, output=output),
            reusable=not verdict.unscored,
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
        records = [judge_record_of(s.breakdown) for s in (reference, empty)]
        requests = sum(r.requests for r in records if r is not None)
        unscored = records[0].unscored if records[0] is not None else []
        judged = JudgedVerification(
            reference_score=ref, empty_score=nothing, unscored=unscored, judge_requests=requests
        )
        return TaskVerification(
            task=task.key,
            dataset=str(dataset_dir),
            checks=judged.checks(100.0 * SUCCESS_FRACTION),
            problems=problems,
            record=judged,
        )

    def solution(
        self,
        task: LoadedTask,
        work: Path,
        dataset_dir: Path | None = None,
        datasets: Mapping[str, Path] | None = None,
    ) -> Path | None:
        spec = spec_as(task, DeArchTask)
        reference = task.file(spec.reference)
        key = content_key(spec.expected_output, reference.read_bytes())

        def write(dest: Path) -> None:
            target = dest / Path(spec.expected_output).relative_to(self.submission)
            target.parent.mkdir(parents=True)
            shutil.copyfile(reference, target)

        return publish_once(
            work / "solutions" / spec.suite / f"{spec.id}@{spec.version}" / key, write
        )


def _impl_materials(task: LoadedTask, folder: Path) -> tuple[Path, Path]:
    """The de_impl skeleton and the gold as received, published once under ``folder`` by a
    key of their content: concurrent runs share them safely."""
    spec = spec_as(task, DeImplTask)
    keyed = folder / skeleton_key(task.repo, spec.workspace_include)
    skeleton = publish_once(
        keyed / "skeleton", lambda path: make_skeleton(task.repo, path, spec.workspace_include)
    )
    received = publish_once(
        keyed / "gold", lambda path: gold_as_received(task.repo, skeleton, path)
    )
    return skeleton, received


def _gold_v2(task: LoadedTask, folder: Path) -> Path:
    """Gold v2 of a de_evol task (:func:`apply_overlay`), published once under ``folder`` by a
    key of its inputs: concurrent runs and verifications never copy over each other, and the
    gold cache never hashes a half-copied repository."""
    spec = spec_as(task, DeEvolTask)
    overlay = task.file(spec.gold_v2)
    key = overlay_key(task.repo, overlay, spec.removed)
    return publish_once(
        folder / f"gold_v2-{key}",
        lambda dest: apply_overlay(task.repo, overlay, spec.removed, dest),
    )


class ArchGold(BaseModel):
    """What a blueprint is judged against: the flat rubric and the requirement."""

    items: list[FlatRubricItem]
    requirement: str
    rubric_version: str
    reference: str
    max_words: int | None = Field(
        default=DEFAULT_MAX_BLUEPRINT_WORDS,
        description="the judge reads the blueprint up to this many words",
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


DE_IMPL = register(DeImplFamily())
DE_EVOL = register(DeEvolFamily())
DE_ARCH = register(DeArchFamily())

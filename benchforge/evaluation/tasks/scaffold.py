"""``benchforge task new FAMILY``: a task folder a maintainer edits instead of writing it.

The common fields come from the command line (:class:`TaskDraft`); each family that can be
scaffolded implements :class:`ScaffoldingFamily` (``scaffold`` writes its documents and returns
its spec) in its own module, so a new family scaffolds without touching this one. ``task.yaml``
is written from the returned spec with every field explained
(:func:`~benchforge.evaluation.tasks.yamldoc.commented_yaml`) and loaded back: a scaffold that
does not validate is an error here, not a surprise at ``task validate``. Files a family
generates from a build (the de_impl contract) are the caller's to write: it has the dataset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from benchforge.core.catalogue import TASKS_DIR
from benchforge.core.errors import ConfigError
from benchforge.evaluation.tasks.loader import TASK_FILE, load_task
from benchforge.evaluation.tasks.models import DatasetRef, LoadedTask, TaskSpecBase
from benchforge.evaluation.tasks.templates import TASK_HEADER, domain_mutations
from benchforge.evaluation.tasks.yamldoc import commented_yaml


class TaskDraft(BaseModel):
    """What every family's scaffold starts from: the common fields, resolved."""

    model_config = ConfigDict(frozen=True)

    family: str
    id: str
    suite: str
    title: str
    domain: str
    dataset: DatasetRef
    repo: str  # as task.yaml says it: relative to the catalogue root when inside it
    root: Path  # the catalogue root (the folder holding task_specs/)

    @property
    def folder(self) -> Path:
        return self.root / TASKS_DIR / self.suite / self.id

    @property
    def repo_path(self) -> Path:
        return (self.root / self.repo).resolve()

    def common(self) -> dict[str, object]:
        """The fields every family's spec takes, as keyword arguments."""
        return {
            "family": self.family,
            "id": self.id,
            "suite": self.suite,
            "title": self.title,
            "domain": self.domain,
            "dataset": self.dataset,
            "repo": self.repo,
        }


@runtime_checkable
class ScaffoldingFamily(Protocol):
    """A family ``benchforge task new`` can scaffold. ``generated``: the spec fields naming
    files the caller generates after scaffolding (they may be missing when the scaffold is
    loaded back)."""

    name: str
    generated: tuple[str, ...]

    def scaffold(self, draft: TaskDraft, folder: Path) -> FamilyScaffold:
        """Writes the family's documents into ``folder``; returns the task's spec."""
        ...


class FamilyScaffold(BaseModel):
    """What a family's ``scaffold`` made: the spec, and files it wrote outside the task folder
    (a domain's mutation catalogue)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    spec: TaskSpecBase
    outside: list[Path] = []


class Scaffold(BaseModel):
    """A scaffolded task: the files written, and what the maintainer does next."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task: LoadedTask
    written: list[Path]


def scaffolding_families() -> list[str]:
    from benchforge.evaluation.families.registry import families

    return sorted(n for n, f in families().items() if isinstance(f, ScaffoldingFamily))


def scaffold_task(draft: TaskDraft, *, force: bool = False) -> Scaffold:
    """Writes ``<root>/task_specs/<suite>/<id>/`` for ``draft`` and loads it back. An existing
    task folder is an error unless ``force`` (its files are then overwritten)."""
    from benchforge.evaluation.families.registry import get_family

    family = get_family(draft.family)
    if not isinstance(family, ScaffoldingFamily):
        raise ConfigError(
            f"`benchforge task new` cannot scaffold {draft.family} tasks; it scaffolds "
            f"{', '.join(scaffolding_families())}. A {draft.family} task is written by hand: "
            f"see {TASKS_DIR}/README.md"
        )
    folder = draft.folder
    if (folder / TASK_FILE).exists() and not force:
        raise ConfigError(f"{folder / TASK_FILE} exists (pass --force to overwrite the scaffold)")
    folder.mkdir(parents=True, exist_ok=True)
    made = family.scaffold(draft, folder)
    rewrite_spec(folder / TASK_FILE, made.spec)
    task = load_task(folder, missing_ok=family.generated)
    written = sorted(p for p in folder.rglob("*") if p.is_file())
    return Scaffold(task=task, written=[*written, *made.outside])


def rewrite_spec(path: Path, spec: TaskSpecBase) -> None:
    """Writes ``spec`` as a scaffolded task.yaml: every field explained, unset ones commented
    out with their defaults."""
    folder = path.parent
    header = TASK_HEADER.format(
        family=spec.family, folder=f"{TASKS_DIR}/{folder.parent.name}/{folder.name}"
    )
    path.write_text(commented_yaml(spec, header, first=("family",)))


def ensure_domain_mutations(tasks_dir: Path, domain: str) -> Path | None:
    """``<tasks_dir>/mutations/<domain>.yaml`` as an empty catalogue listing the required
    kinds, if the domain has none yet; the path written, or None when one exists."""
    path = tasks_dir / "mutations" / f"{domain}.yaml"
    if path.exists():
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(domain_mutations(domain))
    return path


def relative_to_root(path: Path, root: Path) -> str:
    """``path`` as a spec writes it: relative to the catalogue root when inside it (the
    catalogue moves as a whole), else absolute."""
    path, root = path.expanduser().resolve(), root.expanduser().resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)

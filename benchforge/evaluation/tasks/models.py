"""Task specs: one folder per task under ``task_specs/<suite>/<task_id>/`` with a ``task.yaml``.

The families of data-engineering tasks (after DAComp):
- ``de_impl``: a data contract + a skeleton dbt project -> the agent writes every model;
- ``de_evol``: a working repository (gold v1) + a change request -> the agent evolves it;
  gold v2 is an authored overlay of the repository;
- ``de_arch``: a business requirement + the repository -> a blueprint, judged on a flat rubric.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from benchforge.core.errors import UnsupportedTaskError
from benchforge.evaluation.judges.length import DEFAULT_MAX_BLUEPRINT_WORDS

Layer = str  # staging | intermediate | marts by default; a layer mapping may name others
IMPL_WEIGHTS: dict[Layer, float] = {"staging": 15.0, "intermediate": 25.0, "marts": 60.0}
PRIMARY_ROLE = "primary"  # the role of a task's lone ``dataset``
ROLE_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetRef(_Strict):
    """The dataset a task runs on: a domain synthesized at a scale and seed (a shipped domain or
    a domain spec), or a dataset that already exists at a ``location`` (one made by
    ``benchforge dataset import``, an anonymized release, ...)."""

    domain: str = Field(description="The domain the data is of; the same as the task's domain.")
    scale: float = Field(
        default=0.1, gt=0, description="Synthesized datasets: the domain spec's size factor."
    )
    seed: int = Field(default=7, description="Synthesized datasets: the generator's seed.")
    location: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "A dataset folder (relative to the catalogue root, or absolute) or an s3:// prefix. "
            "Instead of scale and seed: the dataset is used as it is, never synthesized, and "
            "has no held-out twin (trials are scored on it)."
        ),
    )

    @model_validator(mode="after")
    def _location_or_generation(self) -> DatasetRef:
        if self.location is not None and {"scale", "seed"} & self.model_fields_set:
            raise ValueError("give either location or scale/seed, not both")
        return self

    def resolve_location(self, catalogue_root: Path) -> str | None:
        """``location`` as an absolute folder or s3:// prefix (None: synthesized)."""
        if self.location is None or self.location.startswith("s3://"):
            return self.location
        path = Path(self.location).expanduser()
        return str(path if path.is_absolute() else (catalogue_root / path).resolve())


class LayerRule(_Strict):
    """Puts the models it matches in ``layer``. Exactly one matcher: ``folder`` (a path
    prefix of the model file under the project, e.g. ``models/reporting``), ``tag`` (a dbt
    tag) or ``fqn`` (a glob over the dotted fqn, e.g. ``shop.reporting.*``)."""

    layer: str = Field(min_length=1, description="The layer the matched models go to.")
    folder: str | None = Field(
        default=None, description="A folder of the project, e.g. models/reporting."
    )
    tag: str | None = Field(default=None, description="A dbt tag of the models.")
    fqn: str | None = Field(default=None, description="A glob over dotted fqns: shop.reporting.*")

    @model_validator(mode="after")
    def _one_matcher(self) -> LayerRule:
        given = [m for m in ("folder", "tag", "fqn") if getattr(self, m) is not None]
        if len(given) != 1:
            raise ValueError(f"a layer rule needs exactly one of folder, tag, fqn (got {given})")
        return self


class DeScoring(_Strict):
    """How nodes are weighted. Missing layers get weight 0 and the rest renormalize."""

    layer_weights: dict[Layer, float] = Field(
        default_factory=lambda: dict(IMPL_WEIGHTS),
        description="Layer -> its share of the score; a layer not named weighs 0.",
    )
    layers: list[LayerRule] = Field(
        default_factory=list,
        description=(
            "How models map to layers, first match wins; a model no rule matches gets the first "
            "folder under models/ (staging, intermediate, marts, or another name)."
        ),
    )
    node_weights: dict[str, float] = Field(
        default_factory=dict, description="Per model name; default 1."
    )
    rel_tol: float = Field(default=1e-9, ge=0, lt=1, description="Relative float tolerance.")

    @field_validator("layer_weights")
    @classmethod
    def _positive(cls, v: dict[str, float]) -> dict[str, float]:
        if any(w < 0 for w in v.values()) or sum(v.values()) <= 0:
            raise ValueError("layer weights must be non-negative with a positive sum")
        return v


class TaskSpecBase(_Strict):
    """What every task spec has. A family's spec subclasses it with ``family: Literal[name]``
    and its own fields; the loader validates a ``task.yaml`` against the union of the
    registered families' specs (:mod:`benchforge.evaluation.families`)."""

    if TYPE_CHECKING:  # declared by each family's spec as Literal[its name]
        family: str

    id: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_.-]*$",
        description="The task's id: its folder's name, unique in its suite.",
    )
    version: str = Field(
        default="1", description="Bumped when the task changes what it asks or how it scores."
    )
    suite: str = Field(description="The suite the task belongs to: its parent folder's name.")
    title: str = Field(description="One line: what the task is about (TASK.md's heading).")
    domain: str = Field(description="The data's domain (crm, ads, ... or your own).")
    # Given by the author, or (with ``datasets``) the primary role's, filled in by validation.
    dataset: DatasetRef = Field(
        default=None,  # type: ignore[assignment]
        description="The task's dataset (its role is 'primary'). Or give datasets instead.",
    )
    datasets: dict[str, DatasetRef] = Field(
        default_factory=dict,
        description="Several datasets by role (role -> dataset, e.g. crm_pg, crm_sqlite), "
        "instead of dataset. The role 'primary', else the first, is the task's dataset "
        "(agents' data_dir, its domain); every role is resolved, versioned and mounted.",
    )
    repo: str | None = Field(
        default=None,
        description="The gold repository, relative to the folder holding the tasks folder "
        "(the catalogue root: dbt_projects/<domain> for shipped tasks); for the families "
        "whose tasks are a repository (the DE families), none for the others.",
    )
    instructions: str = Field(min_length=20, description="What the agent is asked to do.")
    tags: list[str] = Field(
        default_factory=list, description="Free labels for filtering and the catalogue page."
    )

    @model_validator(mode="before")
    @classmethod
    def _dataset_or_datasets(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("datasets") and data.get("dataset") is not None:
            raise ValueError(
                "give either dataset (one dataset, role 'primary') or datasets (datasets by "
                "role), not both"
            )
        return data

    @field_validator("datasets")
    @classmethod
    def _role_names(cls, roles: dict[str, DatasetRef]) -> dict[str, DatasetRef]:
        for role in roles:
            if not re.fullmatch(ROLE_PATTERN, role):
                raise ValueError(
                    f"role {role!r}: lower-case letters, digits and _, starting with a letter"
                )
        return roles

    @model_validator(mode="after")
    def _dataset_domain(self) -> TaskSpecBase:
        if self.datasets:
            # not an author's field now: left out of model_fields_set, so not written back
            object.__setattr__(self, "dataset", self.datasets[self.primary_role])
        elif self.dataset is None:
            raise ValueError("a task needs a dataset: give dataset (or datasets by role)")
        if self.dataset.domain != self.domain:
            raise ValueError(f"dataset.domain '{self.dataset.domain}' != domain '{self.domain}'")
        return self

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A spec with datasets by role serializes without the derived ``dataset``, so it
        validates again."""
        data: dict[str, Any] = handler(self)
        if self.datasets:
            data.pop("dataset", None)
        return data

    @property
    def primary_role(self) -> str:
        """The role of the task's dataset (``dataset``, the agents' ``data_dir``)."""
        if not self.datasets or PRIMARY_ROLE in self.datasets:
            return PRIMARY_ROLE
        return next(iter(self.datasets))

    def dataset_roles(self) -> dict[str, DatasetRef]:
        """Every dataset of the task by role, the primary first (a lone ``dataset`` is the
        role 'primary')."""
        if not self.datasets:
            return {PRIMARY_ROLE: self.dataset}
        primary = self.primary_role
        return {primary: self.datasets[primary]} | {
            role: ref for role, ref in self.datasets.items() if role != primary
        }


class RepoTaskSpec(TaskSpecBase):
    """A task whose material is a dbt repository (the DE and DA families): ``repo`` required."""

    repo: str = Field(
        description="The gold repository, relative to the folder holding the tasks folder "
        "(the catalogue root: dbt_projects/<domain> for shipped tasks)."
    )


class DeImplTask(RepoTaskSpec):
    family: Literal["de_impl"] = Field(
        description="de_impl: the agent writes every model from a data contract."
    )
    contract: str = Field(
        default="data_contract.yaml",
        description="Generated from the gold build + contract_metadata (benchforge task contract).",
    )
    contract_metadata: str | None = Field(
        default="contract_metadata.yaml", description="Authored: metrics, rules, per-model notes."
    )
    workspace_include: list[str] = Field(
        default_factory=list,
        description="Globs of repository files the agent also receives beside the skeleton (a "
        "style guide, docs). Version-control folders, notebooks and any file holding a gold "
        "model's SQL are never shipped, listed or not.",
    )
    scoring: DeScoring = DeScoring()

    @field_validator("workspace_include")
    @classmethod
    def _inside_the_repository(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts:
                raise ValueError(f"{pattern!r}: a glob relative to the repository, inside it")
        return patterns


class DeEvolTask(RepoTaskSpec):
    family: Literal["de_evol"] = Field(
        description="de_evol: the agent changes a working repository as a request asks."
    )
    change_request: str = Field(
        default="change_request.md", description="The request the agent gets (a file here)."
    )
    gold_v2: str = Field(
        default="gold_v2", description="Overlay folder: files that v2 adds or changes."
    )
    removed: list[str] = Field(default_factory=list, description="Repo files v2 deletes.")
    base_version: str | None = Field(
        default=None,
        description=(
            "repo_version of gold v1 the overlay was authored against; verification fails when "
            "the repository has changed since, so overlays (whole-file copies) cannot silently "
            "revert later v1 edits."
        ),
    )
    scoring: DeScoring = DeScoring(
        layer_weights={"staging": 1.0, "intermediate": 59.0, "marts": 40.0}
    )


class RubricItem(_Strict):
    """One item of a de_arch rubric: what a blueprint must do to earn its points."""

    id: str = Field(description="Unique in the rubric, e.g. BA1.")
    dimension: Literal["business_alignment", "technical_feasibility", "design_quality"] = Field(
        description="What the item judges."
    )
    criterion: str = Field(min_length=10, description="What the blueprint must say or do.")
    points: float = Field(gt=0, description="What meeting it earns.")


class DeArchTask(RepoTaskSpec):
    family: Literal["de_arch"] = Field(
        description="de_arch: the agent designs a change (a blueprint), judged on a rubric."
    )
    requirement: str = Field(
        default="requirement.md", description="The business requirement (a file here)."
    )
    expected_output: str = Field(default="blueprint.yaml", description="File the agent writes.")
    reference: str = Field(
        default="reference_blueprint.yaml",
        description="The reference blueprint (the oracle's answer; never in a workspace).",
    )
    rubric: list[RubricItem] = Field(
        min_length=3, description="Flat items the architecture judge scores the blueprint on."
    )
    max_blueprint_words: int = Field(
        default=DEFAULT_MAX_BLUEPRINT_WORDS,
        ge=100,
        description="The judge reads the blueprint's visible text up to this many words; the "
        "rest is cut (the score says so).",
    )

    @model_validator(mode="after")
    def _unique_items(self) -> DeArchTask:
        ids = [i.id for i in self.rubric]
        if len(set(ids)) != len(ids):
            raise ValueError("rubric item ids must be unique")
        return self


class LoadedTask(BaseModel):
    """A validated task and the folder it came from."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    spec: SerializeAsAny[TaskSpecBase]  # the family's spec model
    folder: Path

    @property
    def key(self) -> str:
        return f"{self.spec.suite}/{self.spec.id}@{self.spec.version}"

    def file(self, relative: str) -> Path:
        return self.folder / relative

    @property
    def has_repo(self) -> bool:
        return self.spec.repo is not None

    @property
    def repo(self) -> Path:
        """The gold repository: ``spec.repo`` under the folder that holds the task's tasks
        folder (``<root>/task_specs/<suite>/<task_id>``). Only for tasks that name one."""
        if self.spec.repo is None:
            raise UnsupportedTaskError(f"{self.key} names no repository (repo)")
        return self.folder.parents[2] / self.spec.repo

"""Calibration cases: self-contained judging problems that humans label and judges re-judge.

A *case* is one thing a judge decides, with everything needed to decide it again later, with
no run, task folder or dataset at hand:

- ``rubric_item``: one rubric item on one output. The rubric it comes from is stored once per
  rubric version in the same file (a ``rubric`` record: the full ``ResolvedRubric`` of a
  ``da_open`` task on its dataset; a ``flat_rubric`` record: a ``de_arch`` task's items and
  requirement), and the case names it by version.
- ``gsb_pair``: one output against one baseline report on one GSB dimension (readability or
  depth). The two dimensions of one (output, baseline) comparison are two cases sharing a
  ``pair`` id: the judge compares the pair once (both orders, both dimensions) and each case
  takes its dimension's verdict.
- ``milestone``: whether one milestone of a trial's gold path was achieved (yes / no). The
  milestone cases of one trial share a ``call`` id and the ``milestones`` material (the gold
  path, the excerpts of the trajectory the judge was shown, the trial's step count): the judge
  decides every milestone of the trial in one call and each case takes its milestone's verdict.

The cases file (``cases.jsonl``) holds one JSON object a line, ``record`` telling which:
``{"record": "rubric", "rubric": {...ResolvedRubric}}``,
``{"record": "flat_rubric", "version": ..., "task": ..., "requirement": ..., "items": [...]}``
and ``{"record": "case", "case_id": ..., "kind": ..., ...}``.

Labels are read by :mod:`benchforge.evaluation.calibration.labels`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from benchforge.core.errors import ConfigError
from benchforge.evaluation.explore.models import Excerpt, GoldPath, Milestone
from benchforge.evaluation.judges.models import (
    FlatRubricItem,
    GsbDimension,
    ResolvedRubric,
    content_hash,
)

CaseKind = Literal["rubric_item", "gsb_pair", "milestone"]
CASE_KINDS: tuple[CaseKind, ...] = ("rubric_item", "gsb_pair", "milestone")
CASE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]{0,199}$"
"""Case ids travel as an HTTP header (``x-benchforge-case``): ASCII, no spaces."""


class CasesError(ConfigError):
    """A cases file is malformed or inconsistent (names the file and line)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RubricRecord(_Strict):
    """A hierarchical rubric resolved on one dataset, stored once for all its cases."""

    record: Literal["rubric"] = "rubric"
    rubric: ResolvedRubric


class FlatRubricRecord(_Strict):
    """A ``de_arch`` task's flat rubric and the requirement the blueprint answers."""

    record: Literal["flat_rubric"] = "flat_rubric"
    version: str
    task: str
    requirement: str
    items: list[FlatRubricItem] = Field(min_length=1)


class JudgedMaterial(_Strict):
    """What a judged family's judge scores a task's outputs against (the family says:
    ``TaskFamily.judged_material``): the question it is told the output answers, the rubric
    (resolved on the task's dataset, or flat), and the baseline reports the output is compared
    with on each GSB dimension, by id (none: the family's judge compares nothing)."""

    question: str
    rubric: ResolvedRubric | FlatRubricRecord
    baselines: dict[str, str] = Field(default_factory=dict)

    @property
    def rubric_version(self) -> str:
        return self.rubric.version

    def item_ids(self) -> list[str]:
        return [item.id for item in self.rubric.items]


class MilestoneMaterial(_Strict):
    """What the milestone judge decides a trial's milestones on, as it was shown: the gold
    path (steps, milestones with their values), the code-found excerpts of the trajectory and
    the trial's number of agent steps."""

    gold: GoldPath
    excerpts: list[Excerpt] = Field(default_factory=list)
    steps: int = Field(ge=0)


class CalibrationCase(_Strict):
    """One judging problem (see the module docstring). ``question``: what the judge is told
    the output answers (the DA question, or the de_arch requirement)."""

    record: Literal["case"] = "case"
    case_id: str = Field(pattern=CASE_ID_PATTERN)
    kind: CaseKind
    task: str = Field(description="task key: suite/id@version")
    family: str
    agent: str
    model: str = ""
    trial: str = Field(description="the trial's slug in its run")
    run_id: str = ""
    question: str
    output: str = Field(description="the judged text, as the agent wrote it")
    rubric: str | None = Field(default=None, description="rubric_item: the rubric's version")
    item_id: str | None = None
    pair: str | None = Field(
        default=None,
        pattern=CASE_ID_PATTERN,
        description="gsb_pair: the comparison both dimensions' cases share",
    )
    baseline_id: str | None = None
    baseline: str | None = Field(default=None, description="gsb_pair: the baseline report")
    dimension: GsbDimension | None = None
    milestone_key: str | None = Field(default=None, description="milestone: the one judged")
    call: str | None = Field(
        default=None,
        pattern=CASE_ID_PATTERN,
        description="milestone: the judge call every milestone case of the trial shares",
    )
    milestones: MilestoneMaterial | None = Field(
        default=None, description="milestone: the judge's material (``output``: the answer)"
    )

    @model_validator(mode="after")
    def _fields_of_kind(self) -> CalibrationCase:
        if self.kind == "rubric_item":
            missing = [f for f in ("rubric", "item_id") if getattr(self, f) is None]
        elif self.kind == "milestone":
            missing = [
                f for f in ("milestone_key", "call", "milestones") if getattr(self, f) is None
            ]
            if not missing and self.milestone() is None:
                raise ValueError(f"the gold path has no milestone {self.milestone_key!r}")
        else:
            missing = [
                f
                for f in ("pair", "baseline_id", "baseline", "dimension")
                if getattr(self, f) is None
            ]
        if missing:
            raise ValueError(f"a {self.kind} case needs {', '.join(missing)}")
        return self

    def milestone(self) -> Milestone | None:
        """A milestone case's milestone (key and expected value) on its gold path."""
        if self.milestones is None:
            return None
        found = [m for m in self.milestones.gold.milestones if m.key == self.milestone_key]
        return found[0] if found else None

    @property
    def unit(self) -> str | None:
        """What the judge decides together with other cases (a GSB pair, a trial's
        milestones): sampled together, judged in one call. None: the case alone."""
        return self.pair or self.call

    @property
    def contestant(self) -> str:
        """Who the leaderboard ranks: the agent, with its model when it has one."""
        return f"{self.agent} ({self.model})" if self.model else self.agent


_Record = Annotated[
    RubricRecord | FlatRubricRecord | CalibrationCase, Field(discriminator="record")
]
_RECORD = TypeAdapter(_Record)


class ItemRange(_Strict):
    """What a rubric item's label may be: earned points in [low, high] (0 and the item's
    points, a penalty's being negative)."""

    points: float
    low: float
    high: float


class CaseSet(BaseModel):
    """Cases and the rubrics they cite, by rubric version."""

    model_config = ConfigDict(frozen=True)

    rubrics: dict[str, ResolvedRubric] = Field(default_factory=dict)
    flat_rubrics: dict[str, FlatRubricRecord] = Field(default_factory=dict)
    cases: list[CalibrationCase] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> CaseSet:
        seen: set[str] = set()
        for case in self.cases:
            if case.case_id in seen:
                raise ValueError(f"case id {case.case_id!r} is used twice")
            seen.add(case.case_id)
            if case.kind == "rubric_item":
                self.item_range(case)  # raises on an unknown rubric or item
        return self

    def by_id(self) -> dict[str, CalibrationCase]:
        return {c.case_id: c for c in self.cases}

    def of_kind(self, kind: CaseKind) -> list[CalibrationCase]:
        return [c for c in self.cases if c.kind == kind]

    def item_range(self, case: CalibrationCase) -> ItemRange:
        """The label range of a rubric item case, from the rubric it cites."""
        points: float | None = None
        if case.rubric in self.rubrics:
            found = [i for i in self.rubrics[case.rubric].items if i.id == case.item_id]
            points = found[0].points if found else None
        elif case.rubric in self.flat_rubrics:
            flat = [i for i in self.flat_rubrics[case.rubric].items if i.id == case.item_id]
            points = flat[0].points if flat else None
        else:
            raise ValueError(f"case {case.case_id}: no rubric with version {case.rubric!r}")
        if points is None:
            raise ValueError(
                f"case {case.case_id}: rubric {case.rubric} has no item {case.item_id!r}"
            )
        return ItemRange(points=points, low=min(points, 0.0), high=max(points, 0.0))

    def item_type(self, case: CalibrationCase) -> str:
        """What kind of thing the case judges, for per-type agreement: a hierarchical rubric
        item's type (accuracy, completeness, ...), a flat item's dimension
        (business_alignment, ...), a GSB case's ``gsb:<dimension>``."""
        if case.kind == "gsb_pair":
            return f"gsb:{case.dimension}"
        if case.kind == "milestone":
            return "milestone"
        if case.rubric in self.rubrics:
            item = next(i for i in self.rubrics[case.rubric].items if i.id == case.item_id)
            return str(item.type)
        flat = self.flat_rubrics[case.rubric or ""]
        return next(i.dimension for i in flat.items if i.id == case.item_id)

    def rubric_versions(self) -> list[str]:
        return sorted(set(self.rubrics) | set(self.flat_rubrics))

    @property
    def version(self) -> str:
        """Content hash of the cases (what a calibration was computed on)."""
        return content_hash(
            [c.model_dump(mode="json") for c in self.cases] + self.rubric_versions()
        )

    def subset(self, case_ids: Iterable[str]) -> CaseSet:
        wanted = set(case_ids)
        cases = [c for c in self.cases if c.case_id in wanted]
        used = {c.rubric for c in cases if c.rubric is not None}
        return CaseSet(
            rubrics={k: v for k, v in self.rubrics.items() if k in used},
            flat_rubrics={k: v for k, v in self.flat_rubrics.items() if k in used},
            cases=cases,
        )


def read_cases(path: Path) -> CaseSet:
    """The cases file at ``path``; a ``CasesError`` names the file and line of any problem."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CasesError(f"{path}: cannot read the cases file: {exc}") from None
    rubrics: dict[str, ResolvedRubric] = {}
    flats: dict[str, FlatRubricRecord] = {}
    cases: list[CalibrationCase] = []
    where: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = _RECORD.validate_python(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise CasesError(f"{path}:{number}: invalid record: {_describe(exc)}") from None
        if isinstance(record, RubricRecord):
            rubrics[record.rubric.version] = record.rubric
        elif isinstance(record, FlatRubricRecord):
            flats[record.version] = record
        else:
            if record.case_id in where:
                raise CasesError(
                    f"{path}:{number}: case id {record.case_id!r} is already used on line "
                    f"{where[record.case_id]}"
                )
            where[record.case_id] = number
            cases.append(record)
    if not cases:
        raise CasesError(f"{path}: no cases")
    try:
        return CaseSet(rubrics=rubrics, flat_rubrics=flats, cases=cases)
    except ValidationError as exc:
        raise CasesError(f"{path}: {_describe(exc)}") from None


def write_cases(cases: CaseSet, path: Path) -> Path:
    """Writes the rubric records first, then the cases (one JSON object a line)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [RubricRecord(rubric=r).model_dump_json() for _, r in sorted(cases.rubrics.items())]
    lines += [f.model_dump_json() for _, f in sorted(cases.flat_rubrics.items())]
    lines += [c.model_dump_json() for c in cases.cases]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
    return str(exc)

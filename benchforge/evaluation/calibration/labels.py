"""Human labels of calibration cases, and the "truth" file the mock's noisy judges answer from.

Labels file: CSV (``.csv``) or JSON lines (``.jsonl`` / ``.json``), one label per row:

- ``case_id``: a case of the cases file;
- ``rater``: who labelled it (any non-empty name; one label per case and rater). Names are
  compared and reported stripped and case-folded: "Ann" and "ann" are one rater;
- ``label``:
  - ``rubric_item`` cases: the **earned points**, a number in ``[min(points, 0),
    max(points, 0)]``: 0..2 for an item worth 2 points, -1..0 for a penalty item of -1
    (-1: the penalty applies in full). Partial points are allowed (0.5, 1.5, ...);
  - ``gsb_pair`` cases: the output compared with the baseline on the case's dimension,
    ``good`` / ``same`` / ``bad`` (or ``1`` / ``0`` / ``-1``);
  - ``milestone`` cases: whether the milestone was achieved, ``yes`` / ``no`` (or ``1`` /
    ``0``, ``true`` / ``false``).

Other CSV columns are ignored (the labelling sheet carries readable ones), and a CSV row with
an empty ``label`` is skipped (a sheet not filled in yet). Several files may be given; they
are read as one. Loading checks everything before any judge is called and refuses, in one
``LabelsError`` naming file and line for each problem: unknown case ids, a second label of one
(case, rater), a value that is not a finite number (``nan``, ``inf``), a value out of the
item's range, a value of the wrong kind (a verdict on a rubric item, points on a GSB pair), a
label without a rater.

Statistics see labels on one scale per kind (:mod:`.stats`): rubric labels as the signed share
of the item's points (``earned / |points|``), GSB labels as 1 / 0 / -1, milestone labels as
1 (achieved) / 0.

Truth file (``judge_labels_file`` of the mock server, JSON lines): ``{"case_id", "label"}``
in the same units, plus ``kind``; for rubric items ``points`` and ``item_id`` (the noisy
judge clips to the item's range and checks it is asked about that item); for GSB cases
``pair``, ``dimension`` and ``candidate_tag`` (a GSB request carries the pair id in
``x-benchforge-case``; the mock answers each dimension from its case, and tells the candidate
from the baseline by the material tag the prompt gives each report); for milestone cases
``call`` and ``milestone_key`` (a milestone request carries the call id, and the mock answers
each milestone from its case), the label ``yes`` or ``no``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchforge.core.errors import ConfigError
from benchforge.evaluation.calibration.cases import (
    CalibrationCase,
    CaseKind,
    CaseSet,
    ItemRange,
)
from benchforge.evaluation.judges.models import GsbDimension, content_hash
from benchforge.evaluation.judges.prompts import material_tag
from benchforge.evaluation.judges.sanitize import sanitize_output

GSB_LABELS: dict[str, int] = {
    "good": 1,
    "g": 1,
    "1": 1,
    "+1": 1,
    "same": 0,
    "s": 0,
    "0": 0,
    "bad": -1,
    "b": -1,
    "-1": -1,
}
GSB_NAMES = {1: "good", 0: "same", -1: "bad"}
MILESTONE_LABELS: dict[str, int] = {
    "yes": 1,
    "y": 1,
    "true": 1,
    "achieved": 1,
    "1": 1,
    "no": 0,
    "n": 0,
    "false": 0,
    "not achieved": 0,
    "0": 0,
}
MILESTONE_NAMES = {1: "yes", 0: "no"}
MAX_LISTED = 25


class LabelsError(ConfigError):
    """A labels (or truth) file is malformed or does not fit the cases."""


class Label(BaseModel):
    """One rater's label of one case: ``raw`` as written, ``value`` on the statistics' scale,
    ``where`` the file and line it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case_id: str
    rater: str
    raw: str
    value: float
    where: str


def parse_label(raw: object, case: CalibrationCase, item: ItemRange | None) -> float:
    """``raw`` as a value on the statistics' scale; ValueError says why it does not fit."""
    text = str(raw).strip().lower()
    if case.kind == "gsb_pair":
        if text not in GSB_LABELS:
            raise ValueError(
                f"a gsb_pair label is good, same or bad (or 1, 0, -1), not {str(raw)!r}"
            )
        return float(GSB_LABELS[text])
    if case.kind == "milestone":
        if text not in MILESTONE_LABELS:
            raise ValueError(f"a milestone label is yes or no (or 1, 0), not {str(raw)!r}")
        return float(MILESTONE_LABELS[text])
    assert item is not None
    if text in GSB_LABELS and not _is_number(text):
        raise ValueError(f"a rubric_item label is the earned points, not a verdict {str(raw)!r}")
    try:
        points = float(text)
    except ValueError:
        raise ValueError(f"a rubric_item label is a number of points, not {str(raw)!r}") from None
    if not math.isfinite(points):
        raise ValueError(f"label {str(raw)!r} is not a finite number")
    if not item.low - 1e-9 <= points <= item.high + 1e-9:
        raise ValueError(
            f"label {str(raw)!r} is outside the item's range [{item.low:g}, {item.high:g}] "
            f"(earned points of an item worth {item.points:g})"
        )
    return points / abs(item.points)


def rater_name(raw: object) -> str:
    """A rater's name as compared and reported: surrounding and repeated spaces dropped,
    case folded ("Ann", " ann " and "ANN" are one rater)."""
    return " ".join(str(raw or "").split()).casefold()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class LabelSet(BaseModel):
    """Every label of a calibration, checked against its cases."""

    model_config = ConfigDict(frozen=True)

    labels: list[Label]

    @property
    def version(self) -> str:
        """Content hash of the labels (which case, which rater, what label)."""
        return content_hash(sorted((x.case_id, x.rater, x.raw) for x in self.labels))

    def raters(self) -> list[str]:
        return sorted({label.rater for label in self.labels})

    def case_ids(self) -> set[str]:
        return {label.case_id for label in self.labels}

    def matrix(self, cases: Sequence[CalibrationCase]) -> np.ndarray:
        """raters x cases (in ``cases`` order), NaN where a rater left a case out."""
        raters = self.raters()
        row = {r: i for i, r in enumerate(raters)}
        col = {c.case_id: j for j, c in enumerate(cases)}
        out = np.full((len(raters), len(cases)), np.nan)
        for label in self.labels:
            if label.case_id in col:
                out[row[label.rater], col[label.case_id]] = label.value
        return out

    def consensus(self, cases: Sequence[CalibrationCase]) -> dict[str, float]:
        """case id -> the humans' mean (rubric) or majority (GSB, milestones: the rounded
        mean, a milestone tie being not achieved), on the statistics' scale; cases nobody
        labelled are left out."""
        matrix = self.matrix(cases)
        out: dict[str, float] = {}
        for j, case in enumerate(cases):
            column = matrix[:, j][np.isfinite(matrix[:, j])]
            if len(column):
                mean = float(np.mean(column))
                out[case.case_id] = float(np.rint(mean)) if case.kind != "rubric_item" else mean
        return out


def load_labels(paths: Path | Sequence[Path], cases: CaseSet) -> LabelSet:
    """The labels of ``paths`` (one file or several, read as one), checked against ``cases``;
    raises ``LabelsError`` listing every problem with its file and line."""
    files = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    by_id = cases.by_id()
    labels: list[Label] = []
    problems: list[str] = []
    first: dict[tuple[str, str], str] = {}
    for path in files:
        for where, row in _rows(path, problems):
            case_id = str(row.get("case_id") or "").strip()
            written = str(row.get("rater") or "").strip()
            rater = rater_name(written)
            raw = row.get("label")
            if raw is None or str(raw).strip() == "":
                if path.suffix.lower() != ".csv":
                    problems.append(f"{where}: no label")
                continue
            if not rater:
                problems.append(f"{where}: label {raw!s} has no rater")
                continue
            case = by_id.get(case_id)
            if case is None:
                problems.append(f"{where}: unknown case id {case_id!r}")
                continue
            if (case_id, rater) in first:
                same = "" if written == rater else f", written {written!r}"
                problems.append(
                    f"{where}: a second label of case {case_id} by rater {rater!r}{same} "
                    f"(the first is at {first[case_id, rater]}; rater names ignore case)"
                )
                continue
            first[case_id, rater] = where
            try:
                item = cases.item_range(case) if case.kind == "rubric_item" else None
                value = parse_label(raw, case, item)
            except ValueError as exc:
                problems.append(f"{where}: case {case_id} ({case.kind}): {exc}")
                continue
            labels.append(
                Label(case_id=case_id, rater=rater, raw=str(raw).strip(), value=value, where=where)
            )
    if not problems and not labels:
        problems.append(f"{', '.join(str(p) for p in files)}: no labels")
    if problems:
        listed = problems[:MAX_LISTED]
        more = len(problems) - len(listed)
        tail = f"\n  ... and {more} more" if more else ""
        raise LabelsError(
            f"{len(problems)} problem(s) in the labels:\n  " + "\n  ".join(listed) + tail
        )
    return LabelSet(labels=labels)


def _rows(path: Path, problems: list[str]) -> Iterable[tuple[str, dict[str, object]]]:
    """(file:line, row) of a CSV or JSON-lines labels file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        problems.append(f"{path}: cannot read the labels file: {exc}")
        return
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        missing = {"case_id", "rater", "label"} - set(reader.fieldnames or [])
        if missing:
            problems.append(f"{path}:1: the header lacks {', '.join(sorted(missing))}")
            return
        for row in reader:
            yield f"{path}:{reader.line_num}", dict(row)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not JSON: {exc}")
            continue
        if not isinstance(row, dict):
            problems.append(f"{path}:{number}: not a JSON object")
            continue
        yield f"{path}:{number}", row


# --------------------------------------------------------------------------- truth file


class TruthRecord(BaseModel):
    """A case's known label, for the mock's noisy judges (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case_id: str
    label: float | str
    kind: CaseKind | None = None
    points: float | None = Field(default=None, description="rubric items: the item's points")
    item_id: str | None = Field(default=None, description="rubric items: the item judged")
    pair: str | None = None
    dimension: GsbDimension | None = None
    candidate_tag: str | None = Field(
        default=None,
        description="GSB: material tag of the sanitized candidate output (tells which of the "
        "two reports in a request is the candidate)",
    )
    call: str | None = Field(default=None, description="milestones: the trial's judge call")
    milestone_key: str | None = None


def candidate_tag(output: str) -> str:
    """The tag the GSB judge's prompt gives ``output`` (its material tag once sanitized)."""
    return material_tag(sanitize_output(output).text)


def truth_records(cases: CaseSet, values: dict[str, float]) -> list[TruthRecord]:
    """Truth records of ``cases`` from values on the statistics' scale (e.g. the humans'
    consensus): rubric labels back in points, GSB labels as good / same / bad, milestone
    labels as yes / no."""
    records = []
    for case in cases.cases:
        if case.case_id not in values:
            continue
        value = values[case.case_id]
        if case.kind == "rubric_item":
            item = cases.item_range(case)
            records.append(
                TruthRecord(
                    case_id=case.case_id,
                    label=round(value * abs(item.points), 6),
                    kind=case.kind,
                    points=item.points,
                    item_id=case.item_id,
                )
            )
        elif case.kind == "milestone":
            records.append(
                TruthRecord(
                    case_id=case.case_id,
                    label=MILESTONE_NAMES[int(np.rint(value))],
                    kind=case.kind,
                    call=case.call,
                    milestone_key=case.milestone_key,
                )
            )
        else:
            records.append(
                TruthRecord(
                    case_id=case.case_id,
                    label=GSB_NAMES[int(np.rint(value))],
                    kind=case.kind,
                    pair=case.pair,
                    dimension=case.dimension,
                    candidate_tag=candidate_tag(case.output),
                )
            )
    return records


def write_truth(records: Iterable[TruthRecord], path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(r.model_dump_json(exclude_none=True) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")
    return path


def read_truth(path: Path) -> list[TruthRecord]:
    """The truth file at ``path``; ``LabelsError`` names the line of a bad record."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise LabelsError(f"{path}: cannot read the truth file: {exc}") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(TruthRecord.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise LabelsError(f"{path}:{number}: invalid truth record: {exc}") from None
    return records

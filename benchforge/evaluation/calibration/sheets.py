"""Labelling material for humans: a stratified sample of cases, a CSV sheet to fill in and a
static HTML page to read the cases on.

Sampling is stratified by (task, agent, kind): every stratum gives up to ``per_stratum`` cases,
drawn with a seeded generator, so a leaderboard's every agent is calibrated on every task it
ran, on rubric items, GSB pairs and milestones alike, however unequal the strata's sizes. The
two dimensions of one GSB comparison are sampled together (they share the reading), and so are
the milestones of one trial.
"""

from __future__ import annotations

import csv
import random
from collections import defaultdict
from pathlib import Path

from benchforge.core.pages import Page
from benchforge.evaluation.calibration.cases import CalibrationCase, CaseSet, write_cases

TEMPLATES = Path(__file__).parent / "templates"

SHEET_COLUMNS = (
    "case_id",
    "rater",
    "label",
    "allowed",
    "kind",
    "task",
    "agent",
    "trial",
    "item_or_dimension",
    "criterion",
)
DIMENSIONS = {
    "readability": "structure and presentation: headings, lists, tables; how easily a reader "
    "finds the findings",
    "depth": "substance: concrete numbers, explanations of causes, recommendations that follow "
    "from the evidence",
}


def sample_cases(cases: CaseSet, per_stratum: int, seed: int) -> CaseSet:
    """Up to ``per_stratum`` cases (a GSB comparison, a trial's milestones counting once) per
    (task, agent, kind), in a seeded random order; the result keeps the file's order."""
    units: dict[tuple[str, str, str], list[list[str]]] = defaultdict(list)
    together: dict[str, list[str]] = {}
    for case in cases.cases:
        stratum: tuple[str, str, str] = (case.task, case.agent, case.kind)
        shared = case.unit
        if shared is None:
            units[stratum].append([case.case_id])
        elif shared in together:
            together[shared].append(case.case_id)  # the unit is already in its stratum
        else:
            together[shared] = [case.case_id]
            units[stratum].append(together[shared])
    rng = random.Random(seed)
    chosen: set[str] = set()
    for stratum in sorted(units):
        group = units[stratum]
        for unit in rng.sample(group, min(per_stratum, len(group))):
            chosen.update(unit)
    return cases.subset(chosen)


def allowed_labels(cases: CaseSet, case: CalibrationCase) -> str:
    if case.kind == "gsb_pair":
        return "good | same | bad"
    if case.kind == "milestone":
        return "yes | no (achieved)"
    item = cases.item_range(case)
    return f"earned points, {item.low:g} to {item.high:g}"


def criterion_text(cases: CaseSet, case: CalibrationCase) -> tuple[str, str]:
    """(item or dimension, what is judged) of a case, as the sheet shows it."""
    if case.kind == "gsb_pair":
        dimension = case.dimension or ""
        return dimension, (
            f"Compared with baseline {case.baseline_id}, is the output better (good), as good "
            f"(same) or worse (bad) on {dimension}: {DIMENSIONS.get(dimension, '')}"
        )
    if case.kind == "milestone":
        milestone = case.milestone()
        expected = milestone.value if milestone is not None else "?"
        return f"milestone {case.milestone_key} = {expected}", (
            f"Did the agent actually obtain {case.milestone_key} = {expected} (the right "
            "quantity, not an equal number for something else) in the excerpts of its "
            "trajectory or its final answer, or must it have, because a later milestone it "
            "obtained needs it? yes or no"
        )
    if case.rubric in cases.rubrics:
        item = next(i for i in cases.rubrics[case.rubric].items if i.id == case.item_id)
        return f"{item.id} ({item.type}, {item.points:g} points)", item.criterion
    flat = next(i for i in cases.flat_rubrics[str(case.rubric)].items if i.id == case.item_id)
    return f"{flat.id} ({flat.dimension}, {flat.points:g} points)", flat.criterion


def write_sheet(cases: CaseSet, path: Path) -> Path:
    """``labelling.csv``: one row per case, ``rater`` and ``label`` left blank to fill in."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(SHEET_COLUMNS)
        for case in cases.cases:
            what, criterion = criterion_text(cases, case)
            writer.writerow(
                [
                    case.case_id,
                    "",
                    "",
                    allowed_labels(cases, case),
                    case.kind,
                    case.task,
                    case.agent,
                    case.trial,
                    what,
                    criterion,
                ]
            )
    return path


LABELLING_PAGE = Page(
    "labelling.html.j2",
    (TEMPLATES,),
    "sheet",
    {"criterion_text": criterion_text, "allowed_labels": allowed_labels},
)


def write_page(cases: CaseSet, path: Path) -> Path:
    """``labelling.html``: every case with its question, criterion and output, and where its
    label goes (``templates/labelling.html.j2``). Outputs are shown as plain text (escaped): a
    rater reads what the agent wrote, markup included, and nothing in it runs."""
    page = LABELLING_PAGE.render("Labelling", cases=cases)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def write_labelling(cases: CaseSet, out: Path) -> dict[str, Path]:
    """``cases.jsonl``, ``labelling.csv`` and ``labelling.html`` in ``out``."""
    out = Path(out)
    return {
        "cases": write_cases(cases, out / "cases.jsonl"),
        "sheet": write_sheet(cases, out / "labelling.csv"),
        "page": write_page(cases, out / "labelling.html"),
    }

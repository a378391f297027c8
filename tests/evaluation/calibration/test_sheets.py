"""Stratified sampling and the labelling sheet: a filled-in sheet is a valid labels file."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from benchforge.evaluation.calibration.cases import CaseSet, read_cases
from benchforge.evaluation.calibration.labels import load_labels
from benchforge.evaluation.calibration.sheets import (
    SHEET_COLUMNS,
    sample_cases,
    write_labelling,
    write_page,
)
from tests.paths import FIXTURES


@pytest.fixture(scope="module")
def cases() -> CaseSet:
    return read_cases(FIXTURES / "calibration" / "cases.jsonl")


def _units(sample: CaseSet) -> Counter[tuple[str, str, str]]:
    """Sampled units per (task, agent, kind): a GSB comparison (two dimensions) counts once."""
    seen: set[str] = set()
    counts: Counter[tuple[str, str, str]] = Counter()
    for case in sample.cases:
        unit = case.pair or case.case_id
        if unit not in seen:
            seen.add(unit)
            counts[(case.task, case.agent, case.kind)] += 1
    return counts


def test_sampling_is_stratified_seeded_and_keeps_gsb_dimensions_together(cases: CaseSet) -> None:
    available = _units(cases)
    sample = sample_cases(cases, per_stratum=3, seed=7)
    counts = _units(sample)
    assert set(counts) == set(available)  # every (task, agent, kind) is represented
    for stratum, count in counts.items():
        assert count == min(3, available[stratum])
    pairs = Counter(c.pair for c in sample.cases if c.pair)
    assert pairs and set(pairs.values()) == {2}
    assert sample_cases(cases, per_stratum=3, seed=7) == sample
    assert sample_cases(cases, per_stratum=3, seed=8) != sample
    # the subset keeps only the rubrics its cases cite, in file order
    order = [c.case_id for c in cases.cases]
    assert [c.case_id for c in sample.cases] == sorted(
        (c.case_id for c in sample.cases), key=order.index
    )
    assert set(sample.rubric_versions()) == {c.rubric for c in sample.cases if c.rubric}


def test_a_filled_in_sheet_loads_as_labels(cases: CaseSet, tmp_path: Path) -> None:
    sample = sample_cases(cases, per_stratum=2, seed=1)
    files = write_labelling(sample, tmp_path)
    assert read_cases(files["cases"]) == sample
    with files["sheet"].open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == SHEET_COLUMNS
    assert [r["case_id"] for r in rows] == [c.case_id for c in sample.cases]
    assert all(r["rater"] == "" and r["label"] == "" for r in rows)
    by_id = sample.by_id()
    for row in rows:  # a rater fills in half the sheet
        if len(row["case_id"]) % 2:
            continue
        row["rater"] = "ann"
        row["label"] = "same" if by_id[row["case_id"]].kind == "gsb_pair" else "0"
    filled = tmp_path / "filled.csv"
    with filled.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=SHEET_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    labels = load_labels(filled, sample)
    assert len(labels.labels) == sum(1 for r in rows if r["rater"])
    page = files["page"].read_text()
    for case in sample.cases:
        assert f'id="{case.case_id}"' in page
    gsb = next(c for c in sample.cases if c.kind == "gsb_pair")
    assert "good | same | bad" in page and (gsb.baseline or "").splitlines()[0] in page
    # an output is shown as text: its markup is escaped, nothing in it runs
    hostile = sample.cases[0].model_copy(update={"output": "<script>alert(1)</script>"})
    page = write_page(CaseSet(**{**dict(sample), "cases": [hostile]}), tmp_path / "p.html")
    assert "<script>" not in page.read_text() and "&lt;script&gt;" in page.read_text()

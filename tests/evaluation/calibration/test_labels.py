"""Cases and labels files: the fixture loads; every kind of bad label is refused, naming the
file and line, before anything is judged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchforge.core.errors import BenchforgeError
from benchforge.evaluation.calibration.cases import CasesError, CaseSet, read_cases, write_cases
from benchforge.evaluation.calibration.labels import (
    LabelsError,
    load_labels,
    read_truth,
    truth_records,
    write_truth,
)
from tests.paths import FIXTURES

CALIBRATION = FIXTURES / "calibration"


@pytest.fixture(scope="module")
def cases() -> CaseSet:
    return read_cases(CALIBRATION / "cases.jsonl")


def test_the_fixture_loads_with_three_raters(cases: CaseSet) -> None:
    labels = load_labels(CALIBRATION / "labels.csv", cases)
    assert labels.raters() == ["rater1", "rater2", "rater3"]
    assert labels.case_ids() == {c.case_id for c in cases.cases}
    kinds = {c.kind for c in cases.cases}
    assert kinds == {"rubric_item", "gsb_pair"}
    assert {c.family for c in cases.cases} == {"da_open", "de_arch"}
    # rubric labels are points, on the statistics' scale a signed share of the item's points
    by_id = cases.by_id()
    for label in labels.labels:
        case = by_id[label.case_id]
        if case.kind == "rubric_item":
            item = cases.item_range(case)
            assert label.value == pytest.approx(float(label.raw) / abs(item.points))
        else:
            assert label.value in (-1.0, 0.0, 1.0)
    matrix = labels.matrix(cases.cases)
    assert matrix.shape == (3, len(cases.cases))
    assert (np.sum(~np.isnan(matrix), axis=0) >= 2).all()


def test_cases_round_trip_and_truth_records(cases: CaseSet, tmp_path: Path) -> None:
    again = read_cases(write_cases(cases, tmp_path / "cases.jsonl"))
    assert again == cases
    assert again.version == cases.version
    labels = load_labels(CALIBRATION / "labels.csv", cases)
    consensus = labels.consensus(cases.cases)
    records = read_truth(write_truth(truth_records(cases, consensus), tmp_path / "t.jsonl"))
    assert len(records) == len(cases.cases)
    gsb = [r for r in records if r.kind == "gsb_pair"]
    assert gsb and all(r.label in {"good", "same", "bad"} and r.candidate_tag for r in gsb)
    rubric = {r.case_id: r for r in records if r.kind == "rubric_item"}
    case = next(c for c in cases.cases if c.kind == "rubric_item")
    points = cases.item_range(case).points
    assert rubric[case.case_id].label == pytest.approx(consensus[case.case_id] * abs(points))


def _write(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(rows) + "\n")
    return path


def test_bad_labels_are_refused_with_file_and_line(cases: CaseSet, tmp_path: Path) -> None:
    rubric = next(c for c in cases.cases if c.kind == "rubric_item" and c.item_id == "trend")
    penalty = next(c for c in cases.cases if c.item_id == "fabricated")
    gsb = next(c for c in cases.cases if c.kind == "gsb_pair")
    path = _write(
        tmp_path / "bad.csv",
        [
            "case_id,rater,label,notes",
            f"{rubric.case_id},ann,1,fine",  # line 2
            "no-such-case,ann,1,",  # 3: unknown case
            f"{rubric.case_id},ann,0.5,",  # 4: ann labels it twice
            f"{rubric.case_id},bob,3,",  # 5: an item worth 1 point
            f"{rubric.case_id},cat,good,",  # 6: a verdict on a rubric item
            f"{gsb.case_id},bob,2,",  # 7: points on a GSB pair
            f"{gsb.case_id},,good,",  # 8: no rater
            f"{penalty.case_id},bob,0.5,",  # 9: a penalty is -1..0
            f"{gsb.case_id},cat,,",  # 10: not labelled yet: skipped
            f"{penalty.case_id},cat,-1,",  # 11: fine
        ],
    )
    with pytest.raises(LabelsError) as err:
        load_labels(path, cases)
    message = str(err.value)
    assert isinstance(err.value, BenchforgeError)
    assert message.startswith("7 problem(s)")
    for line, needle in [
        (3, "unknown case id 'no-such-case'"),
        (4, f"the first is at {path}:2"),
        (5, "outside the item's range [0, 1]"),
        (6, "not a verdict 'good'"),
        (7, "good, same or bad"),
        (8, "has no rater"),
        (9, "outside the item's range [-1, 0]"),
    ]:
        assert f"{path}:{line}: " in message and needle in message, (line, needle, message)
    assert f"{path}:10" not in message and f"{path}:11" not in message


def test_jsonl_labels_and_their_problems(cases: CaseSet, tmp_path: Path) -> None:
    gsb = next(c for c in cases.cases if c.kind == "gsb_pair")
    good = _write(
        tmp_path / "ok.jsonl",
        [json.dumps({"case_id": gsb.case_id, "rater": "ann", "label": "bad"})],
    )
    labels = load_labels(good, cases)
    assert [x.value for x in labels.labels] == [-1.0]
    bad = _write(
        tmp_path / "bad.jsonl",
        [
            json.dumps({"case_id": gsb.case_id, "rater": "bob", "label": 1}),
            "{not json",
            json.dumps({"case_id": gsb.case_id, "rater": "cat"}),
        ],
    )
    with pytest.raises(LabelsError) as err:
        load_labels([good, bad], cases)
    message = str(err.value)
    assert f"{bad}:2: not JSON" in message
    assert f"{bad}:3: no label" in message
    assert f"{bad}:1" not in message
    empty = _write(tmp_path / "empty.csv", ["case_id,rater,label"])
    with pytest.raises(LabelsError, match="no labels"):
        load_labels(empty, cases)
    header = _write(tmp_path / "header.csv", ["case,who,label"])
    with pytest.raises(LabelsError, match="the header lacks case_id, rater"):
        load_labels(header, cases)


def test_bad_cases_files_name_the_line(cases: CaseSet, tmp_path: Path) -> None:
    lines = (CALIBRATION / "cases.jsonl").read_text().splitlines()
    case_line = next(i for i, line in enumerate(lines) if '"record":"case"' in line)
    duplicated = tmp_path / "dup.jsonl"
    duplicated.write_text("\n".join([*lines, lines[case_line]]) + "\n")
    with pytest.raises(CasesError, match=rf"{duplicated}:{len(lines) + 1}: case id .* already"):
        read_cases(duplicated)
    broken = tmp_path / "broken.jsonl"
    record = json.loads(lines[case_line])
    record["kind"] = "gsb_pair"  # without pair, baseline, dimension
    broken.write_text("\n".join([*lines[:case_line], json.dumps(record)]) + "\n")
    with pytest.raises(CasesError, match=rf"{broken}:{case_line + 1}: .*needs pair"):
        read_cases(broken)
    orphan = tmp_path / "orphan.jsonl"
    orphan.write_text(lines[case_line] + "\n")  # its rubric record left out
    with pytest.raises(CasesError, match="no rubric with version"):
        read_cases(orphan)


def test_rater_names_ignore_case_and_spaces(cases: CaseSet, tmp_path: Path) -> None:
    """ "Ann", " ann " and "ANN" are one rater: their labels are one row of the matrix, and a
    case labelled by two spellings is a second label by the same rater."""
    first, second = [c for c in cases.cases if c.kind == "gsb_pair"][:2]
    path = _write(
        tmp_path / "names.csv",
        [
            "case_id,rater,label",
            f"{first.case_id},Ann,good",
            f"{second.case_id}, ann ,bad",
            f"{first.case_id},Bob,same",
        ],
    )
    labels = load_labels(path, cases)
    assert labels.raters() == ["ann", "bob"]
    expected = np.array([[1.0, -1.0], [0.0, np.nan]])
    assert np.array_equal(labels.matrix([first, second]), expected, equal_nan=True)
    twice = _write(
        tmp_path / "twice.csv",
        ["case_id,rater,label", f"{first.case_id},Ann,good", f"{first.case_id},ANN,bad"],
    )
    with pytest.raises(LabelsError) as err:
        load_labels(twice, cases)
    assert f"{twice}:3: a second label of case {first.case_id} by rater 'ann', written 'ANN'" in (
        str(err.value)
    )


@pytest.mark.parametrize("raw", ["nan", "NaN", "inf", "-inf", "Infinity"])
def test_non_finite_labels_are_refused_as_such(cases: CaseSet, tmp_path: Path, raw: str) -> None:
    rubric = next(c for c in cases.cases if c.item_id == "rate")
    path = _write(tmp_path / "nan.csv", ["case_id,rater,label", f"{rubric.case_id},ann,{raw}"])
    with pytest.raises(LabelsError) as err:
        load_labels(path, cases)
    message = str(err.value)
    assert (
        f"{path}:2: case {rubric.case_id} (rubric_item): label '{raw}' is not a finite number"
        in (message)
    )
    assert "outside the item's range" not in message
    # JSON lines carry NaN as a number; refused the same way
    jsonl = _write(
        tmp_path / "nan.jsonl", [f'{{"case_id": "{rubric.case_id}", "rater": "ann", "label": NaN}}']
    )
    with pytest.raises(LabelsError, match="label 'nan' is not a finite number"):
        load_labels(jsonl, cases)

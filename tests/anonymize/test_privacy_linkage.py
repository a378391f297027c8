"""Distance-based record linkage: an unchanged release links every record, a release whose
known columns are shuffled links no better than chance, ties count 1/|ties|, numbers stored as
text are compared as numbers, and a large table is searched through a candidate sample."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from benchforge.anonymize.policy.models import Linkage
from benchforge.anonymize.report.kanon import PrivacyInputError
from benchforge.anonymize.report.linkage import ONE_HOT_MAX, column_specs, record_linkage

N = 2000
CITIES = 30


def _source(seed: int = 3) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    income = rng.lognormal(10, 0.6, N).round(2)
    ages = rng.integers(18, 80, N).tolist()
    for i in range(0, N, 97):
        ages[i] = None  # a few NULLs take the missing-indicator path
    day0 = dt.date(2020, 1, 1)
    return {
        "age": ages,
        "city": [f"city{c:02d}" for c in rng.integers(0, CITIES, N)],
        "income": income.tolist(),
        "signup": [day0 + dt.timedelta(days=int(d)) for d in rng.integers(0, 900, N)],
        "revenue_text": [f"{v:,.2f} USD" for v in income * 3],
        "zip": [f"Z{z:03d}" for z in rng.integers(0, 300, N)],  # > ONE_HOT_MAX categories
    }


def _connect(tmp_path: Path, src: dict[str, list], rel: dict[str, list]):
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name, data in (("src", src), ("rel", rel)):
        with duckdb.connect(str(tmp_path / f"{name}.duckdb")) as c:
            c.execute("CREATE SCHEMA raw")
            c.register("data", pa.table(data))
            c.execute("CREATE TABLE raw.people AS SELECT * FROM data")
    con = duckdb.connect()
    for name in ("src", "rel"):
        con.execute(f"ATTACH '{tmp_path / f'{name}.duckdb'}' AS {name} (READ_ONLY)")
    return con


def _shuffled(src: dict[str, list], columns: list[str], seed: int = 11) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    out = dict(src)
    for c in columns:
        out[c] = [src[c][i] for i in rng.permutation(N)]
    return out


KNOWN = ["age", "city", "income"]


def test_identical_release_links_every_record(tmp_path: Path) -> None:
    src = _source()
    con = _connect(tmp_path, src, src)
    result, notes = record_linkage(con, Linkage(table="people", known=KNOWN), sample_rows=1000)
    assert result.sampled == 1000 and result.candidates == N
    assert result.rate == 1.0
    assert result.baseline == pytest.approx(1 / N)
    assert result.ratio == pytest.approx(N)
    assert notes == []


def test_shuffled_known_columns_link_at_chance(tmp_path: Path) -> None:
    src = _source()
    con = _connect(tmp_path, src, _shuffled(src, KNOWN))
    result, _ = record_linkage(con, Linkage(table="people", known=KNOWN), sample_rows=1000)
    assert result.baseline == pytest.approx(1 / N)
    # 1000 targets at chance 1/2000: about 0.5 expected hits; 5 would already be 10x chance
    assert abs(result.rate - result.baseline) < 0.005


def test_ties_count_one_over_their_number(tmp_path: Path) -> None:
    # Knowing only the city, each record ties with every record of its city: a random pick
    # is right with probability 1/|city|. Over all records that sums to one per city.
    src = _source()
    con = _connect(tmp_path, src, src)
    result, _ = record_linkage(con, Linkage(table="people", known=["city"]), sample_rows=N)
    assert result.sampled == N
    assert result.rate == pytest.approx(len(set(src["city"])) / N)


def test_many_categories_are_embedded_without_false_ties(tmp_path: Path) -> None:
    # zip has ~300 values, above ONE_HOT_MAX: embedded, equal values still tie and different
    # ones never do, so the rate is again (distinct zips) / N.
    src = _source()
    assert len(set(src["zip"])) > ONE_HOT_MAX
    con = _connect(tmp_path, src, src)
    result, _ = record_linkage(con, Linkage(table="people", known=["zip"]), sample_rows=N)
    assert result.rate == pytest.approx(len(set(src["zip"])) / N)
    shuffled, _ = record_linkage(
        _connect(tmp_path / "s", src, _shuffled(src, ["zip"])),
        Linkage(table="people", known=["zip"]),
        sample_rows=N,
    )
    assert shuffled.rate < 3 * shuffled.baseline


def test_numbers_stored_as_text_are_compared_as_numbers(tmp_path: Path) -> None:
    src = _source()
    specs = {
        s.name: s.kind
        for s in column_specs(
            _connect(tmp_path, src, src), "people", ["revenue_text", "city", "signup", "age"]
        )
    }
    assert specs == {
        "revenue_text": "numeric",
        "city": "categorical",
        "signup": "numeric",
        "age": "numeric",
    }
    # Perturbed by ~0.1%, the text never equals the original, but the number stays closest.
    rng = np.random.default_rng(5)
    noisy = np.array(src["income"]) * 3 * (1 + rng.normal(0, 0.001, N))
    rel = dict(src)
    rel["revenue_text"] = [f"{v:,.2f} USD" for v in noisy]
    con = _connect(tmp_path / "p", src, rel)
    result, _ = record_linkage(
        con, Linkage(table="people", known=["revenue_text"]), sample_rows=500
    )
    # read as labels, every perturbed value would mismatch every record alike: ratio 1
    assert result.ratio > 100


def test_large_table_uses_a_candidate_sample_holding_the_targets(tmp_path: Path) -> None:
    src = _source()
    con = _connect(tmp_path, src, src)
    link = Linkage(table="people", known=KNOWN)
    result, notes = record_linkage(con, link, sample_rows=200, max_candidates=500)
    assert result.sampled == 200
    assert result.candidates == 500
    assert result.rate == 1.0  # the true matches are always among the candidates
    assert result.baseline == pytest.approx(1 / 500)
    assert len(notes) == 1 and "500-row candidate sample" in notes[0]


def test_deterministic_for_a_seed(tmp_path: Path) -> None:
    src = _source()
    con = _connect(tmp_path, src, _shuffled(src, ["income"]))
    link = Linkage(table="people", known=KNOWN)
    first, _ = record_linkage(con, link, sample_rows=300, seed=4)
    again, _ = record_linkage(con, link, sample_rows=300, seed=4)
    assert first == again
    # age and city alone still single out some records, income no longer helps
    assert 0.0 < first.rate < 1.0


def test_rows_must_align(tmp_path: Path) -> None:
    src = _source()
    rel = {k: v[:-1] for k, v in src.items()}
    con = _connect(tmp_path, src, rel)
    with pytest.raises(PrivacyInputError, match="align"):
        record_linkage(con, Linkage(table="people", known=KNOWN))

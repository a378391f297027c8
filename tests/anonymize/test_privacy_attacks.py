"""anonymeter-style attacks: the rate and risk formulas on hand-computed numbers, predicate
evaluation against brute force, high risk for an unchanged release and none for a shuffled one,
and the assembled privacy section."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.attacks import (
    Queries,
    _correct_guess,
    attack_risks,
    count_matches,
    residual_risk,
    wilson,
)
from benchforge.anonymize.report.privacy import privacy_section
from benchforge.anonymize.transform.models import TableOutcome, TransformManifest

N = 4000
PLANS = ["free", "basic", "plus", "pro", "team"]


def _source(seed: int = 2) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    day0 = dt.date(2021, 1, 1)
    return {
        "person_id": [f"P-{i:06d}" for i in range(N)],
        "age": rng.integers(18, 80, N).tolist(),
        "city": [f"city{c:02d}" for c in rng.integers(0, 30, N)],
        "income": rng.lognormal(10, 0.6, N).round(2).tolist(),
        "signup": [day0 + dt.timedelta(days=int(d)) for d in rng.integers(0, 700, N)],
        "score": rng.normal(50, 10, N).round(3).tolist(),
        "plan": [PLANS[p] for p in rng.integers(0, len(PLANS), N)],  # independent secret
    }


def _shuffled(src: dict[str, list], seed: int = 9) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    return {c: [v[i] for i in rng.permutation(len(v))] for c, v in src.items()}


def _connect(tmp_path: Path, src: dict[str, list], rel: dict[str, list]):
    for name, data in (("src", src), ("rel", rel)):
        with duckdb.connect(str(tmp_path / f"{name}.duckdb")) as c:
            c.execute("CREATE SCHEMA raw")
            c.register("data", pa.table(data))
            c.execute("CREATE TABLE raw.people AS SELECT * FROM data")
    con = duckdb.connect()
    for name in ("src", "rel"):
        con.execute(f"ATTACH '{tmp_path / f'{name}.duckdb'}' AS {name} (READ_ONLY)")
    return con


def _run(con):
    risks, notes = attack_risks(
        con,
        "people",
        known=["age", "city", "income"],
        secret="plan",
        quasi_identifiers=["city", "signup", "score"],
        sample_rows=5000,
        seed=0,
    )
    return {r.kind: r for r in risks}, notes


# ---------------------------------------------------------------- formulas


def test_wilson_rate_by_hand() -> None:
    # z = 1.96, z^2 = 3.8415: rate = (30 + 1.9207) / 103.8415 = 0.30740,
    # error = 1.96 / 103.8415 * sqrt(30 * 70 / 100 + 0.9604) = 0.018875 * 4.6862 = 0.08845
    rate, err = wilson(100, 30)
    assert rate == pytest.approx(0.30740, abs=1e-4)
    assert err == pytest.approx(0.08845, abs=1e-4)
    # no success at all still gets a non-zero estimate: (0 + 1.9207) / (200 + 3.8415)
    assert wilson(200, 0)[0] == pytest.approx(0.0094227, abs=1e-6)
    assert wilson(0, 0) == (0.0, 0.0)


def test_residual_risk_by_hand() -> None:
    # (0.6 - 0.2) / (1 - 0.2) = 0.5; error sqrt((0.05/0.8)^2 + (0.04*(0.6-1)/0.64)^2)
    # = sqrt(0.00390625 + 0.000625) = 0.0673146
    risk, lo, hi = residual_risk((0.6, 0.05), (0.2, 0.04))
    assert risk == pytest.approx(0.5)
    assert lo == pytest.approx(0.5 - 0.0673146, abs=1e-6)
    assert hi == pytest.approx(0.5 + 0.0673146, abs=1e-6)
    # the attack doing worse than the control is no risk; the interval is clipped too
    assert residual_risk((0.1, 0.02), (0.3, 0.02)) == (0.0, 0.0, 0.0)
    # a control that always succeeds leaves nothing to measure
    assert residual_risk((1.0, 0.0), (1.0, 0.0)) == (0.0, 0.0, 1.0)


def test_numeric_guesses_within_five_percent() -> None:
    truth = np.array([100.0, 100.0, -50.0, np.nan, 0.0])
    guess = np.array([105.0, 106.0, -52.0, np.nan, 0.0])
    assert _correct_guess(guess, truth, numeric=True).tolist() == [True, False, True, True, True]
    cats = np.array(["a", None, "b"], dtype=object)
    assert _correct_guess(cats, np.array(["a", None, "c"], dtype=object), False).tolist() == [
        True,
        True,
        False,
    ]


def test_predicates_match_brute_force() -> None:
    rng = np.random.default_rng(1)
    data = rng.integers(0, 4, size=(60, 3)).astype(float)
    data[rng.random((60, 3)) < 0.1] = np.nan
    q = 200
    use = rng.random((q, 3)) < 0.6
    ops = rng.integers(0, 4, size=(q, 3)).astype(np.int8)
    vals = rng.integers(0, 4, size=(q, 3)).astype(float)
    counts = count_matches(data, Queries(use, ops, vals), chunk=17)

    def holds(x: float, op: int, v: float) -> bool:
        if op == 3:
            return bool(np.isnan(x))
        if np.isnan(x):
            return False
        return {0: x == v, 1: x <= v, 2: x >= v}[op]

    expected = [
        sum(
            all(holds(row[c], ops[i, c], vals[i, c]) for c in range(3) if use[i, c]) for row in data
        )
        for i in range(q)
    ]
    assert counts.tolist() == expected


# ---------------------------------------------------------------- attacks


def test_unchanged_release_is_at_high_risk(tmp_path: Path) -> None:
    src = _source()
    risks, notes = _run(_connect(tmp_path, src, src))
    assert notes == []
    assert set(risks) == {"singling_out", "linkability", "inference"}
    assert risks["singling_out"].risk > 0.5
    assert risks["inference"].risk > 0.5
    assert risks["linkability"].risk > 0.5
    so = risks["singling_out"]
    assert so.attacks > 1000 and so.sample_rows == 2000 and so.seed == 0
    assert so.ci_low <= so.risk <= so.ci_high
    # the control knows the population, not the records: an independent plan is a 1-in-5 guess
    assert risks["inference"].control_rate == pytest.approx(0.2, abs=0.05)
    assert risks["inference"].baseline_rate == pytest.approx(0.2, abs=0.05)
    assert risks["inference"].columns == ["age", "city", "income", "plan"]
    assert risks["linkability"].columns == ["age", "city", "income", "signup", "score"]


def test_shuffled_release_is_at_no_risk(tmp_path: Path) -> None:
    src = _source()
    risks, _ = _run(_connect(tmp_path, src, _shuffled(src)))
    assert set(risks) == {"singling_out", "linkability", "inference"}
    for kind, r in risks.items():
        assert r.risk < 0.15, (kind, r)
        assert abs(r.attack_rate - r.control_rate) < 0.05, (kind, r)


def test_same_seed_same_result(tmp_path: Path) -> None:
    src = _source()
    con = _connect(tmp_path, src, _shuffled(src, seed=3))
    assert _run(con) == _run(con)


def test_small_table_is_not_attacked(tmp_path: Path) -> None:
    src = {c: v[:80] for c, v in _source().items()}
    risks, notes = attack_risks(
        _connect(tmp_path, src, src), "people", known=["age"], secret="plan"
    )
    assert risks == []
    assert len(notes) == 1 and "not run" in notes[0]


# ---------------------------------------------------------------- the assembled section


def test_privacy_section_assembles_every_measure(tmp_path: Path) -> None:
    src = _source()
    rel = dict(src)
    rel["person_id"] = [f"Q-{i:06d}" for i in range(N)]
    rel["person_id"][10] = src["person_id"][11]  # one planted key leak
    con = _connect(tmp_path, src, rel)
    policy = Policy.model_validate(
        {
            "domain": "test",
            "tables": {
                "people": {
                    "primary_key": "person_id",
                    "columns": {"person_id": "pseudonymize", "plan": "keep"},
                }
            },
            "quasi_identifiers": {
                "people": {"columns": ["city", "age"], "sensitive": ["plan"], "k": 2},
                "absent": {"columns": ["x"]},
            },
            "linkage": [{"table": "people", "known": ["age", "city", "income"], "secret": "plan"}],
        }
    )
    manifest = TransformManifest(
        policy_sha256="0" * 64, tables={"people": TableOutcome(rows=N, columns={})}
    )
    section = privacy_section(con, policy, manifest, sample_rows=1000, seed=1)
    assert section.identifiers_checked == N
    assert section.leaked_identifiers == 1
    assert [(f.table, f.column, f.identifier, f.count) for f in section.leaks] == [
        ("people", "person_id", "people.person_id", 1)
    ]
    assert [r.table for r in section.k_anonymity] == ["people"]
    assert section.linkage[0].rate == 1.0 and section.linkage[0].sampled == 1000
    assert {a.kind for a in section.attacks} == {"singling_out", "linkability", "inference"}
    assert all(a.sample_rows == 500 for a in section.attacks)
    assert any("absent is not in the release" in n for n in section.notes)
    assert "P-000011" not in section.model_dump_json()

"""k-anonymity, prosecutor risks and l-diversity of a release, against brute force in Python."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from benchforge.anonymize.policy.models import QuasiIdentifiers
from benchforge.anonymize.report.kanon import PrivacyInputError, k_anonymity

Row = tuple[str | None, str | None, str | None]


def _release(tmp_path: Path, rows: Sequence[Row]):
    """A connection with the same table as source and release (k-anonymity reads only rel)."""
    data = pa.table(
        {
            "country": [r[0] for r in rows],
            "band": [r[1] for r in rows],
            "diagnosis": [r[2] for r in rows],
        }
    )
    for name in ("src", "rel"):
        with duckdb.connect(str(tmp_path / f"{name}.duckdb")) as c:
            c.execute("CREATE SCHEMA raw")
            c.register("data", data)
            c.execute("CREATE TABLE raw.patients AS SELECT * FROM data")
    con = duckdb.connect()
    for name in ("src", "rel"):
        con.execute(f"ATTACH '{tmp_path / f'{name}.duckdb'}' AS {name} (READ_ONLY)")
    return con


def _brute(rows, k: int):
    """Classes over (country, band), all-NULL rows excluded; l counts NULL as a value."""
    kept = [r for r in rows if not (r[0] is None and r[1] is None)]
    sizes = Counter((r[0], r[1]) for r in kept)
    diag: dict[tuple, set] = defaultdict(set)
    for r in kept:
        diag[(r[0], r[1])].add(r[2])
    n = len(kept)
    below = sum(s for s in sizes.values() if s < k)
    return {
        "rows": n,
        "suppressed": len(rows) - n,
        "classes": len(sizes),
        "min_k": min(sizes.values()),
        "share": below / n,
        "rb": 1 / min(sizes.values()),
        "rc": len(sizes) / n,
        "min_l": min(len(v) for v in diag.values()),
    }


def test_hand_computed_example(tmp_path: Path) -> None:
    # classes: (DE, 30s) x5 with 2 diagnoses, (FR, 30s) x3 all "flu", (FR, NULL) x1; one row
    # fully suppressed. k=3: the singleton is below k -> share 1/9, rB 1, rC 3/9, min l 1.
    rows: list[Row] = [("DE", "30s", "flu"), ("DE", "30s", "flu"), ("DE", "30s", "flu")]
    rows += [("DE", "30s", "cold"), ("DE", "30s", "cold")]
    rows += [("FR", "30s", "flu"), ("FR", "30s", "flu"), ("FR", "30s", "flu")]
    rows += [("FR", None, "cold"), (None, None, "flu")]
    con = _release(tmp_path, rows)
    r = k_anonymity(
        con,
        "patients",
        QuasiIdentifiers(columns=["country", "band"], sensitive=["diagnosis"], k=3, l=2),
    )
    assert (r.rows, r.suppressed_rows, r.classes, r.min_k) == (9, 1, 3, 1)
    assert r.share_below_k == pytest.approx(1 / 9)
    assert r.prosecutor_ra == pytest.approx(1 / 9)
    assert r.prosecutor_rb == pytest.approx(1.0)
    assert r.prosecutor_rc == pytest.approx(3 / 9)
    assert r.min_l == 1
    assert not r.satisfied


def test_matches_brute_force_with_nulls(tmp_path: Path) -> None:
    rng = random.Random(5)
    countries = ["DE", "FR", "IT", "ES", None]
    bands = ["20s", "30s", "40s", None]
    diags = ["flu", "cold", "asthma", None]
    rows = [(rng.choice(countries), rng.choice(bands), rng.choice(diags)) for _ in range(700)]
    con = _release(tmp_path, rows)
    expected = _brute(rows, k=40)
    assert expected["suppressed"] > 0  # the data exercises the suppressed-row rule
    r = k_anonymity(
        con,
        "patients",
        QuasiIdentifiers(columns=["country", "band"], sensitive=["diagnosis"], k=40, l=3),
    )
    assert r.rows == expected["rows"]
    assert r.suppressed_rows == expected["suppressed"]
    assert r.classes == expected["classes"]
    assert r.min_k == expected["min_k"]
    assert r.share_below_k == pytest.approx(expected["share"])
    assert r.prosecutor_ra == pytest.approx(expected["share"])
    assert r.prosecutor_rb == pytest.approx(expected["rb"])
    assert r.prosecutor_rc == pytest.approx(expected["rc"])
    assert r.min_l == expected["min_l"]
    assert r.satisfied == (expected["min_k"] >= 40 and expected["min_l"] >= 3)


def test_satisfied_only_when_both_k_and_l_hold(tmp_path: Path) -> None:
    rows = [("DE", "30s", d) for d in ("flu", "cold", "flu", "cold")]
    rows += [("FR", "30s", d) for d in ("flu", "flu", "flu", "flu")]
    con = _release(tmp_path, rows)
    only_k = QuasiIdentifiers(columns=["country", "band"], k=4)
    assert k_anonymity(con, "patients", only_k).satisfied
    assert k_anonymity(con, "patients", only_k).min_l is None
    with_l = QuasiIdentifiers(columns=["country", "band"], sensitive=["diagnosis"], k=4, l=2)
    r = k_anonymity(con, "patients", with_l)
    assert r.min_k == 4 and r.min_l == 1 and not r.satisfied  # FR's diagnosis is disclosed
    too_big_k = QuasiIdentifiers(columns=["country", "band"], k=5)
    assert not k_anonymity(con, "patients", too_big_k).satisfied


def test_fully_suppressed_table_is_vacuously_anonymous(tmp_path: Path) -> None:
    con = _release(tmp_path, [(None, None, "flu")] * 3)
    r = k_anonymity(con, "patients", QuasiIdentifiers(columns=["country", "band"], k=5))
    assert (r.rows, r.classes, r.suppressed_rows, r.min_k) == (0, 0, 3, 0)
    assert r.satisfied


def test_missing_column_is_a_clear_error(tmp_path: Path) -> None:
    con = _release(tmp_path, [("DE", "30s", "flu")])
    with pytest.raises(PrivacyInputError, match="no column"):
        k_anonymity(con, "patients", QuasiIdentifiers(columns=["country", "zip"], k=2))
    with pytest.raises(PrivacyInputError, match="does not exist"):
        k_anonymity(con, "nope", QuasiIdentifiers(columns=["country"], k=2))

"""Fidelity metrics against values computed by hand or in plain Python on tiny warehouses: KS,
TV, missing-value, statistic, correlation and contingency similarity, per-group KS p-values,
and the column statuses (replaced, not measured)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest
from scipy.stats import ks_2samp, pearsonr, spearmanr

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.fidelity import (
    fidelity_section,
    ks_statistic,
    statistic_similarity,
    tv_distance,
)
from benchforge.anonymize.report.models import ColumnFidelity, FidelitySection, PairMetric


def catalogs(tmp_path: Path, src: Sequence[str], rel: Sequence[str]) -> duckdb.DuckDBPyConnection:
    """Two DuckDB files with schema raw, attached as src (read-only) and rel."""
    for name, statements in (("src", src), ("rel", rel)):
        c = duckdb.connect(str(tmp_path / f"{name}.duckdb"))
        c.execute("CREATE SCHEMA raw")
        for s in statements:
            c.execute(s)
        c.close()
    con = duckdb.connect()
    con.execute(f"ATTACH '{tmp_path / 'src.duckdb'}' AS src (READ_ONLY)")
    con.execute(f"ATTACH '{tmp_path / 'rel.duckdb'}' AS rel (READ_ONLY)")
    return con


def values_table(name: str, columns: dict[str, str], rows: Sequence[Sequence[Any]]) -> list[str]:
    cols = ", ".join(f"{c} {t}" for c, t in columns.items())
    out = [f"CREATE TABLE raw.{name} ({cols})"]
    if rows:
        rendered = ", ".join(
            "(" + ", ".join("NULL" if v is None else repr(v) for v in row) + ")" for row in rows
        )
        out.append(f"INSERT INTO raw.{name} VALUES {rendered}")
    return out


def policy(tables: dict[str, Any]) -> Policy:
    return Policy.model_validate({"domain": "test", "tables": tables})


def column(section: FidelitySection, table: str, name: str) -> ColumnFidelity:
    return next(c for c in section.columns if c.table == table and c.column == name)


def pair(section: FidelitySection, a: str, b: str, metric: str) -> PairMetric:
    return next(
        p for p in section.pairs if {p.column_a, p.column_b} == {a, b} and p.metric == metric
    )


def brute_ks(a: Sequence[float], b: Sequence[float]) -> float:
    """sup |F_a - F_b| evaluated at every observed value (plain Python)."""
    d = 0.0
    for v in sorted(set(a) | set(b)):
        fa = sum(x <= v for x in a) / len(a)
        fb = sum(x <= v for x in b) / len(b)
        d = max(d, abs(fa - fb))
    return d


def test_ks_of_hand_example(tmp_path: Path) -> None:
    con = catalogs(
        tmp_path,
        values_table("t", {"x": "INTEGER"}, [[1], [2], [3], [4]]),
        values_table("t", {"x": "INTEGER"}, [[1], [2], [3], [5]]),
    )
    ks = ks_statistic(con, "SELECT x AS v FROM src.raw.t", "SELECT x AS v FROM rel.raw.t")
    assert ks.d == pytest.approx(0.25)
    assert (ks.n_src, ks.n_rel) == (4, 4)
    p = policy({"t": {"columns": {"x": {"rule": "perturb", "method": "noise"}}}})
    assert column(fidelity_section(con, p), "t", "x").ks_complement == pytest.approx(0.75)


def test_ks_matches_brute_force_with_ties_nulls_and_unequal_sizes(tmp_path: Path) -> None:
    rng = random.Random(3)
    a = [rng.randint(0, 30) for _ in range(400)]
    b = [rng.randint(3, 35) for _ in range(250)]
    con = catalogs(
        tmp_path,
        values_table("t", {"x": "INTEGER"}, [[v] for v in a] + [[None]] * 7),
        values_table("u", {"x": "INTEGER"}, [[v] for v in b] + [[None]] * 2),
    )
    ks = ks_statistic(con, "SELECT x AS v FROM src.raw.t", "SELECT x AS v FROM rel.raw.u")
    assert ks.d == pytest.approx(brute_ks(a, b), abs=1e-12)
    assert ks.d == pytest.approx(ks_2samp(a, b).statistic, abs=1e-12)
    assert (ks.n_src, ks.n_rel) == (400, 250)


def test_ks_on_dates_and_empty_side(tmp_path: Path) -> None:
    con = catalogs(
        tmp_path,
        values_table(
            "t",
            {"d": "DATE", "e": "DATE"},
            [["2024-01-01", "2024-01-01"], ["2024-01-02", None], ["2024-01-03", None]],
        ),
        values_table(
            "t",
            {"d": "DATE", "e": "DATE"},
            [["2024-01-01", None], ["2024-01-02", None], ["2024-01-09", None]],
        ),
    )
    p = policy({"t": {"columns": {"d": "keep", "e": "keep"}}})
    section = fidelity_section(con, p)
    # the third date moves past every source date: sup gap 1/3 at 2024-01-03
    assert column(section, "t", "d").ks_complement == pytest.approx(1 - 1 / 3)
    assert column(section, "t", "d").kind == "datetime"
    e = column(section, "t", "e")
    assert e.status == "not_measured" and e.ks_complement is None
    # null share 2/3 on the source, 3/3 on the release
    assert e.missing_similarity == pytest.approx(1 - 1 / 3)


def test_tv_and_missing_similarity_by_hand(tmp_path: Path) -> None:
    con = catalogs(
        tmp_path,
        values_table("t", {"c": "VARCHAR"}, [["a"], ["a"], ["b"], ["c"], [None], [None]]),
        values_table("t", {"c": "VARCHAR"}, [["a"], ["b"], ["b"], ["d"], [None], ["a"]]),
    )
    p = policy({"t": {"columns": {"c": {"rule": "generalize", "hierarchy": "prefix"}}}})
    c = column(fidelity_section(con, p), "t", "c")
    # src (non-NULL): a .5 b .25 c .25; rel: a .4 b .4 d .2 -> sum |diff| = .1+.15+.25+.2 = .7
    assert c.tv_complement == pytest.approx(1 - 0.35)
    # null share 2/6 vs 1/6
    assert c.missing_similarity == pytest.approx(1 - 1 / 6)
    assert c.kind == "categorical" and c.status == "scored"
    tv = tv_distance(con, "SELECT c AS v FROM src.raw.t", "SELECT c AS v FROM rel.raw.t", ["v"])
    assert (tv.n_src, tv.n_rel, tv.categories_src) == (4, 5, 3)


def test_statistic_similarity_by_hand(tmp_path: Path) -> None:
    assert statistic_similarity(10.0, 8.0) == pytest.approx(0.8)
    assert statistic_similarity(-2.0, 2.0) == 0.0
    assert statistic_similarity(0.0, 0.0) == 1.0
    assert statistic_similarity(None, 1.0) is None
    con = catalogs(
        tmp_path,
        values_table("t", {"x": "DOUBLE"}, [[1.0], [2.0], [3.0], [10.0]]),
        values_table("t", {"x": "DOUBLE"}, [[1.0], [2.0], [4.0], [13.0]]),
    )
    p = policy({"t": {"columns": {"x": {"rule": "perturb", "method": "noise"}}}})
    stats = column(fidelity_section(con, p), "t", "x").statistics
    assert stats is not None
    assert stats.mean == pytest.approx(1 - 1 / 5)  # means 4 and 5
    assert stats.median == pytest.approx(1 - 0.5 / 3)  # medians 2.5 and 3
    sd_src, sd_rel = np.std([1, 2, 3, 10], ddof=1), np.std([1, 2, 4, 13], ddof=1)
    assert stats.sd == pytest.approx(1 - abs(sd_src - sd_rel) / sd_rel)


def _corr_tables(n: int = 300) -> tuple[list[list[Any]], list[list[Any]]]:
    rng = random.Random(11)
    src, rel = [], []
    for i in range(n):
        x = rng.randint(0, 40)  # ties
        y = x * 2 + rng.gauss(0, 10)
        z = rng.gauss(0, 1)
        w = None if i % 13 == 0 else x + rng.gauss(0, 5)  # NULLs: the per-pair ranking path
        src.append([x, round(y, 3), round(z, 3), None if w is None else round(w, 3)])
        rel.append(
            [
                x,
                round(y + rng.gauss(0, 15), 3),
                round(z, 3),
                None if w is None else round(w + rng.gauss(0, 5), 3),
            ]
        )
    return src, rel


def _complete(rows: list[list[Any]], i: int, j: int) -> tuple[list[float], list[float]]:
    kept = [(r[i], r[j]) for r in rows if r[i] is not None and r[j] is not None]
    return [a for a, _ in kept], [b for _, b in kept]


def test_correlation_similarity_against_scipy(tmp_path: Path) -> None:
    src, rel = _corr_tables()
    types = {"x": "INTEGER", "y": "DOUBLE", "z": "DOUBLE", "w": "DOUBLE"}
    con = catalogs(tmp_path, values_table("t", types, src), values_table("t", types, rel))
    perturbed = {"rule": "perturb", "method": "noise"}
    p = policy({"t": {"columns": {"x": "keep", "y": perturbed, "z": "keep", "w": perturbed}}})
    section = fidelity_section(con, p)
    idx = {"x": 0, "y": 1, "z": 2, "w": 3}
    for a, b in (("x", "y"), ("x", "w"), ("y", "w")):
        for metric, fn in (("pearson", pearsonr), ("spearman", spearmanr)):
            rs = float(fn(*_complete(src, idx[a], idx[b])).statistic)
            rr = float(fn(*_complete(rel, idx[a], idx[b])).statistic)
            pm = pair(section, a, b, metric)
            assert pm.src == pytest.approx(rs, abs=1e-9), (a, b, metric)
            assert pm.rel == pytest.approx(rr, abs=1e-9), (a, b, metric)
            assert pm.score == pytest.approx(1 - abs(rs - rr) / 2, abs=1e-9)
    # z is independent of everything: |rho_src| < 0.1 -> skipped, not scored
    zy = pair(section, "y", "z", "pearson")
    assert zy.score is None and zy.skipped is not None and "0.1" in zy.skipped
    # pairs of two kept columns are not candidates (x, z)
    assert not [p for p in section.pairs if {p.column_a, p.column_b} == {"x", "z"}]
    assert section.pairs_skipped >= 2


def test_contingency_similarity_by_hand(tmp_path: Path) -> None:
    rng = random.Random(5)
    src = [[rng.choice("abc"), float(rng.randint(0, 100))] for _ in range(200)]
    rel = [[c, min(100.0, x + rng.choice([0, 0, 7, 15]))] for c, x in src]
    rel[0][0] = None  # dropped from the joint table
    types = {"c": "VARCHAR", "x": "DOUBLE"}
    con = catalogs(tmp_path, values_table("t", types, src), values_table("t", types, rel))
    p = policy({"t": {"columns": {"c": "keep", "x": {"rule": "perturb", "method": "noise"}}}})
    section = fidelity_section(con, p)

    lo, hi = min(x for _, x in src), max(x for _, x in src)
    width = (hi - lo) / 10

    def joint(rows: list[list[Any]]) -> dict[tuple[str, int], float]:
        kept = [(c, x) for c, x in rows if c is not None and x is not None]
        counts = Counter((c, max(0, min(9, int((x - lo) // width)))) for c, x in kept)
        return {k: v / len(kept) for k, v in counts.items()}

    js, jr = joint(src), joint(rel)
    expected = 1 - 0.5 * sum(abs(js.get(k, 0) - jr.get(k, 0)) for k in set(js) | set(jr))
    assert pair(section, "c", "x", "contingency").score == pytest.approx(expected, abs=1e-12)
    assert expected < 1.0


def test_identical_release_scores_one_everywhere(tmp_path: Path) -> None:
    src, _ = _corr_tables(120)
    rows = [[*r, random.Random(i).choice(["n", "s", "e"])] for i, r in enumerate(src)]
    types = {"x": "INTEGER", "y": "DOUBLE", "z": "DOUBLE", "w": "DOUBLE", "g": "VARCHAR"}
    con = catalogs(tmp_path, values_table("t", types, rows), values_table("t", types, rows))
    perturbed = {"rule": "perturb", "method": "noise", "group_by": ["g"]}
    p = policy(
        {"t": {"columns": {"x": "keep", "y": perturbed, "z": perturbed, "w": "keep", "g": "keep"}}}
    )
    section = fidelity_section(con, p)
    scored = [c for c in section.columns if c.status == "scored"]
    assert len(scored) == 5
    for c in scored:
        assert c.score == 1.0 and c.missing_similarity == 1.0
        if c.statistics is not None:
            assert (c.statistics.mean, c.statistics.sd, c.statistics.median) == (1.0, 1.0, 1.0)
    assert all(p.score == 1.0 for p in section.pairs if p.score is not None)
    assert section.correlation_mean == 1.0 and section.contingency_mean == 1.0
    for s in section.subgroups:
        assert s.max_d == 0.0 and s.min_p == 1.0 and s.share_p_above_05 == 1.0


def test_shifted_release_scores_low(tmp_path: Path) -> None:
    rows = [[float(i)] for i in range(200)]
    con = catalogs(
        tmp_path,
        values_table("t", {"x": "DOUBLE"}, rows),
        values_table("t", {"x": "DOUBLE"}, [[v + 50.0] for (v,) in rows]),
    )
    p = policy({"t": {"columns": {"x": {"rule": "perturb", "method": "noise"}}}})
    c = column(fidelity_section(con, p), "t", "x")
    assert c.ks_complement == pytest.approx(0.75)
    assert c.statistics is not None and c.statistics.mean is not None
    assert c.statistics.mean < 0.7


def test_subgroup_ks_pvalues_match_scipy(tmp_path: Path) -> None:
    rng = random.Random(2)
    src, rel = [], []
    for g, shift, n in (("a", 0.0, 150), ("b", 0.0, 90), ("c", 1.5, 60)):
        for _ in range(n):
            x = round(rng.gauss(10, 2), 2)
            src.append([g, x])
            rel.append([g, round(x + shift + rng.gauss(0, 0.3), 2)])
    types = {"g": "VARCHAR", "x": "DOUBLE"}
    con = catalogs(tmp_path, values_table("t", types, src), values_table("t", types, rel))
    perturbed = {"rule": "perturb", "method": "noise", "group_by": ["g"]}
    p = policy({"t": {"columns": {"g": "keep", "x": perturbed}}})
    (s,) = fidelity_section(con, p).subgroups
    expected = []
    for g in "abc":
        a = [x for gg, x in src if gg == g]
        b = [x for gg, x in rel if gg == g]
        expected.append(ks_2samp(a, b, method="asymp"))
    assert s.groups == 3 and s.group_by == ["g"]
    assert s.max_d == pytest.approx(max(e.statistic for e in expected), abs=1e-12)
    assert s.min_p == pytest.approx(min(e.pvalue for e in expected), rel=1e-9)
    assert s.share_p_above_05 == pytest.approx(sum(e.pvalue > 0.05 for e in expected) / 3)
    assert s.min_p is not None and s.min_p < 0.05  # the shifted group is detected


def test_column_statuses(tmp_path: Path) -> None:
    rows = [
        [f"ID-{i:04d}", f"user{i}@mail.test", f"{1000 + i:,}.00 USD", f"note {i}", i % 3, [1, 2]]
        for i in range(300)
    ]
    types = {
        "id": "VARCHAR",
        "email": "VARCHAR",
        "revenue": "VARCHAR",
        "note": "VARCHAR",
        "k": "INTEGER",
        "arr": "INTEGER[]",
    }
    stmts = values_table("t", types, rows)
    con = catalogs(tmp_path, stmts, stmts)
    p = policy(
        {
            "t": {
                "primary_key": "id",
                "columns": {
                    "id": "pseudonymize",
                    "email": {"rule": "fake", "provider": "email"},
                    "revenue": {"rule": "perturb", "method": "lsd"},
                    "note": "keep",
                    "k": "keep",
                    "arr": "keep",
                },
            }
        }
    )
    section = fidelity_section(con, p)
    assert column(section, "t", "id").status == "replaced"
    assert column(section, "t", "email").status == "replaced"
    revenue = column(section, "t", "revenue")
    assert revenue.status == "not_measured" and "text" in (revenue.reason or "")
    note = column(section, "t", "note")
    assert note.status == "not_measured" and note.kind == "text"
    assert column(section, "t", "arr").status == "not_measured"
    assert column(section, "t", "k").status == "scored"
    assert all(c.missing_similarity == 1.0 for c in section.columns)


def test_missing_release_table_is_not_measured(tmp_path: Path) -> None:
    con = catalogs(tmp_path, values_table("t", {"x": "INTEGER"}, [[1], [2]]), [])
    p = policy({"t": {"columns": {"x": "keep"}}})
    (c,) = fidelity_section(con, p).columns
    assert c.status == "not_measured" and "missing" in (c.reason or "")

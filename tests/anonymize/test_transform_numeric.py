"""Numeric perturbation: lsd equals a Python computation from the same keyed draws and keeps
digits, sign and magnitude (also inside numbers stored as text); noise keeps the distribution;
rank swapping and quantile noise keep the multiset exactly and move ranks at most the window;
duplicate rows stay identical."""

from __future__ import annotations

import bisect
import math
import random
from decimal import Decimal

import duckdb
import pytest

from benchforge.anonymize.policy.models import Perturb
from benchforge.anonymize.transform.numeric import (
    install_macros,
    lsd_lets,
    lsd_sql,
    perturb_column,
)
from benchforge.anonymize.transform.sql import (
    KEY,
    RID,
    SRC,
    ColumnSQL,
    TransformError,
    row_key_sql,
    uniform_sql,
    with_lets,
)

SALT = "0123456789abcdef0123456789abcdef"


def _con(rows: list[tuple], ddl: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS src; CREATE SCHEMA src.raw; ATTACH ':memory:' AS work")
    con.execute(f"CREATE TABLE src.raw.t ({ddl})")
    marks = ", ".join("?" for _ in rows[0])
    con.executemany(f"INSERT INTO src.raw.t VALUES ({marks})", [list(r) for r in rows])
    install_macros(con)
    return con


def _apply(
    con: duckdb.DuckDBPyConnection,
    rule: Perturb,
    column: str,
    type_: str,
    key: list[str],
    salt: str = SALT,
) -> list:
    columns = [r[0] for r in con.execute("DESCRIBE src.raw.t").fetchall()]
    sql = perturb_column(
        con,
        table="t",
        column=column,
        type_=type_,
        rule=rule,
        salt=salt,
        key_columns=key,
        all_columns=columns,
        source_table="src.raw.t",
        work_table="work.main.helper",
        alias="h",
    )
    source = with_lets(
        f"(SELECT *, rowid AS {RID}, {row_key_sql('t', key, columns)} AS {KEY} "
        f"FROM src.raw.t t) {SRC}",
        [sql],
    )
    rows = con.execute(
        f"SELECT {sql.expr} FROM {source} {' '.join(sql.joins)} ORDER BY {SRC}.{RID}"
    ).fetchall()
    return [r[0] for r in rows]


def _draws(con: duckdb.DuckDBPyConnection, key: list[str], salt: str = SALT) -> list[float]:
    columns = [r[0] for r in con.execute("DESCRIBE src.raw.t").fetchall()]
    rows = con.execute(
        f"SELECT {uniform_sql(salt, row_key_sql('t', key, columns))} FROM src.raw.t t "
        "ORDER BY rowid"
    ).fetchall()
    return [float(r[0]) for r in rows]


def _lsd_int(n: int, digits: int, u: float) -> int:
    d = len(str(n))
    if d <= digits:
        return n
    q = 10 ** (d - digits)
    return n - n % q + min(math.floor(u * q), q - 1)


def _lsd_float(x: float, decimals: int, digits: int, u: float) -> float:
    sign = -1 if x < 0 else 1
    n = round(abs(x) * 10**decimals)
    return sign * _lsd_int(n, digits, u) / 10**decimals


# ---------------------------------------------------------------- lsd


def test_lsd_equals_python_from_the_same_draws() -> None:
    rows = [
        ("A1", 12345.67, 987654321, Decimal("1234.56")),
        ("A2", -0.0028, -45, Decimal("-99999.99")),
        ("A3", 50413882.0, 7, Decimal("0.01")),
        ("A4", None, None, None),
        ("A5", 478.1, 2147483000, Decimal("12.50")),
    ]
    con = _con(rows, "id VARCHAR, x DOUBLE, i INTEGER, d DECIMAL(12, 2)")
    u = _draws(con, ["id"])
    got_x = _apply(con, Perturb(method="lsd"), "x", "DOUBLE", ["id"])
    got_i = _apply(con, Perturb(method="lsd"), "i", "INTEGER", ["id"])
    got_d = _apply(con, Perturb(method="lsd"), "d", "DECIMAL(12,2)", ["id"])
    decimals = {12345.67: 2, -0.0028: 4, 50413882.0: 0, 478.1: 1}
    for k, (_, x, i, d) in enumerate(rows):
        if x is None:
            assert got_x[k] is None and got_i[k] is None and got_d[k] is None
            continue
        assert got_x[k] == pytest.approx(_lsd_float(x, decimals[x], 3, u[k]), abs=1e-9)
        expected_i = (-1 if i < 0 else 1) * _lsd_int(abs(i), 3, u[k])
        assert got_i[k] == min(expected_i, 2**31 - 1)
        assert float(got_d[k]) == pytest.approx(_lsd_float(float(d), 2, 3, u[k]), abs=1e-9)
    assert got_x[1] == -0.0028  # only two significant digits: nothing to redraw
    assert got_i[2] == 7


def test_lsd_keeps_sign_magnitude_and_digit_count() -> None:
    rng = random.Random(5)
    rows = [(f"K{i}", rng.choice([-1, 1]) * rng.lognormvariate(8, 3)) for i in range(2000)]
    rows = [(k, round(v, 2)) for k, v in rows]
    con = _con(rows, "id VARCHAR, x DOUBLE")
    out = _apply(con, Perturb(method="lsd", digits=3), "x", "DOUBLE", ["id"])
    changed = 0
    for (_, x), y in zip(rows, out, strict=True):
        if x == 0:
            assert y == 0
            continue
        e = math.floor(math.log10(abs(x)))
        assert abs(y - x) < 10 ** (e - 3 + 1) + 1e-9
        assert (y < 0) == (x < 0)
        assert len(str(int(abs(y)))) == len(str(int(abs(x))))
        assert round(y, 2) == pytest.approx(y)  # still two decimals
        changed += y != x
    assert changed > 1800


def test_lsd_on_text_keeps_the_format_and_equals_the_numeric_draw() -> None:
    texts = ["1,234,567.00", "523.40 USD", "12 345", "-611.57", "n/a", None, "0.00", "676.82 万元"]
    numbers = [1234567.0, 523.4, 12345.0, -611.57, None, None, 0.0, 676.82]
    rows = [(f"K{i}", t, x) for i, (t, x) in enumerate(zip(texts, numbers, strict=True))]
    con = _con(rows, "id VARCHAR, t VARCHAR, x DOUBLE")
    out = _apply(con, Perturb(method="lsd"), "t", "VARCHAR", ["id"])
    u = _draws(con, ["id"])
    assert out[4] == "n/a" and out[5] is None and out[6] == "0.00"
    # format kept: same length, separators, decimals and suffix
    for original, new in zip(texts, out, strict=True):
        if original is None:
            continue
        assert len(new) == len(original)
        assert [c for c in new if not c.isdigit()] == [c for c in original if not c.isdigit()]
    # the number written is the numeric lsd of the parsed number under the same draw
    assert out[0] == f"{_lsd_float(1234567.0, 0, 3, u[0]):,.2f}"
    assert out[1] == f"{_lsd_float(523.4, 1, 3, u[1]):.2f} USD"
    assert out[2] == f"{_lsd_float(12345.0, 0, 3, u[2]):,.0f}".replace(",", " ")
    assert out[3] == f"{_lsd_float(-611.57, 2, 3, u[3]):.2f}"
    assert out[0].startswith("1,23") and out[0].endswith(".00")
    # a DOUBLE column on the same stream and key gets the same number
    numeric = _apply(con, Perturb(method="lsd"), "x", "DOUBLE", ["id"])
    assert float(out[0].replace(",", "")) == numeric[0]
    assert float(out[3]) == numeric[3]


def test_lsd_duplicates_stay_identical_and_streams_share_draws() -> None:
    rows = [("P1", 123456.0), ("P1", 123456.0), ("p1 ", 123456.0), ("P2", 123456.0)]
    con = _con(rows, "id VARCHAR, x DOUBLE")
    out = _apply(con, Perturb(method="lsd"), "x", "DOUBLE", ["id"])
    assert out[0] == out[1] == out[2]  # same canonical key: same draw
    assert out[3] != out[0]
    other_salt = _apply(con, Perturb(method="lsd"), "x", "DOUBLE", ["id"], salt="f" * 32)
    assert other_salt[0] != out[0]


# ---------------------------------------------------------------- noise


def _ks(a: list[float], b: list[float]) -> float:
    sa, sb = sorted(a), sorted(b)
    d = 0.0
    for v in sa + sb:
        fa = bisect.bisect_right(sa, v) / len(sa)
        fb = bisect.bisect_right(sb, v) / len(sb)
        d = max(d, abs(fa - fb))
    return d


def _sd(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


@pytest.fixture(scope="module")
def lognormal() -> list[tuple[str, float]]:
    rng = random.Random(11)
    return [(f"R{i:05d}", round(rng.lognormvariate(3, 1), 2)) for i in range(5000)]


def test_noise_keeps_the_distribution(lognormal: list[tuple[str, float]]) -> None:
    con = _con(lognormal, "id VARCHAR, x DOUBLE")
    x = [v for _, v in lognormal]
    out = _apply(con, Perturb(method="noise"), "x", "DOUBLE", ["id"])
    assert 1 - _ks(x, out) >= 0.95
    assert all(v >= 0 for v in out)  # a non-negative column stays non-negative
    assert all(round(v, 2) == pytest.approx(v) for v in out)  # money stays 2-decimal
    assert sum(a != b for a, b in zip(x, out, strict=True)) > 4500
    diffs = [b - a for a, b in zip(x, out, strict=True)]
    assert _sd(diffs) == pytest.approx(0.05 * _sd(x), rel=0.06)


def test_noise_standard_deviation_ratio(lognormal: list[tuple[str, float]]) -> None:
    con = _con(lognormal, "id VARCHAR, x DOUBLE")
    x = [v for _, v in lognormal]
    out = _apply(con, Perturb(method="noise", scale=0.5, min=-1e9), "x", "DOUBLE", ["id"])
    assert _sd(out) / _sd(x) == pytest.approx(math.sqrt(1 + 0.5**2), abs=0.03)
    no_noise_ratio = 1.0
    assert abs(_sd(out) / _sd(x) - no_noise_ratio) > 0.07


def test_noise_on_integers_rounds_and_clamps() -> None:
    rows = [(f"K{i}", i % 50) for i in range(1000)]
    con = _con(rows, "id VARCHAR, n INTEGER")
    out = _apply(con, Perturb(method="noise", scale=1.0, max=40), "n", "INTEGER", ["id"])
    assert all(isinstance(v, int) and 0 <= v <= 40 for v in out)
    assert sum(a != b for (_, a), b in zip(rows, out, strict=True)) > 500


def test_noise_group_sd() -> None:
    rows = [
        (f"K{i}", "small" if i % 2 else "big", (i % 7) * (1 if i % 2 else 1000.0))
        for i in range(2000)
    ]
    con = _con(rows, "id VARCHAR, g VARCHAR, x DOUBLE")
    out = _apply(con, Perturb(method="noise", scale=0.1, group_by=["g"]), "x", "DOUBLE", ["id"])
    small = [abs(b - a) for (_, g, a), b in zip(rows, out, strict=True) if g == "small"]
    assert max(small) < 10  # the small group's noise follows its own sd (~2), not the big one's


def test_noise_on_text_is_refused() -> None:
    con = _con([("a", "1.0")], "id VARCHAR, t VARCHAR")
    with pytest.raises(TransformError, match="only take method lsd"):
        _apply(con, Perturb(method="noise"), "t", "VARCHAR", ["id"])


# ---------------------------------------------------------------- rank methods


def _ranks(values: list[float]) -> list[int]:
    order = sorted(range(len(values)), key=lambda i: (values[i], i))
    ranks = [0] * len(values)
    for r, i in enumerate(order):
        ranks[i] = r
    return ranks


def test_rank_swap_keeps_the_multiset_and_moves_at_most_the_window() -> None:
    rng = random.Random(2)
    n = 1000
    values = rng.sample(range(10**6), n)  # distinct values, so ranks are unambiguous
    rows = [(f"K{i}", float(v)) for i, v in enumerate(values)]
    con = _con(rows, "id VARCHAR, x DOUBLE")
    rule = Perturb(method="rank_swap", window_pct=2.0, extremes_pct=5.0)
    out = _apply(con, rule, "x", "DOUBLE", ["id"])
    assert sorted(out) == sorted(float(v) for v in values)
    before = _ranks([float(v) for v in values])
    after = {v: r for r, v in enumerate(sorted(out))}
    tail = math.floor(n * 0.05)
    moved = 0
    for i, y in enumerate(out):
        r0, r1 = before[i], after[y]
        if r0 < tail:
            assert r1 < tail  # bottom tail stays in the bottom tail
        elif r0 >= n - tail:
            assert r1 >= n - tail
        else:
            assert abs(r1 - r0) <= 0.02 * n
            assert tail <= r1 < n - tail
        moved += r1 != r0
    assert moved > 0.8 * n


def test_rank_swap_within_groups_keeps_each_groups_multiset() -> None:
    # the group column is named like a helper column of a naive implementation
    rows = [(f"K{i}", ("a", "b", "c")[i % 3], float((i * 37) % 101)) for i in range(900)]
    con = _con(rows, "id VARCHAR, n VARCHAR, x DOUBLE")
    out = _apply(
        con, Perturb(method="rank_swap", group_by=["n"], window_pct=10), "x", "DOUBLE", ["id"]
    )
    for g in "abc":
        src = sorted(x for (_, gg, x) in rows if gg == g)
        rel = sorted(y for (_, gg, _), y in zip(rows, out, strict=True) if gg == g)
        assert src == rel


def test_rank_methods_keep_duplicates_identical_and_nulls() -> None:
    rows = [("D1", 5.0), ("D1", 5.0), ("D2", None)] + [(f"K{i}", float(i)) for i in range(200)]
    con = _con(rows, "id VARCHAR, x DOUBLE")
    for method in ("rank_swap", "quantile"):
        out = _apply(con, Perturb(method=method, window_pct=20), "x", "DOUBLE", ["id"])  # type: ignore[arg-type]
        assert out[0] == out[1]
        assert out[2] is None


def test_quantile_keeps_the_multiset_and_the_ranking_mostly() -> None:
    rng = random.Random(8)
    values = [round(rng.lognormvariate(5, 2), 2) for _ in range(2000)]
    rows = [(f"Q{i}", v) for i, v in enumerate(values)]
    con = _con(rows, "id VARCHAR, x DOUBLE")
    out = _apply(con, Perturb(method="quantile", scale=0.1), "x", "DOUBLE", ["id"])
    assert sorted(out) == sorted(values)
    assert sum(a != b for a, b in zip(values, out, strict=True)) > 1500
    ra, rb = _ranks(values), _ranks(out)
    n = len(values)
    spearman = 1 - 6 * sum((a - b) ** 2 for a, b in zip(ra, rb, strict=True)) / (n * (n * n - 1))
    assert 0.95 < spearman < 1.0


# ---------------------------------------------------------------- lsd with a minimum change


def _short_counts() -> list[tuple[str, int, float, str]]:
    """Campaign-like counts: most have three digits or fewer, which plain lsd never touches."""
    rng = random.Random(11)
    rows = []
    for i in range(1000):
        n = int(rng.lognormvariate(5, 1.5)) + 1
        rows.append((f"C{i}", n, n / 4, f"{n:,}"))
    return rows


def test_plain_lsd_leaves_short_values_unchanged() -> None:
    rows = _short_counts()
    con = _con(rows, "id VARCHAR, n INTEGER, x DOUBLE, t VARCHAR")
    out = _apply(con, Perturb(method="lsd"), "n", "INTEGER", ["id"])
    unchanged = sum(y == n for (_, n, _, _), y in zip(rows, out, strict=True)) / len(rows)
    assert unchanged > 0.5


@pytest.mark.parametrize(("column", "type_"), [("n", "INTEGER"), ("x", "DOUBLE")])
def test_min_relative_change_moves_every_value_by_at_least_the_share(
    column: str, type_: str
) -> None:
    rows = _short_counts()
    con = _con(rows, "id VARCHAR, n INTEGER, x DOUBLE, t VARCHAR")
    rule = Perturb(method="lsd", min_relative_change=0.02)
    out = _apply(con, rule, column, type_, ["id"])
    index = 1 if column == "n" else 2
    for row, y in zip(rows, out, strict=True):
        x = row[index]
        assert abs(y - x) >= 0.02 * abs(x) - 1e-9
        # no more than the minimum rounded up to the value's resolution, or lsd's own change
        e = math.floor(math.log10(abs(x)))
        resolution = 10.0 ** -next(d for d in range(3) if round(x, d) == x)
        assert abs(y - x) <= max(0.02 * abs(x) + resolution, 10 ** (e - 2)) + 1e-9
        assert (y > 0) == (x > 0)
    moved_up = sum(y > row[index] for row, y in zip(rows, out, strict=True))
    assert 300 < moved_up < 700  # both directions


def test_min_relative_change_on_text_equals_the_numeric_draw() -> None:
    rows = _short_counts()
    con = _con(rows, "id VARCHAR, n INTEGER, x DOUBLE, t VARCHAR")
    rule = Perturb(method="lsd", min_relative_change=0.02)
    text = _apply(con, rule, "t", "VARCHAR", ["id"])
    numbers = _apply(con, rule, "n", "INTEGER", ["id"])
    assert [float(t.replace(",", "")) for t in text] == [float(n) for n in numbers]


def test_min_relative_change_is_bounded() -> None:
    with pytest.raises(ValueError):
        Perturb(method="lsd", min_relative_change=0.6)
    with pytest.raises(ValueError, match="lsd"):
        Perturb(method="noise", min_relative_change=0.01)


def test_pow10_macro_is_exact_for_every_hugeint_power() -> None:
    con = duckdb.connect()
    install_macros(con)
    got = con.execute("SELECT list(anon_pow10(k)::VARCHAR ORDER BY k) FROM range(39) r(k)")
    row = got.fetchone()
    assert row is not None
    assert row[0] == [str(10**k) for k in range(39)]
    # 123456 keeps 3 digits, the 3 below are redrawn from u at 10^3 resolution
    lsd = con.execute("SELECT anon_lsd_n(123456::HUGEINT, 3, 0.5), anon_lsd_n(42::HUGEINT, 3, 0.9)")
    assert lsd.fetchone() == (123500, 42)


def test_the_64_bit_lsd_macro_draws_what_the_hugeint_one_draws() -> None:
    """``anon_lsd_b`` (BIGINT, the fast path below 10^17) against ``anon_lsd_n``: every digit
    count from 1 to 17, draws near 0 and 1 included."""
    con = duckdb.connect()
    install_macros(con)
    cases = con.execute(
        """SELECT n, u, anon_lsd_b(n, digits, u) AS fast, anon_lsd_n(n::HUGEINT, digits, u) AS ref
           FROM (SELECT (10 ** (k % 17))::BIGINT
                        + (k * 829348951) % (9 * (10 ** (k % 17))::BIGINT) AS n,
                        [1e-12, 0.25, 0.5, 0.999999999999][k % 4 + 1] AS u,
                        1 + k % 4 AS digits
                 FROM range(400) r(k))"""
    ).fetchall()
    assert len(cases) == 400
    assert {len(str(n)) for n, *_ in cases} == set(range(1, 18))
    assert [(n, u, fast) for n, u, fast, _ in cases] == [(n, u, ref) for n, u, _, ref in cases]


LETS_VALUES = [
    0.0,
    -0.0028,
    12345.67,
    -98765.4321,
    5.0,
    123456789012.5,
    98765432109876543.0,  # >= 10^17: the HUGEINT path
    1.234567890123,  # more than 9 decimals: the floating path
    3.5e30,
    None,
]


@pytest.mark.parametrize("share", [0.0, 0.006])
@pytest.mark.parametrize("type_", ["DOUBLE", "INTEGER", "BIGINT", "DECIMAL(18,4)"])
def test_lsd_as_projections_equals_the_bound_expression(type_: str, share: float) -> None:
    """The release computes lsd as projection columns (:func:`lsd_lets`); the reference is the
    one-expression form (:func:`lsd_sql`). Same draws, same values, to the bit."""
    con = duckdb.connect()
    install_macros(con)
    bound = {"DOUBLE": 1e31, "BIGINT": 1e12, "DECIMAL(18,4)": 1e12}.get(type_, 2e9)
    values = [v for v in LETS_VALUES if v is None or abs(v) < bound]
    con.execute(f"CREATE TABLE t (k BIGINT, x {type_})")
    con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(values)))
    u = "((hash(k) >> 11)::DOUBLE + 0.5) / 9007199254740992.0"
    lets, expr = lsd_lets(f"{SRC}.x", type_, 3, f"{SRC}.__u", share, "p")
    source = with_lets(f"(SELECT *, {u} AS __u FROM t) {SRC}", [ColumnSQL(expr=expr, lets=lets)])
    got = con.execute(f"SELECT {SRC}.k, {expr} FROM {source} ORDER BY 1").fetchall()
    ref = con.execute(f"SELECT k, {lsd_sql('x', type_, 3, u, share)} FROM t ORDER BY 1").fetchall()
    assert len(got) == len(values)
    assert got == ref
    assert any(r[1] != v for r, v in zip(got, values, strict=True) if v)  # something moved

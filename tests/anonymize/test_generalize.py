"""k-anonymity generalization: the SQL of each hierarchy level against values computed by hand,
and the greedy plan against a brute-force replay of the same algorithm in plain Python."""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchforge.anonymize.policy.models import Generalize, QuasiIdentifiers
from benchforge.anonymize.transform.generalize import (
    GeneralizationError,
    generalized_expression,
    k_anonymity_stats,
    plan_generalization,
)

REGION = {"Paris": "FR-North", "Lille": "FR-North", "Lyon": "FR-South", "Nice": "FR-South"}
COUNTRY = {"FR-North": "FR", "FR-South": "FR", "Berlin": "DE"}  # chain, plus one direct entry


@pytest.fixture()
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(tmp_path / "g.duckdb"))


def _values(con: duckdb.DuckDBPyConnection, sql: str, table: str = "t") -> list[Any]:
    return [r[0] for r in con.execute(f"SELECT {sql} FROM {table} ORDER BY rowid").fetchall()]


# ----------------------------------------------------------------- one expression, one level


def test_numeric_bins_double_per_level_and_keep_the_type(con: duckdb.DuckDBPyConnection) -> None:
    ages = [0, 4, 5, 17, 23, 39, 40, 99, -3, None]
    con.execute("CREATE TABLE t (age INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [[a] for a in ages])
    rule = Generalize(hierarchy="numeric", base_width=5, max_level=3)
    for level, width in [(1, 5), (2, 10), (3, 20)]:
        expr = generalized_expression("age", rule, level, "INTEGER")
        expected = [None if a is None else math.floor(a / width) * width for a in ages]
        assert _values(con, expr) == expected
        assert _values(con, f"typeof({expr})")[0] == "INTEGER"
    assert _values(con, generalized_expression("age", rule, 0, "INTEGER")) == ages
    # past max_level: the most general value of a number is NULL
    assert _values(con, generalized_expression("age", rule, 4, "INTEGER")) == [None] * len(ages)


def test_decimal_bins(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE t (x DECIMAL(10, 2))")
    con.execute("INSERT INTO t VALUES (1.26), (0.74), (-0.01)")
    rule = Generalize(hierarchy="numeric", base_width=0.5)
    expr = generalized_expression("x", rule, 1, "DECIMAL(10,2)")
    assert [float(v) for v in _values(con, expr)] == [1.0, 0.5, -0.5]


@pytest.mark.parametrize("column_type", ["DATE", "TIMESTAMP"])
def test_date_levels_are_month_quarter_year_decade(
    con: duckdb.DuckDBPyConnection, column_type: str
) -> None:
    con.execute(f"CREATE TABLE t (d {column_type})")
    con.execute("INSERT INTO t VALUES ('2017-08-19'), ('2020-02-29'), (NULL)")
    rule = Generalize(hierarchy="date", max_level=5)
    expected = {
        1: [dt.date(2017, 8, 1), dt.date(2020, 2, 1), None],
        2: [dt.date(2017, 7, 1), dt.date(2020, 1, 1), None],
        3: [dt.date(2017, 1, 1), dt.date(2020, 1, 1), None],
        4: [dt.date(2010, 1, 1), dt.date(2020, 1, 1), None],
        5: [dt.date(2010, 1, 1), dt.date(2020, 1, 1), None],  # decade from level 4 on
    }
    for level, dates in expected.items():
        expr = generalized_expression("d", rule, level, column_type)
        got = _values(con, expr)
        if column_type == "TIMESTAMP":
            got = [None if v is None else v.date() for v in got]
            assert all(v is None or v.time() == dt.time(0) for v in _values(con, expr))
        assert got == dates
        assert _values(con, f"typeof({expr})")[0] == column_type
    assert _values(con, generalized_expression("d", rule, 6, column_type)) == [None] * 3


def test_prefix_keeps_length(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE t (zip VARCHAR)")
    con.execute("INSERT INTO t VALUES ('75011'), ('K1A'), (''), (NULL)")
    rule = Generalize(hierarchy="prefix", max_level=4)
    assert _values(con, generalized_expression("zip", rule, 2, "VARCHAR")) == [
        "750**",
        "K**",
        "",
        None,
    ]
    assert _values(con, generalized_expression("zip", rule, 4, "VARCHAR")) == [
        "7****",
        "***",
        "",
        None,
    ]
    assert _values(con, generalized_expression("zip", rule, 5, "VARCHAR")) == [
        "*",
        "*",
        "*",
        None,
    ]


def test_prefix_of_an_integer_column_is_text(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE t (code INTEGER)")
    con.execute("INSERT INTO t VALUES (12345)")
    expr = generalized_expression("code", Generalize(hierarchy="prefix"), 1, "INTEGER")
    assert _values(con, expr) == ["1234*"]


def test_hierarchy_direct_chained_and_unmapped(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE t (city VARCHAR)")
    cities = ["Paris", "Lyon", "Berlin", "Oslo", "O'Hare", None]
    con.executemany("INSERT INTO t VALUES (?)", [[c] for c in cities])
    rule = Generalize(hierarchy="hierarchy", levels=[REGION, COUNTRY], max_level=3)
    level1 = generalized_expression("city", rule, 1, "VARCHAR")
    assert _values(con, level1) == ["FR-North", "FR-South", "*", "*", "*", None]
    level2 = generalized_expression("city", rule, 2, "VARCHAR")
    # Paris -> FR-North -> FR through the chain; Berlin is listed directly at level 2
    assert _values(con, level2) == ["FR", "FR", "DE", "*", "*", None]
    level3 = generalized_expression("city", rule, 3, "VARCHAR")  # past the mappings: the root
    assert _values(con, level3) == ["*", "*", "*", "*", "*", None]


@pytest.mark.parametrize(
    ("rule", "column_type"),
    [
        (Generalize(hierarchy="numeric", base_width=5), "VARCHAR"),
        (Generalize(hierarchy="numeric"), "INTEGER"),
        (Generalize(hierarchy="date"), "VARCHAR"),
        (Generalize(hierarchy="hierarchy"), "VARCHAR"),
    ],
)
def test_rules_that_cannot_apply_are_refused(rule: Generalize, column_type: str) -> None:
    with pytest.raises(GeneralizationError):
        generalized_expression("c", rule, 1, column_type)


# ----------------------------------------------------------------- the greedy plan


def _bin(width: float) -> Callable[[Any], Any]:
    return lambda v: None if v is None else math.floor(v / width) * width


def _prefix(level: int) -> Callable[[Any], Any]:
    return lambda v: None if v is None else v[: max(len(v) - level, 0)] + "*" * min(level, len(v))


def _brute_force(
    rows: list[dict[str, Any]],
    columns: list[str],
    generalizers: dict[str, Callable[[int], Callable[[Any], Any]]],
    max_levels: dict[str, int],
    k: int,
    budget: float,
) -> tuple[dict[str, int], list[tuple[Any, ...]], Counter[tuple[Any, ...]]]:
    """Datafly replayed in Python: the levels, each row's generalized key, the class sizes."""
    levels = dict.fromkeys(columns, 0)

    def keyed() -> list[tuple[Any, ...]]:
        return [
            tuple(
                generalizers[c](levels[c])(r[c]) if c in generalizers and levels[c] else r[c]
                for c in columns
            )
            for r in rows
        ]

    while True:
        keys = keyed()
        sizes = Counter(keys)
        small = sum(n for n in sizes.values() if n < k)
        if small / len(rows) <= budget:
            break
        candidates = [c for c in columns if c in generalizers and levels[c] < max_levels[c]]
        if not candidates:
            break
        distinct = {c: len({key[columns.index(c)] for key in keys} - {None}) for c in candidates}
        best = max(candidates, key=lambda c: (distinct[c], -candidates.index(c)))
        levels[best] += 1
    keys = keyed()
    return levels, keys, Counter(keys)


def _people(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    prefixes = [f"{p:02d}" for p in rng.sample(range(10, 99), 12)]
    return [
        {
            "age": None if rng.random() < 0.03 else rng.randint(18, 90),
            "zip": rng.choice(prefixes) + f"{rng.randint(0, 999):03d}",
            "sex": rng.choice(["F", "M"]),
            "city": rng.choice([*REGION, "Berlin"]),
            "amount": rng.randint(1, 1000),
        }
        for _ in range(n)
    ]


def _load(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    con.execute(
        "CREATE TABLE people (age INTEGER, zip VARCHAR, sex VARCHAR, city VARCHAR, amount INTEGER)"
    )
    con.executemany(
        "INSERT INTO people VALUES (?, ?, ?, ?, ?)",
        [[r["age"], r["zip"], r["sex"], r["city"], r["amount"]] for r in rows],
    )


TYPES = {"age": "INTEGER", "zip": "VARCHAR", "sex": "VARCHAR", "city": "VARCHAR"}
RULES = {
    "age": Generalize(hierarchy="numeric", base_width=5, max_level=4),
    "zip": Generalize(hierarchy="prefix", max_level=5),
}
GENERALIZERS: dict[str, Callable[[int], Callable[[Any], Any]]] = {
    "age": lambda level: _bin(5 * 2 ** (level - 1)),
    "zip": _prefix,
}


def _released(con: duckdb.DuckDBPyConnection, select_sql: dict[str, str]) -> list[tuple]:
    selected = ", ".join(f"{expr} AS {col}" for col, expr in select_sql.items())
    return con.execute(f"SELECT {selected}, amount FROM people ORDER BY rowid").fetchall()


def test_plan_matches_brute_force_and_reaches_k(con: duckdb.DuckDBPyConnection) -> None:
    rows = _people(400, seed=11)
    _load(con, rows)
    qi = QuasiIdentifiers(columns=["age", "zip", "sex"], k=5, suppression_budget=0.05)
    plan = plan_generalization(con, "people", qi, RULES, TYPES)

    levels, keys, sizes = _brute_force(
        rows, qi.columns, GENERALIZERS, {"age": 4, "zip": 5}, k=5, budget=0.05
    )
    assert plan.levels == levels
    assert sum(levels.values()) >= 2  # the data needs more than one step
    small = {key for key, n in sizes.items() if n < 5}
    assert plan.suppressed_rows == sum(sizes[key] for key in small)
    assert plan.suppressed_rows <= 0.05 * len(rows)
    assert plan.within_budget
    assert plan.rows == len(rows)
    assert plan.classes == len(sizes) - len(small)
    assert plan.min_k_after == min(n for n in sizes.values() if n >= 5)

    released = _released(con, plan.select_sql)
    kept_sizes = Counter(r[:3] for r in released if r[:3] != (None, None, None))
    assert min(kept_sizes.values()) >= 5
    suppressed = [i for i, key in enumerate(keys) if key in small]
    assert [i for i, r in enumerate(released) if r[:3] == (None, None, None)] == suppressed
    for i, (row, key) in enumerate(zip(released, keys, strict=True)):
        assert row[3] == rows[i]["amount"]  # other columns and the row order are untouched
        if i not in suppressed:
            assert row[:3] == key
            assert row[2] == rows[i]["sex"]  # a kept quasi-identifier never changes


def test_budget_zero_suppresses_nothing_that_generalizing_can_fix(
    con: duckdb.DuckDBPyConnection,
) -> None:
    rows = _people(300, seed=5)
    _load(con, rows)
    qi = QuasiIdentifiers(columns=["age", "city"], k=4, suppression_budget=0.0)
    rules = {**RULES, "city": Generalize(hierarchy="hierarchy", levels=[REGION, COUNTRY])}
    plan = plan_generalization(con, "people", qi, rules, TYPES)
    gens = {
        "age": GENERALIZERS["age"],
        "city": lambda level: (
            lambda v: {1: {**REGION}, 2: {**{c: "FR" for c in REGION}, "Berlin": "DE"}}.get(
                level, {}
            ).get(v, "*")
        ),
    }
    levels, _, sizes = _brute_force(rows, qi.columns, gens, {"age": 4, "city": 4}, 4, 0.0)
    assert plan.levels == levels
    assert plan.suppressed_rows == sum(n for n in sizes.values() if n < 4)
    if plan.within_budget:
        assert plan.suppressed_rows == 0


def test_exhausted_levels_suppress_beyond_the_budget(con: duckdb.DuckDBPyConnection) -> None:
    rows = _people(200, seed=2)
    _load(con, rows)
    # sex is kept and zip may drop three characters at most (12 prefixes x 2 sexes left, about
    # 8 rows each): not enough for k=10 with 1 % suppression
    qi = QuasiIdentifiers(columns=["zip", "sex"], k=10, suppression_budget=0.01)
    rules = {"zip": Generalize(hierarchy="prefix", max_level=3)}
    plan = plan_generalization(con, "people", qi, rules, TYPES)
    assert plan.levels == {"zip": 3, "sex": 0}
    assert not plan.within_budget
    sizes = Counter((r["zip"][:2] + "***", r["sex"]) for r in rows)
    assert plan.classes == sum(1 for n in sizes.values() if n >= 10) > 0
    assert plan.suppressed_rows == sum(n for n in sizes.values() if n < 10)
    assert plan.suppressed_rows > 0.01 * len(rows)
    released = _released(con, plan.select_sql)
    remaining = Counter(r[:2] for r in released if r[:2] != (None, None))
    assert all(n >= 10 for n in remaining.values())
    assert sum(remaining.values()) == len(rows) - plan.suppressed_rows


def test_k_anonymous_table_stays_at_level_zero(con: duckdb.DuckDBPyConnection) -> None:
    rows = [
        {"age": 30 + i % 3, "zip": "75011", "sex": "F", "city": "Paris", "amount": i}
        for i in range(30)
    ]
    _load(con, rows)
    qi = QuasiIdentifiers(columns=["age", "zip"], k=5, suppression_budget=0.0)
    plan = plan_generalization(con, "people", qi, RULES, TYPES)
    assert plan.levels == {"age": 0, "zip": 0}
    assert plan.suppressed_rows == 0
    assert plan.select_sql == {"age": '"age"', "zip": '"zip"'}
    assert (plan.min_k_after, plan.classes) == (10, 3)


def test_null_quasi_identifiers_form_one_class(con: duckdb.DuckDBPyConnection) -> None:
    rows = [{"age": None, "zip": "1", "sex": "F", "city": "Nice", "amount": 0}] * 6 + [
        {"age": 40, "zip": "1", "sex": "F", "city": "Nice", "amount": 0}
    ] * 6
    _load(con, rows)
    qi = QuasiIdentifiers(columns=["age", "sex"], k=6, suppression_budget=0.0)
    plan = plan_generalization(con, "people", qi, {}, TYPES)
    assert (plan.levels, plan.suppressed_rows, plan.classes) == ({"age": 0, "sex": 0}, 0, 2)


def test_missing_type_is_refused(con: duckdb.DuckDBPyConnection) -> None:
    _load(con, _people(10, seed=1))
    qi = QuasiIdentifiers(columns=["age", "zip"])
    with pytest.raises(GeneralizationError):
        plan_generalization(con, "people", qi, RULES, {"age": "INTEGER"})


def test_k_anonymity_stats_match_counts(con: duckdb.DuckDBPyConnection) -> None:
    rows = _people(250, seed=9)
    _load(con, rows)
    sizes = Counter((r["sex"], r["city"], r["age"] is None) for r in rows)
    con.execute("CREATE VIEW v AS SELECT sex, city, age IS NULL AS no_age FROM people")
    smallest, share, classes = k_anonymity_stats(con, "v", ["sex", "city", "no_age"], 20)
    assert smallest == min(sizes.values())
    assert classes == len(sizes)
    assert share == pytest.approx(sum(n for n in sizes.values() if n < 20) / 250)
    assert share > 0  # some (sex, city, no-age) classes are below 20
    # all-NULL rows (suppressed) are left out on request
    con.execute("CREATE TABLE s (a INTEGER, b VARCHAR)")
    con.execute("INSERT INTO s VALUES (NULL, NULL), (NULL, NULL), (1, 'x'), (1, 'x'), (1, 'x')")
    assert k_anonymity_stats(con, "s", ["a", "b"], 3) == (2, 0.4, 2)
    assert k_anonymity_stats(con, "s", ["a", "b"], 3, exclude_suppressed=True) == (3, 0.0, 1)
    con.execute("CREATE TABLE e (a INTEGER)")
    assert k_anonymity_stats(con, "e", ["a"], 3) == (0, 0.0, 0)

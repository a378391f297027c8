"""The utility workload: generated from the schema, deterministic given a seed, capped; and its
comparison: zero error on an identical release, exact hand-computed errors on a scaled one,
coverage lost when a group disappears, and failures recorded per query."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report import utility
from benchforge.anonymize.report.utility import build_workload, relative_error, utility_section

REGIONS = ["north", "south", "east"]
TIERS = ["gold", "silver", "bronze", "lead"]
REPS = ["Ann Lee", "Bo Chen", "Cy Diaz"]


def catalogs(tmp_path: Path, src: Sequence[str], rel: Sequence[str]) -> duckdb.DuckDBPyConnection:
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


def _lit(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


def insert(table: str, rows: Sequence[Sequence[Any]]) -> str:
    return f"INSERT INTO raw.{table} VALUES " + ", ".join(
        "(" + ", ".join(_lit(v) for v in r) + ")" for r in rows
    )


def warehouse(scale: float = 1.0, rename_south: bool = False) -> list[str]:
    """accounts (parent, with a tier) and orders (child: region, channel, status, amount, qty).
    ``scale`` multiplies every amount; ``rename_south`` relabels one region in orders."""
    rng = random.Random(7)
    accounts = [[f"ACC-{i}", TIERS[i % 4], f"owner{i}@mail.test", 7 * i] for i in range(40)]
    orders = []
    for i in range(600):
        region = REGIONS[i % 3]
        if rename_south and region == "south":
            region = "SOUTH"
        orders.append(
            [
                f"ORD-{i}",
                f"acc-{rng.randrange(40)} " if i % 10 == 0 else f"ACC-{rng.randrange(40)}",
                region,
                ["web", "store"][i % 2],
                ["open", "closed", "closed"][i % 3 if i % 5 else 1],
                round(rng.uniform(10, 500), 2) * scale,
                rng.randint(1, 9),
                REPS[i % len(REPS)],
            ]
        )
    return [
        "CREATE TABLE raw.accounts (account_id VARCHAR, tier VARCHAR, email VARCHAR, "
        "employees INTEGER)",
        insert("accounts", accounts),
        "CREATE TABLE raw.orders (order_id VARCHAR, account_id VARCHAR, region VARCHAR, "
        "channel VARCHAR, status VARCHAR, amount DOUBLE, qty INTEGER, rep_name VARCHAR)",
        insert("orders", orders),
    ]


POLICY = Policy.model_validate(
    {
        "domain": "test",
        "tables": {
            "accounts": {
                "primary_key": "account_id",
                "columns": {
                    "account_id": "pseudonymize",
                    "tier": "keep",
                    "email": {"rule": "fake", "provider": "email", "pii": "direct"},
                    # a generalized quasi-identifier is not a measure
                    "employees": {"rule": "generalize", "hierarchy": "numeric", "base_width": 10},
                },
            },
            "orders": {
                "primary_key": "order_id",
                "foreign_keys": {"account_id": "accounts.account_id"},
                "columns": {
                    "order_id": "pseudonymize",
                    "account_id": "pseudonymize",
                    "region": "keep",
                    "channel": "keep",
                    "status": "keep",
                    "amount": {"rule": "perturb", "method": "noise"},
                    "qty": "keep",
                    # a low-cardinality direct identifier must never group or filter
                    "rep_name": {"rule": "keep", "allow_pii": True, "pii": "direct"},
                },
            },
        },
    }
)


def test_relative_error_definition() -> None:
    assert relative_error(10.0, 11.0) == pytest.approx(0.1)
    assert relative_error(-4.0, -3.0) == pytest.approx(0.25)
    assert relative_error(None, None) == 0.0
    assert relative_error(None, 1.0) == 1.0 and relative_error(2.0, None) == 1.0
    assert relative_error(0.0, 1e-9) == pytest.approx(1.0)


def test_workload_is_schema_driven_and_deterministic(tmp_path: Path) -> None:
    stmts = warehouse()
    con = catalogs(tmp_path, stmts, stmts)
    first = build_workload(con, POLICY, seed=0)
    again = build_workload(con, POLICY, seed=0)
    assert [(q.id, q.sql) for q in first] == [(q.id, q.sql) for q in again]
    kinds = {q.kind for q in first}
    assert kinds == {"total", "group", "fk_group", "filter"}
    sql = "\n".join(q.sql for q in first)
    # replaced and identifying columns never group or filter; keys are never measures
    assert "email" not in sql and "rep_name" not in sql and "Ann Lee" not in sql
    assert "sum(account_id)" not in sql and "order_id" not in sql and "employees" not in sql
    assert "sum(amount)" in sql and "quantile_cont(amount, 0.5)" in sql
    fk = next(q for q in first if q.kind == "fk_group")
    assert "JOIN raw.accounts" in fk.sql and "upper(trim(CAST(c.account_id" in fk.sql
    assert "p.tier AS g" in fk.sql
    filt = next(q for q in first if q.kind == "filter" and q.table == "orders")
    # WHERE <col> = its most frequent value, as a subquery: no data value in the SQL
    col = filt.sql.split("WHERE ")[1].split(" = ")[0]
    assert f"(SELECT {col} FROM raw.orders" in filt.sql and "'" not in filt.sql
    mode = con.execute(
        f"SELECT {col} FROM src.raw.orders GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
    ).fetchone()
    assert mode is not None
    con.execute("USE src")
    rows = con.execute(filt.sql).fetchall()  # (g, n, ...) per group
    con.execute("USE memory")
    expected = con.execute(
        f"SELECT count(*) FROM src.raw.orders WHERE {col} = ?", [mode[0]]
    ).fetchone()
    assert expected is not None and 0 < expected[0] < 600
    assert sum(r[1] for r in rows) == expected[0]
    assert all(len([q for q in first if q.table == t]) <= 8 for t in ("accounts", "orders"))
    # the seed picks the grouping columns: some other seed gives another workload
    others = {tuple(q.sql for q in build_workload(con, POLICY, seed=s)) for s in range(1, 8)}
    assert len(others | {tuple(q.sql for q in first)}) > 1


def test_identical_release_has_zero_error(tmp_path: Path) -> None:
    stmts = warehouse()
    con = catalogs(tmp_path, stmts, stmts)
    section = utility_section(con, POLICY, seed=0)
    assert section.cells > 0 and section.failed_queries == 0
    assert section.median_relative_error == 0.0 and section.p95_relative_error == 0.0
    assert section.group_coverage == 1.0 and section.rank_correlation == pytest.approx(1.0)
    assert section.worst == []
    assert sum(b.count for b in section.error_histogram) == section.cells


def test_scaled_amounts_give_exact_errors(tmp_path: Path) -> None:
    con = catalogs(tmp_path, warehouse(), warehouse(scale=1.1))
    section = utility_section(con, POLICY, seed=0)
    orders = [q for q in section.queries if q.table == "orders"]
    accounts = [q for q in section.queries if q.table == "accounts"]
    assert orders and accounts and section.failed_queries == 0
    # orders, per group: count, then sum/avg/median of amount (+10%) and of qty (unchanged)
    for q in orders:
        assert q.measures == 7 and q.cells == 7 * q.groups_matched
        assert q.max_error == pytest.approx(0.1, rel=1e-9)
        assert q.median_error == 0.0 and q.rank_correlation in (None, pytest.approx(1.0))
    # accounts' only numeric column is generalized: count only, unchanged
    for q in accounts:
        assert q.measures == 1 and q.max_error == 0.0
    assert section.cells == sum(q.cells for q in section.queries)
    # 3 of 7 cells per orders group are off by 10% (fewer than half of all cells, more than
    # 5%): median 0, p95 0.1
    assert section.median_relative_error == pytest.approx(0.0, abs=1e-12)
    assert section.p95_relative_error == pytest.approx(0.1, rel=1e-9)
    assert section.group_coverage == 1.0
    assert sorted(section.worst) == sorted(q.id for q in orders)[:10]


def test_lost_group_lowers_coverage(tmp_path: Path) -> None:
    con = catalogs(tmp_path, warehouse(), warehouse(rename_south=True))
    section = utility_section(con, POLICY, seed=0)
    by_region = [q for q in section.queries if q.sql.startswith("SELECT region AS g")]
    assert by_region
    for q in by_region:
        assert q.groups_src == 3 and q.groups_matched == 2
        assert q.coverage == pytest.approx(2 / 3)
    expected = sum(q.groups_matched for q in section.queries) / sum(
        q.groups_src for q in section.queries
    )
    assert section.group_coverage == pytest.approx(expected)
    assert section.group_coverage is not None and section.group_coverage < 1.0


def test_query_failing_on_release_is_recorded(tmp_path: Path) -> None:
    rel = warehouse()
    rel.append("ALTER TABLE raw.orders DROP COLUMN qty")
    rel.append("ALTER TABLE raw.orders ADD COLUMN qty VARCHAR")
    con = catalogs(tmp_path, warehouse(), rel)
    section = utility_section(con, POLICY, seed=0)
    failed = [q for q in section.queries if q.error is not None]
    assert failed and all(q.table == "orders" for q in failed)
    assert all(q.coverage == 0.0 and q.error and "release" in q.error for q in failed)
    assert section.failed_queries == len(failed)
    assert section.worst[0] in {q.id for q in failed}
    assert section.group_coverage is not None and section.group_coverage < 1.0


def test_caps_are_round_robin_over_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stmts = warehouse()
    con = catalogs(tmp_path, stmts, stmts)
    monkeypatch.setattr(utility, "MAX_QUERIES", 3)
    workload = build_workload(con, POLICY, seed=0)
    assert len(workload) == 3
    assert {q.table for q in workload} == {"accounts", "orders"}
    assert [q.id for q in workload] == ["accounts#0", "accounts#1", "orders#0"]

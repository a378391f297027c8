"""Which relations a candidate's compiled SQL reads, parsed without binding it: the condition
for taking a node's CS from its CFS (:mod:`benchforge.evaluation.de.cs_from_cfs`)."""

from __future__ import annotations

import pytest

from benchforge.evaluation.de.cs_from_cfs import relations_read


def test_qualified_relations_and_ctes() -> None:
    sql = """
        with a as (select * from "db"."Staging"."stg_x"),
        b as (select * from a join "db"."main"."y" using (id))
        select * from b where id in (select id from "db"."main"."z")
    """
    assert relations_read(sql) == {
        ("db", "staging", "stg_x"),
        ("db", "main", "y"),
        ("db", "main", "z"),
    }
    assert relations_read("select 1 as one") == set()
    months = "select * from range(3) as r(i), generate_series(1, 2) as g(n)"
    assert relations_read(months) == set()  # row generators read nothing


@pytest.mark.parametrize(
    "sql",
    [
        "select * from stg_x",  # not a CTE, not qualified: resolved who knows where
        'select * from "main"."stg_x"',  # no database
        "select * from read_csv('/gold/answers.csv')",  # a table function
        "select * from 'gold.parquet'",  # a file named as a table
        'select * from "db"."main"."x"; select 2',  # two statements
        'create table t as select * from "db"."main"."x"',  # not a SELECT
        "def model(dbt, session):\n    return dbt.ref('x')",  # a Python model
        "select * from (select * from query_table('x'))",  # a table function, nested
        "select * from main.range(3)",  # a qualified name: not surely the built-in
    ],
)
def test_anything_else_is_not_derivable(sql: str) -> None:
    assert relations_read(sql) is None

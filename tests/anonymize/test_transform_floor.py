"""Frequency floor: a categorical value (a job title) shared by fewer than min_count rows, counted
within each combination of the ``within`` columns, is released as its family (the head noun of a
title, or an explicit mapping), or as ``other`` when its family is rare too; every released class
other than ``other`` holds at least min_count rows."""

from __future__ import annotations

from collections import Counter

import duckdb
import pytest

from benchforge.anonymize.policy.models import FrequencyFloor
from benchforge.anonymize.transform.generalize import (
    build_frequency_floor,
    floor_column,
    head_noun_sql,
)
from benchforge.anonymize.transform.sql import SRC, TransformError

TITLES = (
    ["Sales manager"] * 12
    + ["Hotel manager", "Records manager", "Production manager", "Retail manager", "Stage manager"]
    + ["Engineer, communications", "Civil engineer, contracting", "Engineer, control"]
    + ["Curator", "Writer"]
    + [None] * 3
)


def _con(rows: list[tuple[str | None, str]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS src; CREATE SCHEMA src.raw; ATTACH ':memory:' AS work")
    con.execute("CREATE TABLE src.raw.people (title VARCHAR, country VARCHAR)")
    con.executemany("INSERT INTO src.raw.people VALUES (?, ?)", [list(r) for r in rows])
    return con


def _floor(con: duckdb.DuckDBPyConnection, rule: FrequencyFloor) -> list[str | None]:
    build_frequency_floor(con, "work.main.floor", "src.raw.people", "title", rule)
    sql = floor_column("title", rule, "work.main.floor", "f")
    return [
        r[0]
        for r in con.execute(
            f"SELECT {sql.expr} FROM (SELECT *, rowid AS rid FROM src.raw.people) {SRC} "
            f"{' '.join(sql.joins)} ORDER BY {SRC}.rid"
        ).fetchall()
    ]


def test_head_noun_of_job_titles() -> None:
    con = duckdb.connect()
    titles = {
        "Engineer, control and instrumentation": "Engineer",
        "Manufacturing systems engineer": "Engineer",
        "Research scientist (physical sciences)": "Scientist",
        "Land/geomatics surveyor": "Surveyor",
        "Curator": "Curator",
    }
    for title, noun in titles.items():
        assert con.execute(f"SELECT {head_noun_sql('?')}", [title]).fetchone() == (noun,)


def test_rare_titles_become_their_family_or_other() -> None:
    con = _con([(t, "FR") for t in TITLES])
    out = _floor(con, FrequencyFloor(min_count=3))
    assert out[:12] == ["Sales manager"] * 12  # common: kept
    assert out[12:17] == ["Manager"] * 5  # rare, family of 5 rare rows: the family
    assert out[17:20] == ["Engineer"] * 3
    assert out[20:22] == ["Other", "Other"]  # rare, and so is the family
    assert out[22:] == [None] * 3


def test_the_floor_counts_within_groups() -> None:
    rows = [(t, "FR") for t in TITLES] + [("Sales manager", "DE"), ("Curator", "DE")]
    con = _con(rows)
    out = _floor(con, FrequencyFloor(min_count=3, within=["country"]))
    released = list(zip(out, [c for _, c in rows], strict=True))
    assert released[-2:] == [("Other", "DE"), ("Other", "DE")]
    classes = Counter(r for r in released if r[0] not in (None, "Other"))
    assert min(classes.values()) >= 3


def test_explicit_families_win_over_the_head_noun() -> None:
    con = _con([(t, "FR") for t in TITLES])
    families = {"Curator": "Arts", "Writer": "Arts", "Hotel manager": "Hospitality"}
    out = _floor(con, FrequencyFloor(min_count=2, family="none", families=families))
    assert out[20:22] == ["Arts", "Arts"]
    assert out[12] == "Other"  # 'Hospitality' holds one row
    assert out[13] == "Other"  # no family: straight to other


def test_floor_refuses_a_non_text_column() -> None:
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS work")
    with pytest.raises(TransformError):
        floor_column("n", FrequencyFloor(min_count=3), "work.main.floor", "f", type_="INTEGER")

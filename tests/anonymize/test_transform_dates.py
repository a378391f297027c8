"""Date shifting: one keyed, non-zero offset per entity (the documented HMAC index), intervals
inside an entity and weekdays kept, the same entity shifted alike in every table."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac

import duckdb
import pytest

from benchforge.anonymize.policy.models import ShiftDates
from benchforge.anonymize.transform.dates import build_offsets, shift_column
from benchforge.anonymize.transform.sql import KEY, SRC, TransformError, row_key_sql

SECRET_KEY = b"date-key"
SALT = "ab" * 16


def _con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS src; CREATE SCHEMA src.raw; ATTACH ':memory:' AS work")
    return con


def _shift(con: duckdb.DuckDBPyConnection, table: str, rule: ShiftDates, cols: dict[str, str]):
    build_offsets(con, f"work.main.off_{table}", f"src.raw.{table}", rule.entity, rule, SECRET_KEY)
    names = [r[0] for r in con.execute(f"DESCRIBE src.raw.{table}").fetchall()]
    exprs, joins = [], {}
    for column, type_ in cols.items():
        sql = shift_column(column, type_, rule, f"work.main.off_{table}", "o", SALT)
        exprs.append(sql.expr)
        joins.update(dict.fromkeys(sql.joins))
    source = (
        f"(SELECT *, rowid AS rid, {row_key_sql('t', [], names)} AS {KEY} "
        f"FROM src.raw.{table} t) {SRC}"
    )
    originals = ", ".join(f"{SRC}.{n}" for n in names)
    return con.execute(
        f"SELECT {originals}, {', '.join(exprs)} FROM {source} {' '.join(joins)} ORDER BY {SRC}.rid"
    ).fetchall()


def _expected_days(entity: str, rule: ShiftDates) -> int:
    h = hmac.new(SECRET_KEY, entity.upper().strip().encode(), hashlib.sha256).hexdigest()
    side, step = (rule.max_days // 7, 7) if rule.whole_weeks else (rule.max_days, 1)
    index = int(h[:15], 16) % (2 * side)
    return (index - side if index < side else index - side + 1) * step


def test_intervals_within_an_entity_and_weekdays_are_kept() -> None:
    con = _con()
    con.execute(
        "CREATE TABLE src.raw.deals AS SELECT 'ACC-' || (i % 40)::VARCHAR AS account, "
        "DATE '2023-01-01' + (i * 3)::INTEGER AS created, TIMESTAMP '2023-02-01 10:30:00' "
        "+ to_hours(i * 5) AS closed FROM range(400) r(i)"
    )
    rule = ShiftDates(entity="account", max_days=56)
    rows = _shift(con, "deals", rule, {"created": "DATE", "closed": "TIMESTAMP"})
    offsets: dict[str, int] = {}
    for account, created, closed, new_created, new_closed in rows:
        days = (new_created - created).days
        assert days != 0 and days % 7 == 0 and abs(days) <= 56
        assert new_closed - closed == dt.timedelta(days=days)  # same offset for both columns
        assert offsets.setdefault(account, days) == days  # same offset for the entity
        assert new_created.weekday() == created.weekday()
        assert days == _expected_days(account, rule)
    assert len(set(offsets.values())) > 3  # entities get different offsets


def test_day_offsets_cover_both_signs_without_zero() -> None:
    con = _con()
    con.execute(
        "CREATE TABLE src.raw.t AS SELECT 'E' || i::VARCHAR AS e, DATE '2020-06-15' AS d "
        "FROM range(500) r(i)"
    )
    rule = ShiftDates(entity="e", max_days=3, whole_weeks=False)
    days = {(new - old).days for _, old, new in _shift(con, "t", rule, {"d": "DATE"})}
    assert days == {-3, -2, -1, 1, 2, 3}


def test_the_same_entity_moves_alike_in_two_tables_and_drift_does_not_matter() -> None:
    con = _con()
    con.execute("CREATE TABLE src.raw.a AS SELECT 'ACC-7' AS acc, DATE '2021-03-03' AS d")
    con.execute("CREATE TABLE src.raw.b AS SELECT ' acc-7' AS acc, DATE '2022-09-09' AS d")
    rule = ShiftDates(entity="acc")
    ((_, a_old, a_new),) = _shift(con, "a", rule, {"d": "DATE"})
    ((_, b_old, b_new),) = _shift(con, "b", rule, {"d": "DATE"})
    assert (a_new - a_old) == (b_new - b_old) != dt.timedelta(0)


def test_null_entity_rows_get_a_row_keyed_offset() -> None:
    con = _con()
    con.execute(
        "CREATE TABLE src.raw.t AS SELECT NULL::VARCHAR AS e, DATE '2020-01-01' + i::INTEGER AS d "
        "FROM range(200) r(i)"
    )
    rows = _shift(con, "t", ShiftDates(entity="e", max_days=28), {"d": "DATE"})
    days = [(new - old).days for _, old, new in rows]
    assert all(d != 0 and d % 7 == 0 and abs(d) <= 28 for d in days)
    assert len(set(days)) == 8  # each row draws its own: all 8 non-zero week offsets appear


def test_non_temporal_column_and_no_whole_week_are_refused() -> None:
    with pytest.raises(TransformError, match="DATE or TIMESTAMP"):
        shift_column("x", "VARCHAR", ShiftDates(entity="e"), "w", "o", SALT)
    con = _con()
    con.execute("CREATE TABLE src.raw.t AS SELECT 'e' AS e")
    with pytest.raises(TransformError, match="no whole-week offset"):
        build_offsets(
            con, "work.main.o", "src.raw.t", "e", ShiftDates(entity="e", max_days=6), b"k"
        )


def test_coarsened_shift_truncates_and_keeps_order_within_an_entity() -> None:
    con = _con()
    con.execute(
        "CREATE TABLE src.raw.events AS SELECT 'CON-' || (i % 30)::VARCHAR AS contact, "
        "TIMESTAMP '2023-03-01 00:00:00' + to_minutes(i * 37) AS at FROM range(900) r(i)"
    )
    rule = ShiftDates(entity="contact", max_days=28, coarsen="hour")
    rows = _shift(con, "events", rule, {"at": "TIMESTAMP"})
    by_entity: dict[str, list[tuple[dt.datetime, dt.datetime]]] = {}
    for contact, at, new in rows:
        assert new.minute == 0 and new.second == 0
        days = _expected_days(contact, rule)
        assert new == (at + dt.timedelta(days=days)).replace(minute=0, second=0)
        by_entity.setdefault(contact, []).append((at, new))
    for pairs in by_entity.values():
        pairs.sort()
        news = [n for _, n in pairs]
        assert news == sorted(news)  # order kept (ties allowed)


def test_coarsen_alone_keeps_the_day_and_order() -> None:
    con = _con()
    con.execute(
        "CREATE TABLE src.raw.t AS SELECT 'E' || (i % 7)::VARCHAR AS e, "
        "TIMESTAMP '2024-01-01 00:00:00' + to_minutes(i * 91) AS at FROM range(500) r(i)"
    )
    rule = ShiftDates(entity="e", max_days=0, coarsen="day")
    rows = _shift(con, "t", rule, {"at": "TIMESTAMP"})
    assert all(new == dt.datetime(at.year, at.month, at.day) for _, at, new in rows)


def test_max_days_zero_needs_coarsen() -> None:
    with pytest.raises(ValueError, match="coarsen"):
        ShiftDates(entity="e", max_days=0)


@pytest.mark.parametrize(
    ("direction", "expected"),
    [("later", {7, 14, 21, 28}), ("earlier", {-28, -21, -14, -7})],
)
def test_one_sided_offsets_never_move_a_date_the_other_way(
    direction: str, expected: set[int]
) -> None:
    con = _con()
    con.execute(
        "CREATE TABLE src.raw.t AS SELECT CASE WHEN i % 5 = 0 THEN NULL ELSE 'E' || i::VARCHAR "
        "END AS e, DATE '2020-06-15' AS d FROM range(600) r(i)"
    )
    rule = ShiftDates(entity="e", max_days=28, direction=direction)  # type: ignore[arg-type]
    days = {(new - old).days for _, old, new in _shift(con, "t", rule, {"d": "DATE"})}
    assert days == expected  # entities and rows without one alike


def test_rows_stay_on_their_side_of_a_boundary_with_their_intervals() -> None:
    """A snapshot ends at 2025-01-01: an account's activities before it all move by the
    account's (earlier) offset, so the account's last one before the end moves by it too; an
    event scheduled after the end that the offset would bring before it moves later instead,
    its end with it."""
    con = _con()
    con.execute(
        "CREATE TABLE src.raw.ev AS SELECT 'ACC-' || (i % 30)::VARCHAR AS account, "
        "TIMESTAMP '2024-11-20 09:00:00' + to_hours(i * 7) AS start_at, "
        "TIMESTAMP '2024-11-20 10:30:00' + to_hours(i * 7) AS end_at FROM range(600) r(i)"
    )
    boundary = dt.datetime(2025, 1, 1)
    rule = ShiftDates(
        entity="account",
        max_days=28,
        direction="earlier",
        boundary=boundary,
        boundary_column="start_at",
    )
    rows = _shift(con, "ev", rule, {"start_at": "TIMESTAMP", "end_at": "TIMESTAMP"})
    flipped = 0
    last_before: dict[str, tuple[dt.datetime, dt.datetime]] = {}
    for account, start, end, new_start, new_end in rows:
        assert (start < boundary) == (new_start < boundary), (start, new_start)
        assert new_end - new_start == end - start
        days = (new_start - start).days
        if start < boundary:
            assert days == _expected_earlier_days(account, rule)
            old, _ = last_before.get(account, (dt.datetime.min, dt.datetime.min))
            if start > old:
                last_before[account] = (start, new_start)
        else:
            assert abs(days) == -_expected_earlier_days(account, rule)
            flipped += days > 0
    assert 20 < flipped < 300  # both cases occur
    for account, (old, new) in last_before.items():  # max() commutes with the offset
        assert (new - old).days == _expected_earlier_days(account, rule)


def _expected_earlier_days(entity: str, rule: ShiftDates) -> int:
    h = hmac.new(SECRET_KEY, entity.upper().strip().encode(), hashlib.sha256).hexdigest()
    side = rule.max_days // 7
    return (int(h[:15], 16) % side - side) * 7


def test_a_boundary_needs_its_column_and_a_shift() -> None:
    with pytest.raises(ValueError, match="go together"):
        ShiftDates(entity="e", boundary=dt.datetime(2025, 1, 1))
    with pytest.raises(ValueError, match="needs a shift"):
        ShiftDates(
            entity="e",
            max_days=0,
            coarsen="day",
            boundary=dt.datetime(2025, 1, 1),
            boundary_column="d",
        )

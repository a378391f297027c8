"""Fake replacements: the documented pool index, consistency across tables and runs, a different
secret giving a different mapping, NULLs kept, emails, and unique mode."""

from __future__ import annotations

import hashlib
import hmac

import duckdb
import pytest
from faker import Faker

from benchforge.anonymize.policy.models import Fake
from benchforge.anonymize.transform.fake import (
    FakeSpace,
    build_fake_space,
    fake_column,
    mapped_column,
    pool_entries,
    value_map_sql,
)
from benchforge.anonymize.transform.sql import SRC

KEY = b"fake-test-key"
SEED = 3


def _con(tables: dict[str, list[str | None]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS src; CREATE SCHEMA src.raw; ATTACH ':memory:' AS work")
    for table, values in tables.items():
        con.execute(f"CREATE TABLE src.raw.{table} (v VARCHAR)")
        con.executemany(f"INSERT INTO src.raw.{table} VALUES (?)", [[v] for v in values])
    return con


def _space(rule: Fake, tables: list[str]) -> FakeSpace:
    return FakeSpace(
        table="work.main.fk",
        pool_table="work.main.pool",
        rule=rule,
        members=[(t, "v") for t in tables],
    )


def _released(con: duckdb.DuckDBPyConnection, space: FakeSpace, table: str) -> list[str | None]:
    sql = fake_column(space, "v", "m")
    rows = con.execute(
        f"SELECT {sql.expr} FROM src.raw.{table} {SRC} {' '.join(sql.joins)} ORDER BY {SRC}.rowid"
    ).fetchall()
    return [r[0] for r in rows]


def _expected(canon: str, rule: Fake, key: bytes = KEY) -> str:
    """The documented mapping, computed in Python: pool entry HMAC mod pool size, the entry
    drawn by Faker seeded with seed * 2**32 + index."""
    h = hmac.new(key, canon.encode(), hashlib.sha256).hexdigest()
    index = int(h[:15], 16) % rule.pool_size
    faker = Faker(rule.locale, use_weighting=False)
    faker.seed_instance(SEED * 2**32 + index)
    return str(getattr(faker, rule.provider)())


def test_same_original_same_fake_in_two_tables_and_the_documented_index() -> None:
    rule = Fake(provider="last_name", pool_size=500)
    con = _con({"a": ["Walsh", "Hurst", None, "Webster"], "b": ["walsh ", "Svensson", "Hurst"]})
    space = _space(rule, ["a", "b"])
    stats = build_fake_space(con, space, KEY, SEED)
    assert stats.values == 4  # WALSH, HURST, WEBSTER, SVENSSON
    a = _released(con, space, "a")
    b = _released(con, space, "b")
    assert a[2] is None
    assert a[0] == b[0]  # 'Walsh' and 'walsh ' are one canonical value
    assert a[1] == b[2]
    assert a[0] == _expected("WALSH", rule)
    assert b[1] == _expected("SVENSSON", rule)


def test_value_map_releases_what_the_whole_space_join_releases() -> None:
    rule = Fake(provider="last_name", pool_size=500)
    b_values = ["walsh ", "Svensson", "Hurst", None, "", "  ", "WALSH", "Svensson"]
    con = _con({"a": ["Walsh", "Hurst", None, "Webster"], "b": b_values})
    space = _space(rule, ["a", "b"])
    build_fake_space(con, space, KEY, SEED)
    con.execute(f"CREATE TABLE work.main.vm AS {value_map_sql(space, 'b', [(3, 'v')])}")
    sql = mapped_column("v", "(SELECT v, out FROM work.main.vm WHERE __ci = 3)", "m")
    fast = [
        r[0]
        for r in con.execute(
            f"SELECT {sql.expr} FROM src.raw.b {SRC} {' '.join(sql.joins)} ORDER BY {SRC}.rowid"
        ).fetchall()
    ]
    assert fast == _released(con, space, "b")
    walsh = _expected("WALSH", rule)
    assert fast[0] == fast[6] == walsh and fast[3] is None and fast[1] == fast[7]


def test_two_runs_agree_and_another_secret_differs() -> None:
    rule = Fake(provider="company")
    names = [f"Company {i}" for i in range(200)]
    runs = []
    for key in (KEY, KEY, b"another secret"):
        con = _con({"t": names})
        space = _space(rule, ["t"])
        build_fake_space(con, space, key, SEED)
        runs.append(_released(con, space, "t"))
    assert runs[0] == runs[1]
    assert sum(x != y for x, y in zip(runs[0], runs[2], strict=True)) > 190


def test_pool_entries_do_not_depend_on_which_entries_are_drawn() -> None:
    together = pool_entries("city", "de_DE", 11, [5, 900, 17])
    alone = pool_entries("city", "de_DE", 11, [17])
    assert alone == [together[2]]
    fresh = Faker("de_DE", use_weighting=False)
    fresh.seed_instance(11 * 2**32 + 900)
    assert together[1] == fresh.city()


def test_email_local_part_gets_a_keyed_token() -> None:
    rule = Fake(provider="email", pool_size=10)  # tiny pool: many originals share an entry
    originals = [f"person.{i}@example.com" for i in range(60)]
    con = _con({"t": originals})
    space = _space(rule, ["t"])
    build_fake_space(con, space, KEY, SEED)
    out = _released(con, space, "t")
    for original, fake in zip(originals, out, strict=True):
        assert fake is not None
        local, domain = fake.split("@")
        h = hmac.new(KEY, original.upper().encode(), hashlib.sha256).hexdigest()
        assert local.endswith("." + h[15:21])
        assert domain.startswith("example.")
    assert len(set(out)) == len(out)  # the token keeps 60 originals on a 10-entry pool apart


def test_unique_appends_suffixes_only_where_originals_share_an_entry() -> None:
    rule = Fake(provider="first_name", pool_size=10, unique=True)
    originals = [f"N{i}" for i in range(40)]
    con = _con({"t": originals})
    space = _space(rule, ["t"])
    stats = build_fake_space(con, space, KEY, SEED)
    out = _released(con, space, "t")
    assert len(set(out)) == 40
    assert stats.collisions == 0
    plain = {o: _expected(o, rule) for o in originals}
    # the first of each group (smallest canonical) keeps the plain pool value
    by_value: dict[str, list[str]] = {}
    for o in originals:
        by_value.setdefault(plain[o], []).append(o)
    firsts = {min(group) for group in by_value.values()}
    assert stats.resolved == 40 - len(firsts)
    for o, f in zip(originals, out, strict=True):
        if o in firsts:
            assert f == plain[o]
        else:
            assert f.startswith(plain[o] + "-") and len(f) == len(plain[o]) + 5


def test_without_unique_shared_entries_are_kept() -> None:
    rule = Fake(provider="first_name", pool_size=10)
    con = _con({"t": [f"N{i}" for i in range(40)]})
    space = _space(rule, ["t"])
    stats = build_fake_space(con, space, KEY, SEED)
    assert stats.resolved == 0 and stats.collisions == 0
    assert len(set(_released(con, space, "t"))) <= 10


def test_empty_string_stays_empty() -> None:
    con = _con({"t": ["", "  ", "x"]})
    space = _space(Fake(provider="city"), ["t"])
    build_fake_space(con, space, KEY, SEED)
    out = _released(con, space, "t")
    assert out[0] == "" and out[1] == ""
    assert out[2] not in ("", "x")


@pytest.mark.parametrize("provider", ["iban", "ipv4", "phone_number", "url", "catch_phrase"])
def test_providers_produce_text(provider: str) -> None:
    con = _con({"t": ["a", "b"]})
    space = _space(Fake(provider=provider, locale="de_DE"), ["t"])  # type: ignore[arg-type]
    build_fake_space(con, space, KEY, SEED)
    assert all(isinstance(v, str) and v for v in _released(con, space, "t"))


def test_a_replacement_equal_to_an_original_identifier_is_drawn_again() -> None:
    rule = Fake(provider="last_name", pool_size=300)
    originals = [f"Person {i}" for i in range(40)]
    con = _con({"t": originals})
    first = {o: _expected(o.upper(), rule) for o in originals}
    # pretend two of the chosen replacements are original identifiers somewhere else
    clashing = sorted(set(first.values()))[:2]
    con.execute(
        "CREATE TABLE work.main.avoid AS SELECT lower(v) AS lv FROM (VALUES (?), (?)) t(v)",
        clashing,
    )
    space = _space(rule, ["t"])
    stats = build_fake_space(con, space, KEY, SEED, avoid="work.main.avoid")
    out = dict(zip(originals, _released(con, space, "t"), strict=True))
    redrawn = [o for o in originals if first[o] in clashing]
    assert redrawn and stats.resolved == len(redrawn)
    for o in originals:
        if o in redrawn:
            h = hmac.new(KEY, f"{o.upper()}\x1e1".encode(), hashlib.sha256).hexdigest()
            faker = Faker("en_US", use_weighting=False)
            faker.seed_instance(SEED * 2**32 + int(h[:15], 16) % rule.pool_size)
            assert out[o] == faker.last_name()  # the second draw (no second clash here)
            assert out[o] not in clashing
        else:
            assert out[o] == first[o]

"""Pseudonym key spaces: the SQL pseudonyms equal an independent Python computation of the
documented format, collisions and clashes with originals are resolved (and counted exactly),
dense integer keys are permuted, and the released column re-applies the original's surface."""

from __future__ import annotations

import hashlib
import hmac
import math
import re

import duckdb
import pytest

from benchforge.anonymize.policy.models import Pseudonymize
from benchforge.anonymize.transform.pseudonym import (
    ENUMERATED,
    KeySpace,
    build_key_space,
    mapped_column,
    pseudonym_column,
    resolved_in_column,
    resolved_in_map,
    value_map_sql,
)
from benchforge.anonymize.transform.sql import SRC, TransformError

KEY = b"pseudonym-test-key"


def _h(message: str) -> str:
    return hmac.new(KEY, message.encode(), hashlib.sha256).hexdigest()


def reference(canon: str, attempt: int = 0, keep_prefix: str | int = "auto") -> str:
    """The documented preserve format, computed in plain Python."""
    message = canon if attempt == 0 else f"{canon}\x1e{attempt}"
    h = _h(message)
    if keep_prefix == "auto":
        m = re.match(r"[A-Za-z]+[-_]", canon)
        plen = len(m.group()) if m else 0
    else:
        plen = min(int(keep_prefix), len(canon))
    prefix, rest = canon[:plen], canon[plen:]
    a, b = int(h[:15], 16), int(h[15:30], 16)
    if re.fullmatch(r"[0-9]{1,15}", rest):
        return prefix + str(a % 10 ** len(rest)).zfill(len(rest))
    if re.fullmatch(r"[0-9]{16,30}", rest):
        head = str(a % 10 ** (len(rest) - 15)).zfill(len(rest) - 15)
        return prefix + head + str(b % 10**15).zfill(15)
    stream = h + "".join(_h(f"{message}\x1f{b}") for b in range(1, math.ceil(len(rest) / 32)))
    out = []
    for i, c in enumerate(rest):
        byte = int(stream[2 * i : 2 * i + 2], 16)
        if "0" <= c <= "9":
            out.append(chr(48 + byte % 10))
        elif "a" <= c <= "z":
            out.append(chr(97 + byte % 26))
        elif "A" <= c <= "Z" or ord(c) >= 128:
            out.append(chr(65 + byte % 26))
        else:
            out.append(c)
    return prefix + "".join(out)


def _con(values: dict[str, list]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS src; CREATE SCHEMA src.raw; ATTACH ':memory:' AS work")
    for table, column_values in values.items():
        con.execute(f"CREATE TABLE src.raw.{table} (v {_type(column_values)})")
        con.executemany(f"INSERT INTO src.raw.{table} VALUES (?)", [[v] for v in column_values])
    return con


def _type(values: list) -> str:
    return "BIGINT" if any(isinstance(v, int) for v in values) else "VARCHAR"


def _space(members: list[str], rule: Pseudonymize | None = None, integer: bool = False) -> KeySpace:
    return KeySpace(
        table="work.main.ps",
        rule=rule or Pseudonymize(),
        integer=integer,
        int_max=2**63 - 1,
        members=[(m, "v") for m in members],
    )


def _mapping(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT canon, pseudo FROM work.main.ps").fetchall())


def test_sql_pseudonyms_equal_the_python_reference() -> None:
    values = [
        "ACC-00000124",
        "INV_77",
        "914400004D9C1F7C53",  # mixed digits and letters, no prefix
        "Abc-def",  # lower-case letters survive case-sensitive spaces only
        "X" + "7f" * 20,  # 41 characters: two HMAC blocks
        "CÉDÉX-12",
        "N-" + "1234567890" * 2,  # 20 digits: two 60-bit halves
    ]
    con = _con({"t": values})
    space = _space(["t"], Pseudonymize(case_insensitive=False))
    build_key_space(con, space, KEY)
    got = dict(con.execute("SELECT canon, pseudo FROM work.main.ps WHERE attempt = 0").fetchall())
    assert len(got) == len(values)  # no collision in this sparse set
    for v in values:
        assert got[v] == reference(v), v
    assert got["ACC-00000124"].startswith("ACC-") and len(got["ACC-00000124"]) == 12
    assert re.fullmatch(r"Abc-[a-z]{3}", got["Abc-def"])  # prefix kept, lower case stays lower
    assert got["CÉDÉX-12"][5] == "-"  # punctuation kept, non-ASCII letters replaced
    assert got["CÉDÉX-12"].isascii()


def test_keep_prefix_number_and_hex_format() -> None:
    con = _con({"t": ["AB123456", "ab123456 "]})
    build_key_space(con, _space(["t"], Pseudonymize(keep_prefix=2)), KEY)
    mapping = _mapping(con)
    assert mapping == {"AB123456": reference("AB123456", keep_prefix=2)}
    con.execute("DROP TABLE work.main.ps")
    build_key_space(con, _space(["t"], Pseudonymize(format="hex", length=20)), KEY)
    hexed = _mapping(con)["AB123456"]
    assert hexed == _h("AB123456")[:20].upper()


def test_forced_collisions_are_resolved_and_counted_exactly() -> None:
    # 40 codes of shape K-99 (100 codes): sparse enough for drawing, crowded enough to collide
    values = [f"K-{i:02d}" for i in range(40)]
    con = _con({"t": values})
    stats = build_key_space(con, _space(["t"]), KEY)
    first = {v: reference(v) for v in values}
    # round 0: a value keeps its candidate when it is no original and it is the smallest
    # canonical wanting it; every other value is resolved
    kept = {
        v
        for v in values
        if first[v] not in first and v == min(w for w in values if first[w] == first[v])
    }
    expected = len(values) - len(kept)
    assert expected > 5  # the case does force collisions
    assert stats.resolved == expected
    assert stats.collisions == 0
    mapping = _mapping(con)
    assert len(set(mapping.values())) == len(values)
    assert not set(mapping.values()) & set(values)  # no pseudonym equals an original
    assert all(re.fullmatch(r"K-[0-9]{2}", p) for p in mapping.values())
    for v in kept:
        assert mapping[v] == first[v]
    assert resolved_in_column(con, _space(["t"]), "t", "v") == expected


def test_resolved_counts_of_each_column_from_its_value_map() -> None:
    # two members sharing the crowded K-99 shape: a referencing column holding every fifth
    # key (some twice, lower-cased, padded: one canonical, several originals) and one
    # holding none of them
    values = [f"K-{i:02d}" for i in range(40)]
    refs = [f" {v.lower()}" if i % 2 else v for i, v in enumerate(values[::5] * 2)]
    con = _con({"t": values, "u": refs, "w": ["Z-1"]})
    space = _space(["t", "u", "w"])
    build_key_space(con, space, KEY)
    per_column = {}
    for i, (table, column) in enumerate(space.members):
        map_table = f"work.main.map_{table}"
        con.execute(f"CREATE TABLE {map_table} AS {value_map_sql(space, table, [(i, column)])}")
        per_column[(table, column)] = resolved_in_map(con, map_table).get(i, 0)
    assert per_column == {m: resolved_in_column(con, space, *m) for m in space.members}
    resolved = set(
        r[0] for r in con.execute("SELECT canon FROM work.main.ps WHERE attempt > 0").fetchall()
    )
    assert per_column[("t", "v")] == len(resolved & set(values)) > 5
    assert per_column[("u", "v")] == len(resolved & set(values[::5]))
    assert per_column[("w", "v")] == 0


def test_no_collision_on_100k_six_digit_keys() -> None:
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS src; CREATE SCHEMA src.raw; ATTACH ':memory:' AS work")
    con.execute(
        "CREATE TABLE src.raw.t AS SELECT 'C-' || lpad((i * 7 + 3)::VARCHAR, 6, '0') AS v "
        "FROM range(100000) r(i)"
    )
    stats = build_key_space(con, _space(["t"]), KEY)
    assert stats.values == 100_000
    assert stats.collisions == 0
    assert stats.resolved > 0  # 10% of codes are originals: some draws were redone
    row = con.execute(
        "SELECT count(DISTINCT pseudo), count(*) FILTER (WHERE NOT regexp_full_match(pseudo, "
        "'C-[0-9]{6}')), count(*) FILTER (WHERE pseudo IN (SELECT canon FROM work.main.ps)) "
        "FROM work.main.ps"
    ).fetchone()
    assert row == (100_000, 0, 0)


def test_dense_integer_keys_are_a_keyed_permutation_of_same_digit_counts() -> None:
    values = list(range(1000))  # every code of 1, 2 and 3 digits
    con = _con({"t": values})
    stats = build_key_space(con, _space(["t"], integer=True), KEY)
    mapping = _mapping(con)
    assert stats.collisions == 0
    assert sorted(int(p) for p in mapping.values()) == values  # every code used once
    assert all(len(p) == len(c) for c, p in mapping.items())
    assert not any(len(p) > 1 and p.startswith("0") for p in mapping.values())
    assert sum(c != p for c, p in mapping.items()) > 900
    assert stats.resolved == 0  # a permuted dense shape is no collision
    assert not con.execute(
        f"SELECT count(*) FROM work.main.ps WHERE attempt = {ENUMERATED}"
    ).fetchone()[0]


def test_sparse_integer_keys_keep_sign_and_digit_count() -> None:
    values = [1_000_003 * i + 17 for i in range(1, 200)] + [-123456, 1234567890123456789]
    con = _con({"t": values})
    build_key_space(con, _space(["t"], integer=True), KEY)
    mapping = _mapping(con)
    for c, p in mapping.items():
        assert len(p.lstrip("-")) == len(c.lstrip("-"))
        assert p.startswith("-") == c.startswith("-")
        assert not p.lstrip("-").startswith("0")
    h = _h("-123456")
    assert mapping["-123456"] == f"-{100000 + int(h[:15], 16) % 900000}"
    # 19 digits: the 120-bit path, within BIGINT
    h = _h("1234567890123456789")
    big = int(h[:15], 16) * 2**60 + int(h[15:30], 16)
    lo, hi = 10**18, 2**63 - 1
    assert mapping["1234567890123456789"] == str(lo + big % (hi - lo + 1))


def test_a_foreign_key_and_its_primary_key_map_identically_and_drift_survives() -> None:
    con = _con(
        {
            "accounts": ["ACC-001", "ACC-002", "ACC-003"],
            "contacts": ["ACC-001", "acc-002", " ACC-003  ", None, "acc-001"],
        }
    )
    space = _space(["accounts", "contacts"])
    build_key_space(con, space, KEY)
    assert con.execute("SELECT count(*) FROM work.main.ps").fetchone() == (3,)
    released = {}
    for table in ("accounts", "contacts"):
        sql = pseudonym_column(space, "v", "VARCHAR", "m")
        released[table] = [
            r[0]
            for r in con.execute(
                f"SELECT {sql.expr} FROM src.raw.{table} {SRC} {' '.join(sql.joins)} "
                f"ORDER BY {SRC}.rowid"
            ).fetchall()
        ]
    a1, a2, a3 = released["accounts"]
    c1, c2, c3, c4, c5 = released["contacts"]
    assert c1 == a1
    assert c2 == a2.lower() and c2.upper() == a2  # lower-case drift kept
    assert c3 == f" {a3}  "  # padding kept
    assert c4 is None
    assert c5.upper().strip() == a1
    assert a1 != "ACC-001" and a1.startswith("ACC-")


def _released_both_ways(
    con: duckdb.DuckDBPyConnection, space: KeySpace, table: str, type_: str
) -> tuple[list, list]:
    """A member column released through the whole space (the reference) and through the
    table's value map (the pass's path), in row order."""
    reference_sql = pseudonym_column(space, "v", type_, "m")
    con.execute(
        f"CREATE OR REPLACE TABLE work.main.vm AS {value_map_sql(space, table, [(0, 'v')])}"
    )
    fast_sql = mapped_column(space, "v", type_, "(SELECT v, out FROM work.main.vm)", "m")
    out = []
    for sql in (reference_sql, fast_sql):
        out.append(
            [
                r[0]
                for r in con.execute(
                    f"SELECT {sql.expr} FROM src.raw.{table} {SRC} {' '.join(sql.joins)} "
                    f"ORDER BY {SRC}.rowid"
                ).fetchall()
            ]
        )
    return out[0], out[1]


def test_value_map_releases_what_the_whole_space_join_releases() -> None:
    drift = ["ACC-001", "acc-002", " ACC-003  ", None, "acc-001", "Acc-001", "", "  ", "ACC-001"]
    con = _con({"accounts": ["ACC-001", "ACC-002", "ACC-003"], "contacts": drift})
    space = _space(["accounts", "contacts"])
    build_key_space(con, space, KEY)
    reference_rows, fast_rows = _released_both_ways(con, space, "contacts", "VARCHAR")
    assert fast_rows == reference_rows
    a1 = reference("ACC-001")
    assert fast_rows[:5] == [
        a1,
        reference("ACC-002").lower(),
        f" {reference('ACC-003')}  ",
        None,
        a1.lower(),
    ]
    assert fast_rows[6] == "" and fast_rows[8] == a1  # an empty key maps to itself

    ints = _con({"t": [1_000_003 * i + 17 for i in range(1, 50)] + [None, -123456, 17]})
    int_space = _space(["t"], integer=True)
    build_key_space(ints, int_space, KEY)
    reference_ints, fast_ints = _released_both_ways(ints, int_space, "t", "BIGINT")
    assert fast_ints == reference_ints
    assert fast_ints[49] is None and fast_ints[50] == -(
        100000 + int(_h("-123456")[:15], 16) % 900000
    )


def test_different_secret_gives_different_pseudonyms() -> None:
    con = _con({"t": [f"ID-{i:06d}" for i in range(50)]})
    build_key_space(con, _space(["t"]), KEY)
    first = _mapping(con)
    con.execute("DROP TABLE work.main.ps")
    build_key_space(con, _space(["t"]), b"another key")
    second = _mapping(con)
    assert sum(first[k] != second[k] for k in first) >= 48


def test_fixed_points_map_to_themselves() -> None:
    con = _con({"t": ["", "---", "ACC-"]})
    stats = build_key_space(con, _space(["t"]), KEY)
    assert _mapping(con) == {"": "", "---": "---", "ACC-": "ACC-"}
    assert stats.resolved == 0


def test_unresolvable_space_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    import benchforge.anonymize.transform.pseudonym as module

    # without enumeration, a full one-digit space cannot be resolved by drawing alone
    monkeypatch.setattr(module, "ENUMERATE_LIMIT", 0)
    monkeypatch.setattr(module, "MAX_ATTEMPTS", 3)
    con = _con({"t": [f"K-{i}" for i in range(10)]})
    with pytest.raises(TransformError, match="use format: hex"):
        build_key_space(con, _space(["t"]), KEY)


def test_pseudonyms_avoid_original_identifiers_of_other_columns() -> None:
    values = [f"ACC-{i:04d}" for i in range(30)]
    con = _con({"t": values})
    taken = [reference(values[3]), reference(values[7])]  # as if other tables held these codes
    con.execute(
        "CREATE TABLE work.main.avoid AS SELECT lower(v) AS lv FROM (VALUES (?), (?)) t(v)", taken
    )
    build_key_space(con, _space(["t"]), KEY, avoid="work.main.avoid")
    mapping = _mapping(con)
    # drawn again once (the second draw is free in this sparse space)
    assert mapping[values[3]] == reference(values[3], attempt=1) not in taken
    assert mapping[values[7]] == reference(values[7], attempt=1) not in taken
    assert len(set(mapping.values())) == 30
    assert all(mapping[v] == reference(v) for v in values if v not in (values[3], values[7]))


def test_values_still_drawing_after_the_probes_get_free_codes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # step 3: after PROBE_ATTEMPTS draws the pending values of a small shape get its free codes
    # (the rounds run on a copy of the pending rows, written back before enumerating)
    import benchforge.anonymize.transform.pseudonym as module

    monkeypatch.setattr(module, "PROBE_ATTEMPTS", 1)
    values = [f"K-{i:02d}" for i in range(40)]
    con = _con({"t": values})
    stats = build_key_space(con, _space(["t"]), KEY)
    mapping = _mapping(con)
    enumerated = con.execute(
        f"SELECT count(*) FROM work.main.ps WHERE attempt = {ENUMERATED}"
    ).fetchone()
    assert enumerated is not None and enumerated[0] > 0
    assert stats.collisions == 0
    assert len(set(mapping.values())) == len(values)
    assert not set(mapping.values()) & set(values)
    assert all(re.fullmatch(r"K-[0-9]{2}", p) for p in mapping.values())
    assert not con.execute("SELECT count(*) FROM work.main.ps WHERE NOT done").fetchone()[0]


def _reference_draws(values: list[str], avoid: set[str]) -> dict[str, str]:
    """Steps 1-2 of the documented resolution in plain Python, round by round: each pending
    value draws its candidate of the round; the smallest value wanting a candidate keeps it
    when no settled value has it, it is no original and its lower case is not avoided."""
    originals, taken = set(values), set()
    mapping: dict[str, str] = {}
    pending, attempt = sorted(values), 0
    while pending:
        wanting: dict[str, list[str]] = {}
        for v in pending:
            wanting.setdefault(reference(v, attempt), []).append(v)
        for candidate, wanted_by in wanting.items():
            if candidate in taken or candidate in originals or candidate.lower() in avoid:
                continue
            mapping[min(wanted_by)] = candidate
            taken.add(candidate)
        pending, attempt = [v for v in pending if v not in mapping], attempt + 1
    return mapping


def test_every_draw_equals_the_python_reference_rounds() -> None:
    # 300 keys in the 1,000 codes of K-999: round 0 collides, hits originals and avoided
    # identifiers (checked exactly behind the 64-bit prefilter), and later rounds do too
    values = [f"K-{i * 3 + 1:03d}" for i in range(300)]
    firsts = sorted({reference(v) for v in values} - set(values))
    avoid = {c.lower() for c in firsts[::7]} | {reference(values[5], 1).lower(), "k-x1"}
    con = _con({"t": values})
    con.execute("CREATE TABLE work.main.avoid (lv VARCHAR)")
    con.executemany("INSERT INTO work.main.avoid VALUES (?)", [[a] for a in sorted(avoid)])
    stats = build_key_space(con, _space(["t"]), KEY, avoid="work.main.avoid")
    expected = _reference_draws(values, avoid)
    first = {v: reference(v) for v in values}
    assert sum(expected[v] != first[v] for v in values) > 60  # the case forces many redraws
    assert _mapping(con) == expected
    assert stats.resolved == sum(expected[v] != first[v] for v in values)
    assert stats.collisions == 0

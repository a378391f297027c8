"""The SQL building blocks: HMAC-SHA256 in DuckDB equals Python's hmac, keyed deviates are
uniform / normal and independent across streams and salts, row keys are canonical."""

from __future__ import annotations

import hashlib
import hmac
import math

import duckdb
import pytest

from benchforge.anonymize.transform.sql import (
    bind,
    derive_key,
    hmac_hex,
    hmac_sql,
    normal_sql,
    row_key_sql,
    uniform_sql,
)

MESSAGES = ["ACC-00000124", "", "acc-00000124 ", "Zoë Müller", "田中銀行", "x" * 200, "a'b"]


@pytest.mark.parametrize(
    "key",
    [b"k", b"secret-key" * 3, bytes(range(64)), b"\xff" * 65, b"long" * 40],
    ids=["short", "30B", "64B", "65B", "160B"],
)
def test_hmac_sql_equals_python_hmac(key: bytes) -> None:
    con = duckdb.connect()
    con.execute("CREATE TABLE m (v VARCHAR)")
    con.executemany("INSERT INTO m VALUES (?)", [[m] for m in MESSAGES])
    got = dict(con.execute(f"SELECT v, {hmac_sql(key, 'v')} FROM m").fetchall())
    for message in MESSAGES:
        expected = hmac.new(key, message.encode(), hashlib.sha256).hexdigest()
        assert got[message] == expected
        assert hmac_hex(key, message) == expected
    assert con.execute(f"SELECT {hmac_sql(key, 'NULL::VARCHAR')}").fetchone() == (None,)


def test_hmac_sql_depends_on_the_key() -> None:
    con = duckdb.connect()
    literal = "'v'"
    a = con.execute(f"SELECT {hmac_sql(b'one', literal)}").fetchone()
    b = con.execute(f"SELECT {hmac_sql(b'two', literal)}").fetchone()
    assert a != b


def test_derive_key_separates_purposes() -> None:
    assert derive_key(b"s", "pseudonymize") != derive_key(b"s", "fake")
    assert derive_key(b"s", "fake") == hmac.new(b"s", b"fake", hashlib.sha256).digest()


def _draws(sql: str, n: int = 20_000) -> list[float]:
    con = duckdb.connect()
    rows = con.execute(
        f"SELECT {sql} FROM (SELECT 'ACC-' || lpad(i::VARCHAR, 8, '0') AS k FROM range({n}) t(i))"
    ).fetchall()
    return [float(r[0]) for r in rows]


def _ks_uniform(values: list[float]) -> float:
    xs = sorted(values)
    n = len(xs)
    return max(max((i + 1) / n - x, x - i / n) for i, x in enumerate(xs))


def _corr(a: list[float], b: list[float]) -> float:
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True))
    va = sum((x - ma) ** 2 for x in a)
    vb = sum((y - mb) ** 2 for y in b)
    return cov / math.sqrt(va * vb)


def test_uniform_is_uniform_in_open_interval_and_streams_independent() -> None:
    u = _draws(uniform_sql("salt-a", "k"))
    assert all(0.0 < x < 1.0 for x in u)
    # KS critical value at alpha 0.001 for n = 20k is 1.95 / sqrt(n) ~ 0.0138
    assert _ks_uniform(u) < 0.0138
    other_salt = _draws(uniform_sql("salt-b", "k"))
    other_stream = _draws(uniform_sql("salt-a", "k", stream="v"))
    assert abs(_corr(u, other_salt)) < 0.03
    assert abs(_corr(u, other_stream)) < 0.03
    # deterministic: the same salt and key give the same draw
    assert u == _draws(uniform_sql("salt-a", "k"))


def test_separate_hash_arguments_would_correlate_salts() -> None:
    """Why the salt is concatenated into the hashed text: DuckDB's multi-argument hash combines
    argument hashes so two salts' draws are strongly related (this guards the design note)."""
    con = duckdb.connect()
    distinct = con.execute(
        "SELECT count(DISTINCT xor(hash('s1', i::VARCHAR), hash('s2', i::VARCHAR))) "
        "FROM range(1000) t(i)"
    ).fetchone()
    assert distinct == (1,)


def test_normal_has_unit_variance() -> None:
    z = _draws(normal_sql("salt", "k"))
    mean = sum(z) / len(z)
    sd = math.sqrt(sum((x - mean) ** 2 for x in z) / (len(z) - 1))
    assert abs(mean) < 0.03
    assert abs(sd - 1.0) < 0.03
    share_beyond_2 = sum(abs(x) > 1.959964 for x in z) / len(z)
    assert abs(share_beyond_2 - 0.05) < 0.008


def test_row_key_canonical_primary_key_and_row_hash() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT * FROM (VALUES ('ACC-1', 1), ('acc-1 ', 1), (NULL, 2), "
        "(NULL, 2), (NULL, 3)) v(id, n)"
    )
    keyed = con.execute(
        f"SELECT {row_key_sql('t', ['id'], ['id', 'n'])} FROM t ORDER BY rowid"
    ).fetchall()
    assert keyed[0] == keyed[1] == ("k" + "ACC-1",)
    # a NULL key falls back to the row hash: equal rows share it, different rows do not
    assert keyed[2] == keyed[3] != keyed[4]
    assert keyed[2][0].startswith("r")
    whole = con.execute(f"SELECT {row_key_sql('t', [], ['id', 'n'])} FROM t ORDER BY rowid")
    rows = whole.fetchall()
    assert rows[0] != rows[1]  # raw values differ ('ACC-1' vs 'acc-1 ')
    assert rows[2] == rows[3]


def test_bind_evaluates_once_and_keeps_nulls() -> None:
    con = duckdb.connect()
    assert con.execute(f"SELECT {bind('21', '__v', '__v * 2')}").fetchone() == (42,)
    assert con.execute(
        f"SELECT {bind('NULL::INTEGER', '__v', 'coalesce(__v, -1)')}"
    ).fetchone() == (-1,)

"""Fake full names never equal a real person's: a fake first + last name (the columns of a
composite identifier) equal to a real full name of the source is redrawn by the transform and
counted as a leak by the report; a single fake name equal to some real one is only counted.

The fake pools are tiny (ten first names, ten last names) and the source's real people include
thirty of the hundred pool combinations, so without the redraw about 30% of the people would get
a real person's full name."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import duckdb
import pytest

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.leaks import scan_leaks
from benchforge.anonymize.transform import anonymize_warehouse
from benchforge.anonymize.transform.fake import pool_entries
from benchforge.anonymize.transform.sql import derive_key

SECRET = b"full-name-test-secret"
SEED = 5
POOL = 10  # the smallest pool a policy accepts
REAL_PER_FIRST = 3  # real people per pool first name, each with a pool last name
LOCALE = "en_US"
OTHERS = [
    f"{f} {last}"
    for f in ("Ann", "Bob", "Cyd", "Dee", "Eve")
    for last in ("Adams", "Brown", "Clark", "Davis")
]


def _pool(provider: str) -> list[str]:
    return pool_entries(provider, LOCALE, SEED, list(range(POOL)))


def _real_people() -> list[tuple[str, str]]:
    firsts, lasts = _pool("first_name"), _pool("last_name")
    named_like_fakes = [
        (firsts[i], lasts[(i + j) % POOL]) for i in range(POOL) for j in range(REAL_PER_FIRST)
    ]
    others = [tuple(name.split()) for name in OTHERS]
    people = named_like_fakes + others
    return [
        (f, last) for f, last in people
    ] * 2  # each person twice: a mapping, not a row, is redrawn


def _policy() -> Policy:
    fake = {"rule": "fake", "locale": LOCALE, "pool_size": POOL}
    return Policy.model_validate(
        {
            "domain": "test",
            "faker_seed": SEED,
            "tables": {
                "people": {
                    "identifiers": [{"columns": ["first_name", "last_name"]}],
                    "columns": {
                        "person_id": "pseudonymize",
                        "first_name": {**fake, "provider": "first_name"},
                        "last_name": {**fake, "provider": "last_name"},
                    },
                }
            },
        }
    )


def _source(path: Path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA raw")
        con.execute(
            "CREATE TABLE raw.people (person_id VARCHAR, first_name VARCHAR, last_name VARCHAR)"
        )
        con.executemany(
            "INSERT INTO raw.people VALUES (?, ?, ?)",
            [[f"P-{i:04d}", f, last] for i, (f, last) in enumerate(_real_people())],
        )


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fullnames")
    _source(root / "src.duckdb")
    anonymize_warehouse(root / "src.duckdb", root / "rel.duckdb", _policy(), SECRET, threads=1)
    return root / "src.duckdb", root / "rel.duckdb"


def _attach(src: Path, rel: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
    con.execute(f"ATTACH '{rel}' AS rel")
    return con


def _names(con: duckdb.DuckDBPyConnection, catalog: str) -> list[tuple[str, str]]:
    rows = con.execute(f"SELECT first_name, last_name FROM {catalog}.raw.people ORDER BY rowid")
    return [(str(f), str(last)) for f, last in rows.fetchall()]


def _full_name_collisions(src: list[tuple[str, str]], rel: list[tuple[str, str]]) -> int:
    real = {f"{f} {last}".lower() for f, last in src}
    return len({f"{f} {last}".lower() for f, last in rel} & real)


def _first_pick(canon: str, provider: str) -> str:
    """The documented first draw of a fake (pool entry HMAC(k, canonical) mod pool size)."""
    h = hmac.new(derive_key(SECRET, "fake"), canon.encode(), hashlib.sha256).hexdigest()
    return _pool(provider)[int(h[:15], 16) % POOL]


def test_without_the_redraw_many_fakes_would_be_real_people() -> None:
    """The fixture can fail: on their first draw, 14 of the 50 distinct people get a real
    person's full name."""
    people = sorted(set(_real_people()))
    real = {f"{f} {last}".lower() for f, last in people}
    first_picks = [
        f"{_first_pick(f.upper(), 'first_name')} {_first_pick(last.upper(), 'last_name')}"
        for f, last in people
    ]
    assert len(people) == 50
    assert sum(name.lower() in real for name in first_picks) == 14


def test_no_fake_full_name_equals_a_real_one(released: tuple[Path, Path]) -> None:
    src, rel = released
    with _attach(src, rel) as con:
        source, release = _names(con, "src"), _names(con, "rel")
        assert _full_name_collisions(source, release) == 0
        firsts, lasts = set(_pool("first_name")), set(_pool("last_name"))
        assert {f for f, _ in release} <= firsts and {last for _, last in release} <= lasts
        # the same person gets the same fake full name in both of their rows
        half = len(release) // 2
        assert release[:half] == release[half:]
        scan = scan_leaks(con, _policy())
        assert scan.leaked_identifiers == 0


def test_the_redraw_is_deterministic_under_the_secret(
    released: tuple[Path, Path], tmp_path: Path
) -> None:
    src, rel = released
    again = tmp_path / "again.duckdb"
    anonymize_warehouse(src, again, _policy(), SECRET, threads=1)
    with _attach(src, rel) as con:
        con.execute(f"ATTACH '{again}' AS again (READ_ONLY)")
        assert _names(con, "again") == _names(con, "rel")


def test_an_old_style_release_with_real_full_names_is_counted_as_leaks(
    released: tuple[Path, Path], tmp_path: Path
) -> None:
    """Inject three real full names, each into another person's row (every single name is
    already a pool value, so no single column holds anything new): three leaks."""
    src, rel = released
    old = tmp_path / "old.duckdb"
    old.write_bytes(rel.read_bytes())
    with _attach(src, old) as con:
        source = _names(con, "src")
        for row, (first, last) in zip((3, 4, 5), source[:3], strict=True):
            con.execute(
                "UPDATE rel.raw.people SET first_name = ?, last_name = ? WHERE rowid = ?",
                [first, last, row],
            )
        assert _full_name_collisions(source, _names(con, "rel")) == 3
        scan = scan_leaks(con, _policy())
        assert scan.leaked_identifiers == 3
        finding = [f for f in scan.findings if f.column == "[first_name+last_name]"]
        assert [(f.table, f.count, f.in_free_text) for f in finding] == [("people", 3, False)]


def test_single_name_collisions_are_counted_not_leaks(released: tuple[Path, Path]) -> None:
    src, rel = released
    with _attach(src, rel) as con:
        source, release = _names(con, "src"), _names(con, "rel")
        expected = {
            "people.first_name": len(
                {f.lower() for f, _ in release} & {f.lower() for f, _ in source}
            ),
            "people.last_name": len(
                {last.lower() for _, last in release} & {last.lower() for _, last in source}
            ),
        }
        assert expected["people.first_name"] >= 1  # the pool's names are real first names here
        scan = scan_leaks(con, _policy())
        assert scan.single_name_collisions == expected
        assert scan.leaked_identifiers == 0
        assert any("single fake name" in note for note in scan.notes)

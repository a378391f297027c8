"""A fake never spells a real identifier the way the leak scan searches Chinese names.

The scan searches an identifier written in an unsegmented script without its spaces, anywhere
inside a released value: a real 屈 丽娟 (spaced) is found in a fake 屈丽娟, a real 阳淑华 in a fake
欧阳淑华. The fake pools used to avoid only replacements *equal* to an original identifier, so
such a fake went out and the release was refused (the enterprise release at scale 0.1: a fake
legal representative 欧阳丹丹 holding a real 欧阳丹). Now it is drawn again under the secret.

The pool is tiny (ten zh_CN names) and half of its entries spell a real (spaced) name."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.leaks import scan_leaks
from benchforge.anonymize.transform import anonymize_warehouse
from benchforge.anonymize.transform.fake import clashing_sql, pool_entries, unsegmented_keys
from benchforge.anonymize.transform.sql import derive_key

SECRET = b"cjk-clash-test-secret"
SEED = 1
POOL = 10
LOCALE = "zh_CN"
OTHERS = [
    "赵志强",
    "钱晓东",
    "孙丽华",
    "周永明",
    "吴国庆",
    "郑海波",
    "冯建新",
    "陈德胜",
    "褚立伟",
    "卫春生",
    "蒋文杰",
    "沈玉兰",
    "韩振华",
    "杨小平",
    "朱国强",
]


def _pool() -> list[str]:
    return pool_entries("name", LOCALE, SEED, list(range(POOL)))


def _spelled_apart() -> list[str]:
    """Real names written with a space after the family name, for every other pool entry of
    three characters: their unspaced spelling is that pool entry."""
    entries = [e for e in _pool() if len(e) == 3][::2]
    assert len(entries) >= 3
    return [f"{e[0]} {e[1:]}" for e in entries]


def _clashing_entries() -> set[str]:
    return {name.replace(" ", "") for name in _spelled_apart()}


def _real_names() -> list[str]:
    names = _spelled_apart() + OTHERS
    assert not set(OTHERS) & set(_pool())
    return names * 2  # each person twice: a mapping, not a row, is redrawn


def _policy() -> Policy:
    return Policy.model_validate(
        {
            "domain": "test",
            "faker_seed": SEED,
            "tables": {
                "companies": {
                    "columns": {
                        "company_id": "pseudonymize",
                        "legal_representative": {
                            "rule": "fake",
                            "provider": "name",
                            "locale": LOCALE,
                            "pool_size": POOL,
                            "pii": "direct",
                        },
                    },
                }
            },
        }
    )


def _source(path: Path) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE SCHEMA raw")
        con.execute("CREATE TABLE raw.companies (company_id VARCHAR, legal_representative VARCHAR)")
        con.executemany(
            "INSERT INTO raw.companies VALUES (?, ?)",
            [[f"C-{i:04d}", name] for i, name in enumerate(_real_names())],
        )


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("cjkclash")
    _source(root / "src.duckdb")
    anonymize_warehouse(root / "src.duckdb", root / "rel.duckdb", _policy(), SECRET, threads=1)
    return root / "src.duckdb", root / "rel.duckdb"


def _attach(src: Path, rel: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
    con.execute(f"ATTACH '{rel}' AS rel")
    return con


def _released(con: duckdb.DuckDBPyConnection, catalog: str = "rel") -> list[str]:
    rows = con.execute(f"SELECT legal_representative FROM {catalog}.raw.companies ORDER BY rowid")
    return [str(r[0]) for r in rows.fetchall()]


def _first_pick(canon: str) -> str:
    """The documented first draw of a fake (pool entry HMAC(k, canonical) mod pool size)."""
    h = hmac.new(derive_key(SECRET, "fake"), canon.encode(), hashlib.sha256).hexdigest()
    return _pool()[int(h[:15], 16) % POOL]


def test_without_the_redraw_some_fakes_would_spell_a_real_name() -> None:
    """The fixture can fail: on their first draw, some people get a pool entry that is a real
    (spaced) name without its space, which only an equality check lets through."""
    picks = [_first_pick(name.strip().upper()) for name in sorted(set(_real_names()))]
    originals = {name.lower() for name in _real_names()}
    clashing = [p for p in picks if p in _clashing_entries()]
    assert clashing
    assert not {p.lower() for p in clashing} & originals  # none is *equal* to an original


def test_the_scan_counts_such_a_fake_as_a_leak(released: tuple[Path, Path], tmp_path: Path) -> None:
    """Pins the scan's spelling rule the redraw follows: one such fake is one leak."""
    src, rel = released
    old = tmp_path / "old.duckdb"
    old.write_bytes(rel.read_bytes())
    with _attach(src, old) as con:
        entry = sorted(_clashing_entries())[0]
        con.execute(
            "UPDATE rel.raw.companies SET legal_representative = ? WHERE rowid = 0", [entry]
        )
        scan = scan_leaks(con, _policy())
        assert scan.leaked_identifiers == 1


def test_no_fake_spells_a_real_name_and_the_release_has_no_leak(
    released: tuple[Path, Path],
) -> None:
    src, rel = released
    with _attach(src, rel) as con:
        release = _released(con)
        assert set(release) <= set(_pool()) - _clashing_entries()
        half = len(release) // 2
        assert release[:half] == release[half:]  # one person, one fake
        scan = scan_leaks(con, _policy())
        assert scan.leaked_identifiers == 0
        assert scan.findings == []


def test_the_redraw_is_deterministic_under_the_secret(
    released: tuple[Path, Path], tmp_path: Path
) -> None:
    src, rel = released
    again = tmp_path / "again.duckdb"
    anonymize_warehouse(src, again, _policy(), SECRET, threads=1)
    with _attach(src, rel) as con:
        con.execute(f"ATTACH '{again}' AS again (READ_ONLY)")
        assert _released(con, "again") == _released(con)


def test_a_fake_holding_a_real_name_clashes() -> None:
    """A fake that contains a real name of the unsegmented script (欧阳淑华 holds 阳淑华), or is a
    real spaced one without its space, clashes; a Latin name only by equality."""
    con = duckdb.connect()
    con.register("_ids", pa.table({"lv": ["阳淑华", "王 建华", "ann lee"]}))
    con.execute("CREATE TABLE ident AS SELECT lv FROM _ids")
    keys = unsegmented_keys(con, "ident")
    values = ["欧阳淑华", "王建华", "李建华", "Ann Lee", "Ann Leeds", "阳淑"]
    con.register("_values", pa.table({"value": values}))
    rows = con.execute(
        f"SELECT value FROM ({clashing_sql('SELECT value FROM _values', 'ident', keys)})"
    ).fetchall()
    assert {r[0] for r in rows} == {"欧阳淑华", "王建华", "Ann Lee"}

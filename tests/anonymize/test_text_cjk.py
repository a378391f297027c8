"""Names and company names in Japanese and Chinese notes are replaced by the same fakes their
structured columns got (matched without word boundaries, a name written family name first with
no space), and the leak count finds them when they are left in."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.leaks import scan_leaks
from benchforge.anonymize.transform import anonymize_warehouse

SECRET = b"cjk-test-secret"
# (first, last, company, note): each note names its own contact and company
CONTACTS = [
    ("太郎", "田中", "山田商事株式会社", "田中太郎様(山田商事株式会社)から電話。来週訪問予定。"),
    ("花子", "佐藤", "鈴木工業株式会社", "佐藤花子さんに見積書を送付。鈴木工業株式会社の担当。"),
    ("小明", "王", "华为技术有限公司", "王小明是华为技术有限公司的经理。下周见面。"),
    ("John", "Smith", "Johnson Holdings", "Met John Smith of Johnson Holdings at the Smithsonian."),
]


def _policy() -> Policy:
    fake = {"rule": "fake", "locale": "ja_JP"}
    return Policy.model_validate(
        {
            "domain": "test",
            "tables": {
                "contacts": {
                    "identifiers": [{"columns": ["first_name", "last_name"]}],
                    "columns": {
                        "contact_id": "pseudonymize",
                        "first_name": {**fake, "provider": "first_name"},
                        "last_name": {**fake, "provider": "last_name"},
                        "company": {**fake, "provider": "company", "pii": "direct"},
                        "note": "scrub",
                    },
                }
            },
        }
    )


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("cjk")
    with duckdb.connect(str(root / "src.duckdb")) as con:
        con.execute("CREATE SCHEMA raw")
        con.execute(
            "CREATE TABLE raw.contacts (contact_id VARCHAR, first_name VARCHAR, "
            "last_name VARCHAR, company VARCHAR, note VARCHAR)"
        )
        con.executemany(
            "INSERT INTO raw.contacts VALUES (?, ?, ?, ?, ?)",
            [[f"C-{i}", *row] for i, row in enumerate(CONTACTS)],
        )
    anonymize_warehouse(root / "src.duckdb", root / "rel.duckdb", _policy(), SECRET, threads=1)
    return root / "src.duckdb", root / "rel.duckdb"


def _attach(src: Path, rel: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
    con.execute(f"ATTACH '{rel}' AS rel")
    return con


def test_notes_get_the_structured_columns_fakes(paths: tuple[Path, Path]) -> None:
    with _attach(*paths) as con:
        released = con.execute(
            "SELECT first_name, last_name, company, note FROM rel.raw.contacts ORDER BY rowid"
        ).fetchall()
    expected = []
    for (first, last, company, note), (r_first, r_last, r_company, _) in zip(
        CONTACTS, released, strict=True
    ):
        if last == "Smith":  # Latin text keeps its word boundaries: 'Smithsonian' stays
            spelled = note.replace(f"{first} {last}", f"{r_first} {r_last}")
        else:  # family name first, no space, as the notes write it
            spelled = note.replace(f"{last}{first}", f"{r_last}{r_first}")
        expected.append(spelled.replace(company, r_company))
    assert [r[3] for r in released] == expected
    assert "Smithsonian" in expected[3]
    for (first, last, company, _), (*_, note) in zip(CONTACTS, released, strict=True):
        assert company not in note and f"{last}{first}" not in note


def test_the_release_has_no_leak_and_an_unscrubbed_one_has_six(
    paths: tuple[Path, Path], tmp_path: Path
) -> None:
    src, rel = paths
    with _attach(src, rel) as con:
        assert scan_leaks(con, _policy()).leaked_identifiers == 0
    old = tmp_path / "old.duckdb"
    old.write_bytes(rel.read_bytes())
    with _attach(src, old) as con:
        con.execute(
            "UPDATE rel.raw.contacts SET note = s.note FROM "
            "(SELECT contact_id, note FROM src.raw.contacts) s "
            "WHERE rel.raw.contacts.rowid = CAST(substr(s.contact_id, 3) AS BIGINT)"
        )
        scan = scan_leaks(con, _policy())
    # three CJK names written family name first, three companies; 'John Smith' and
    # 'Johnson Holdings' in the Latin note too
    assert scan.leaked_identifiers == 8


def test_the_sql_script_test_agrees_with_python_on_ascii_accents_and_each_script() -> None:
    from benchforge.anonymize.transform.text import is_unsegmented, unsegmented_sql

    texts = ["", "Smith", "Öberg", "Ñandú 42", "田中太郎", "Smithさん", "สมชาย", "김민준", "ｶﾀｶﾅ"]
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t AS SELECT * FROM unnest(?::VARCHAR[]) WITH ORDINALITY u(v, i)", [texts]
    )
    got = [r[0] for r in con.execute(f"SELECT {unsegmented_sql('v')} FROM t ORDER BY i").fetchall()]
    assert got == [is_unsegmented(t) for t in texts]
    assert got == [False, False, False, False, True, True, True, True, True]

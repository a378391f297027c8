"""Verbatim identifier leaks: planted leaks are found exactly (whole values, names and emails in
free text, company names inside CJK titles), short values are ignored, a clean release has
none, and the counts agree with a brute-force search in plain Python."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.kanon import PrivacyInputError
from benchforge.anonymize.report.leaks import LeakScan, scan_leaks

FIRST = ["Grace", "Alan", "Ada", "Edsger", "Barbara", "Donald", "Frances", "Dennis"]
LAST = ["Hopper", "Turing", "Lovelace", "Dijkstra", "Liskov", "Knuth", "Allen", "Ritchie"]
COMPANIES = ["同兴万点信息有限公司", "快讯科技有限公司", "恩悌传媒有限公司"]
FAKE_COMPANIES = ["甲乙丙丁有限公司", "戊己庚辛有限公司", "壬癸子丑有限公司"]
TEXTS = [
    "The customer asked about the delivery schedule for next week.",
    "Shipment arrived damaged and a replacement was requested by phone.",
    "Follow up on the pricing question raised during the quarterly review.",
    "Routine check of the account settings before the renewal date.",
]

POLICY = Policy.model_validate(
    {
        "domain": "test",
        "tables": {
            "people": {
                "primary_key": "person_id",
                "columns": {
                    "person_id": "pseudonymize",
                    "first_name": {"rule": "fake", "provider": "first_name"},
                    "last_name": {"rule": "fake", "provider": "last_name"},
                    "email": {"rule": "fake", "provider": "email", "pii": "direct"},
                    "badge": {"rule": "suppress", "pii": "direct"},
                    "city": "keep",
                },
                "identifiers": [{"columns": ["first_name", "last_name"]}],
            },
            "orders": {
                "primary_key": "order_id",
                "foreign_keys": {"person_id": "people.person_id"},
                "columns": {"order_id": "keep", "person_id": "pseudonymize", "comment": "keep"},
            },
            "tickets": {"columns": {"ticket_id": "keep", "body": "scrub"}},
            "companies": {
                "columns": {
                    "company_id": "keep",
                    "name": {"rule": "fake", "provider": "company", "pii": "direct"},
                }
            },
            "filings": {"columns": {"filing_id": "keep", "title": "scrub"}},
        },
    }
)


def _people(released: bool) -> pa.Table:
    rows: list[tuple[str | None, ...]] = []
    for i in range(40):
        first, last = FIRST[i % len(FIRST)], LAST[i % len(LAST)] + ("" if i < 8 else str(i))
        if released:
            rows.append(
                (
                    f"Q-{(i * 7919) % 1000003:06d}",
                    f"Fakefirst{i}",
                    f"Fakelast{i}",
                    f"user{i}@fake.test",
                    None,
                    "Berlin",
                )
            )
        else:
            badge = "12345" if i == 0 else str(1_000_000 + i)
            email = f"{first}.{last}{i}@example.com".lower()
            rows.append((f"P-{i:06d}", first, last, email, badge, "Berlin"))
    names = ["person_id", "first_name", "last_name", "email", "badge", "city"]
    return pa.table({n: [r[k] for r in rows] for k, n in enumerate(names)})


def _tables(plant: bool) -> tuple[dict[str, pa.Table], dict[str, pa.Table]]:
    src_people, rel_people = _people(False), _people(True)
    emails = src_people.column("email").to_pylist()
    src_orders = {
        "order_id": [f"O-{i}" for i in range(60)],
        "person_id": [f"P-{i % 40:06d}" for i in range(60)],
        "comment": ["ok" if i % 2 else "late delivery" for i in range(60)],
    }
    rel_orders = dict(src_orders)
    rel_orders["person_id"] = [f"Q-{((i % 40) * 7919) % 1000003:06d}" for i in range(60)]
    rel_orders["comment"] = list(src_orders["comment"])
    tickets = [TEXTS[i % len(TEXTS)] for i in range(20)]
    titles = [f"{FAKE_COMPANIES[i % 3]}2021年第{i % 4 + 1}季度统计报表" for i in range(12)]
    if plant:
        c = rel_orders["comment"]
        c[3] = "  " + emails[0].upper() + " "  # whole value, other case and spacing
        c[4] = emails[0]  # the same identifier again: still one
        c[5] = emails[5]
        c[6] = "P-000007"  # an original key
        c[7] = "12345"  # a 5-digit number: not an identifier
        c[8] = "1000009"  # a 7-digit badge: an identifier
        c[9] = "Ada"  # shorter than 4 characters: ignored
        tickets[2] = "Please call back Ada Lovelace about the overdue invoice today."
        tickets[5] = f"Customer wrote from ({emails[0]}) about a refund request."
        tickets[7] = f"Bounce report: mailto:{emails[1]} could not be delivered."
        titles[4] = f"{COMPANIES[1]}2021年第1季度统计报表"
    src = {
        "people": src_people,
        "orders": pa.table(src_orders),
        "tickets": pa.table({"ticket_id": list(range(20)), "body": [TEXTS[0]] * 20}),
        "companies": pa.table({"company_id": [1, 2, 3], "name": COMPANIES}),
        "filings": pa.table({"filing_id": list(range(12)), "title": ["x"] * 12}),
    }
    rel = {
        "people": rel_people,
        "orders": pa.table(rel_orders),
        "tickets": pa.table({"ticket_id": list(range(20)), "body": tickets}),
        "companies": pa.table({"company_id": [1, 2, 3], "name": FAKE_COMPANIES}),
        "filings": pa.table({"filing_id": list(range(12)), "title": titles}),
    }
    return src, rel


def _connect(tmp_path: Path, src: dict[str, pa.Table], rel: dict[str, pa.Table]):
    for name, tables in (("src", src), ("rel", rel)):
        with duckdb.connect(str(tmp_path / f"{name}.duckdb")) as c:
            c.execute("CREATE SCHEMA raw")
            for table, data in tables.items():
                c.register("data", data)
                c.execute(f"CREATE TABLE raw.{table} AS SELECT * FROM data")
                c.unregister("data")
    con = duckdb.connect()
    for name in ("src", "rel"):
        con.execute(f"ATTACH '{tmp_path / f'{name}.duckdb'}' AS {name} (READ_ONLY)")
    return con


def _identifiers(src: dict[str, pa.Table]) -> set[str]:
    """The identifier set, rebuilt by hand from the policy above."""
    people = src["people"].to_pylist()
    # direct identifiers only: a first or last name alone is not one (the full name is)
    values = [p[c] for p in people for c in ("person_id", "email")]
    values += [p["badge"] for p in people]
    values += [f"{p['first_name']} {p['last_name']}" for p in people]
    values += src["orders"].column("person_id").to_pylist()
    values += src["companies"].column("name").to_pylist()
    out = set()
    for v in values:
        v = v.strip()
        if len(v) < 4 or (v.isdigit() and len(v) < 6):
            continue
        out.add(v.lower())
    return out


def _brute_force(src: dict[str, pa.Table], rel: dict[str, pa.Table]) -> dict[tuple, set[str]]:
    """(table, column, in free text) -> identifiers found, by plain string search."""
    idents = _identifiers(src)
    cjk = {i for i in idents if re.search(r"[\u4e00-\u9fff]", i)}
    found: dict[tuple, set[str]] = defaultdict(set)
    for table, data in rel.items():
        for col in data.column_names:
            values = [v for v in data.column(col).to_pylist() if v is not None]
            for v in values:
                if str(v).strip().lower() in idents:
                    found[(table, col, False)].add(str(v).strip().lower())
            texts = [v.lower() for v in values if isinstance(v, str)]
            free = bool(texts) and sum(map(len, texts)) / len(values) > 30
            for text in texts:
                for ident in idents:
                    if text.strip() == ident:
                        continue
                    if ident in cjk and ident in text:
                        found[(table, col, True)].add(ident)
                    if not free or ident in cjk:
                        continue
                    # words between whitespace, punctuation allowed around; an email anywhere
                    # between characters that cannot belong to an address
                    word = r"(?:^|\s)[^\w\s]*" + re.escape(ident) + r"[^\w\s]*(?:$|\s)"
                    email = r"(?<![\w.%+-])" + re.escape(ident) + r"(?![\w-]|\.\w)"
                    if re.search(word, text) or ("@" in ident and re.search(email, text)):
                        found[(table, col, True)].add(ident)
    return {k: v for k, v in found.items() if v}


def _by_column(scan: LeakScan) -> dict[tuple, int]:
    out: dict[tuple, int] = defaultdict(int)
    for f in scan.findings:
        out[(f.table, f.column, f.in_free_text)] += f.count
    return dict(out)


def _count(scan: LeakScan, table: str, column: str, source: str, free: bool) -> int:
    return sum(
        f.count
        for f in scan.findings
        if (f.table, f.column, f.identifier, f.in_free_text) == (table, column, source, free)
    )


def test_planted_leaks_are_counted_exactly(tmp_path: Path) -> None:
    src, rel = _tables(plant=True)
    scan = scan_leaks(_connect(tmp_path, src, rel), POLICY)
    assert scan.identifiers_checked == len(_identifiers(src))
    # whole values in a kept column: two distinct emails, one key, one long badge
    assert _count(scan, "orders", "comment", "people.email", False) == 2
    assert _count(scan, "orders", "comment", "people.person_id", False) == 1
    assert _count(scan, "orders", "comment", "people.badge", False) == 1
    # free text: a full name (its surname alone is no identifier), an email in brackets, one
    # glued to "mailto:"
    assert _count(scan, "tickets", "body", "people.[first_name+last_name]", True) == 1
    assert _count(scan, "tickets", "body", "people.last_name", True) == 0  # not an identifier
    assert _count(scan, "tickets", "body", "people.email", True) == 2
    # a company name inside a CJK title (no spaces, short column)
    assert _count(scan, "filings", "title", "companies.name", True) == 1
    assert "tickets.body" in scan.free_text_columns
    assert "filings.title" not in scan.free_text_columns
    # grace.hopper0@ is in orders and in tickets: counted once overall
    assert scan.leaked_identifiers == 2 + 1 + 1 + 1 + 1 + 1
    assert any("orders.comment (4)" in n for n in scan.notes)
    expected = _brute_force(src, rel)
    assert _by_column(scan) == {k: len(v) for k, v in expected.items()}


def test_clean_release_has_no_leak(tmp_path: Path) -> None:
    src, rel = _tables(plant=False)
    scan = scan_leaks(_connect(tmp_path, src, rel), POLICY)
    assert scan.identifiers_checked == len(_identifiers(src)) > 100
    assert scan.leaked_identifiers == 0
    assert scan.findings == []
    assert _brute_force(src, rel) == {}


def test_short_values_and_small_numbers_are_not_identifiers(tmp_path: Path) -> None:
    src, rel = _tables(plant=True)
    scan = scan_leaks(_connect(tmp_path, src, rel), POLICY)
    # "12345" and "Ada" were planted too; only the 7-digit badge counts
    assert _count(scan, "orders", "comment", "people.badge", False) == 1
    assert _count(scan, "orders", "comment", "people.first_name", False) == 0
    assert "12345" not in _identifiers(src) and "ada" not in _identifiers(src)


def test_a_foreign_key_copy_is_attributed_to_the_primary_key(tmp_path: Path) -> None:
    src, rel = _tables(plant=False)
    rel["orders"] = src["orders"]  # the foreign key left unreplaced
    scan = scan_leaks(_connect(tmp_path, src, rel), POLICY)
    sources = {f.identifier for f in scan.findings if f.column == "person_id"}
    assert sources == {"people.person_id"}
    assert _count(scan, "orders", "person_id", "people.person_id", False) == 40


def test_no_original_value_in_the_result(tmp_path: Path) -> None:
    src, rel = _tables(plant=True)
    text = scan_leaks(_connect(tmp_path, src, rel), POLICY).model_dump_json().lower()
    for ident in _identifiers(src):
        assert ident not in text


def test_finds_the_one_leak_among_tens_of_thousands_of_rows(tmp_path: Path) -> None:
    n = 30_000
    src_people = pa.table(
        {
            "person_id": [f"P-{i:06d}" for i in range(n)],
            "email": [f"someone{i}@example.com" for i in range(n)],
        }
    )
    notes = [f"Order {i} shipped to the warehouse in the north region on time." for i in range(n)]
    notes[17] = "Customer someone42@example.com asked for a refund of the last order."
    rel_people = pa.table(
        {
            "person_id": [f"Q-{i:06d}" for i in range(n)],
            "email": [f"user{i}@fake.test" for i in range(n)],
        }
    )
    rel_people = rel_people.append_column("note", pa.array(notes))
    src_people = src_people.append_column("note", pa.array(notes))
    policy = Policy.model_validate(
        {
            "domain": "test",
            "tables": {
                "people": {
                    "primary_key": "person_id",
                    "columns": {
                        "person_id": "pseudonymize",
                        "email": {"rule": "fake", "provider": "email", "pii": "direct"},
                        "note": "scrub",
                    },
                }
            },
        }
    )
    con = _connect(tmp_path, {"people": src_people}, {"people": rel_people})
    # how long the scan takes is bench/anonymize.py's figure, not a test's
    scan = scan_leaks(con, policy)
    assert scan.identifiers_checked == 2 * n
    assert scan.leaked_identifiers == 1
    assert _count(scan, "people", "note", "people.email", True) == 1


@pytest.mark.parametrize("drop", ["people", "email"])
def test_policy_naming_a_missing_source_is_an_error(tmp_path: Path, drop: str) -> None:
    src, rel = _tables(plant=False)
    if drop == "people":
        del src["people"]
    else:
        src["people"] = src["people"].drop_columns(["email"])
    with pytest.raises(PrivacyInputError):
        scan_leaks(_connect(tmp_path, src, rel), POLICY)


def test_category_labels_of_kept_columns_are_not_identifiers(tmp_path: Path) -> None:
    """A lead company literally named 'Sales' is also a department label: the released
    department 'Sales' is not a leak; another company named in kept free text still is."""
    policy = Policy.model_validate(
        {
            "domain": "test",
            "tables": {
                "leads": {
                    "columns": {
                        "lead_id": "keep",
                        "company": {"rule": "fake", "provider": "company", "pii": "direct"},
                        "note": "keep",
                    }
                },
                "users": {"columns": {"user_id": "keep", "department": "keep"}},
            },
        }
    )
    companies = ["Sales", "Acme Widgets", "Initech"]
    notes = ["call Initech about the renewal, " + "x" * 40, "n/a " + "y" * 40, "z" * 45]
    src = {
        "leads": pa.table({"lead_id": [1, 2, 3], "company": companies, "note": notes}),
        "users": pa.table({"user_id": [1, 2, 3], "department": ["Sales", "Support", "Sales"]}),
    }
    rel = {
        "leads": pa.table({"lead_id": [1, 2, 3], "company": ["A", "B", "C"], "note": notes}),
        "users": src["users"],
    }
    scan = scan_leaks(_connect(tmp_path, src, rel), policy)
    assert scan.identifiers_checked == 2  # 'sales' is vocabulary
    assert scan.leaked_identifiers == 1  # Initech, in the kept note
    assert [(f.table, f.column, f.count) for f in scan.findings] == [("leads", "note", 1)]
    assert any("1 identifier value(s) not searched" in n for n in scan.notes)

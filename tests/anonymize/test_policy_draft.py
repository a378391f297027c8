"""draft_policy on a tiny three-table warehouse: the draft loads, passes check_policy on the same
warehouse, and classifies keys, foreign keys (through drifted keys), identifiers, numbers stored
as text, counts, categories and free text as documented."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from benchforge.anonymize.policy.check import check_policy
from benchforge.anonymize.policy.draft import draft_policy
from benchforge.anonymize.policy.loader import LoadedPolicy, load_policy
from benchforge.anonymize.policy.models import Fake, Generalize, Perturb, Pseudonymize

FIRST = ["Ann", "Bob", "Cyd", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon"]
LAST = ["Adams", "Brown", "Clark", "Davis", "Evans", "Ford", "Green"]
BIO = "Enjoys long walks, reads the quarterly report twice and writes detailed feedback."
N_CUSTOMERS = 150
N_ORDERS = 400


def _build(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA raw")
    con.execute("CREATE TABLE raw.regions (region_code VARCHAR, region_name VARCHAR)")
    con.execute("INSERT INTO raw.regions VALUES ('N', 'North'), ('S', 'South'), ('E', 'East')")
    con.execute(
        "CREATE TABLE raw.customers (customer_id VARCHAR, first_name VARCHAR, last_name VARCHAR, "
        "email VARCHAR, region_code VARCHAR, revenue_text VARCHAR, visits INTEGER, "
        "rating INTEGER, signup DATE, bio VARCHAR)"
    )
    rows = []
    for i in range(N_CUSTOMERS):
        first, last = FIRST[i % len(FIRST)], LAST[i % len(LAST)]
        revenue = 1000 + 37.5 * i * i
        text = f"{revenue:,.2f}" if i % 4 == 0 else f"{revenue:.2f}"  # type_coercion
        rows.append(
            (
                f"CUST-{i:04d}",
                first,
                last,
                f"{first.lower()}.{last.lower()}.{i}@example.com",
                "NSE"[i % 3],
                text,
                (i * 7) % 45,
                1 + i % 5,
                date(2020, 1, 1) + timedelta(days=3 * i),
                f"{BIO} Customer number {i}.",
            )
        )
    con.executemany("INSERT INTO raw.customers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.execute(
        "CREATE TABLE raw.orders (order_id VARCHAR, customer_id VARCHAR, order_no VARCHAR, "
        "amount DOUBLE, status VARCHAR, coupon_code VARCHAR)"
    )
    orders = []
    for j in range(N_ORDERS):
        customer = f"CUST-{(j * 13) % N_CUSTOMERS:04d}"
        if j % 50 == 0:
            customer = customer.lower()  # key drift
        elif j % 50 == 1:
            customer += "  "
        orders.append(
            (
                f"ORD-{j:05d}",
                customer,
                f"PO-{(j * 7919) % 100000:05d}",
                round(10 + (j % 97) * 3.17, 2),
                ["open", "paid", "shipped"][j % 3],
                f"X{j % 9}",  # not a key of any table
            )
        )
    con.executemany("INSERT INTO raw.orders VALUES (?, ?, ?, ?, ?, ?)", orders)
    con.close()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("draft") / "warehouse.duckdb"
    _build(path)
    return path


@pytest.fixture(scope="module")
def con(warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    connection.execute(f"ATTACH '{warehouse}' AS src (READ_ONLY)")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def drafted(
    con: duckdb.DuckDBPyConnection, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, LoadedPolicy]:
    text = draft_policy(con, "src", "shop")
    path = tmp_path_factory.mktemp("policy") / "shop.yaml"
    path.write_text(text)
    return text, load_policy(path)


def test_draft_loads_and_passes_check_on_its_warehouse(con, drafted) -> None:
    _, loaded = drafted
    result = check_policy(loaded, con, "src", dataset_domain="shop")
    assert set(result.tables) == {"regions", "customers", "orders"}
    assert loaded.policy.domain == "shop"


def test_keys_and_foreign_keys(drafted) -> None:
    _, loaded = drafted
    tables = loaded.policy.tables
    assert tables["customers"].primary_key == ["customer_id"]
    assert tables["orders"].primary_key == ["order_id"]
    assert tables["regions"].primary_key == ["region_code"]
    # found through drifted keys ('cust-0000', 'CUST-0001  '), normalized with upper(trim())
    assert tables["orders"].foreign_keys == {"customer_id": "customers.customer_id"}
    assert tables["customers"].foreign_keys == {"region_code": "regions.region_code"}
    # coupon codes are in no table: not a foreign key
    assert "coupon_code" not in tables["orders"].foreign_keys
    orders, customers = tables["orders"].columns, tables["customers"].columns
    assert isinstance(customers["customer_id"].rule, Pseudonymize)
    assert orders["customer_id"].rule == customers["customer_id"].rule
    # a 3-row table about nobody is vocabulary: its code and the references to it are kept
    assert tables["regions"].columns["region_code"].rule.rule == "keep"
    assert customers["region_code"].rule.rule == "keep"


def test_email_is_a_direct_identifier_replaced_by_a_fake(drafted) -> None:
    _, loaded = drafted
    email = loaded.policy.tables["customers"].columns["email"]
    assert isinstance(email.rule, Fake)
    assert email.rule.provider == "email"
    assert email.pii == "direct"


def test_names_are_faked_and_declared_a_composite_identifier(drafted) -> None:
    _, loaded = drafted
    customers = loaded.policy.tables["customers"]
    first, last = customers.columns["first_name"].rule, customers.columns["last_name"].rule
    assert isinstance(first, Fake) and first.provider == "first_name"
    assert isinstance(last, Fake) and last.provider == "last_name"
    assert [ident.columns for ident in customers.identifiers] == [["first_name", "last_name"]]


def test_measures_categories_text_and_dates(drafted) -> None:
    _, loaded = drafted
    customers = loaded.policy.tables["customers"].columns
    orders = loaded.policy.tables["orders"].columns
    revenue = customers["revenue_text"].rule
    assert isinstance(revenue, Perturb) and revenue.method == "lsd"  # numbers stored as text
    visits = customers["visits"].rule
    assert isinstance(visits, Perturb) and visits.method == "noise" and visits.min == 0
    amount = orders["amount"].rule
    assert isinstance(amount, Perturb) and amount.method == "lsd"
    assert customers["rating"].rule.rule == "keep"  # 5 values: a category
    assert customers["bio"].rule.rule == "scrub"  # average length > 40
    assert orders["order_no"].rule.rule == "pseudonymize"  # identifier-like, 400 distinct
    assert orders["status"].rule.rule == "keep"
    assert customers["signup"].rule.rule == "keep"
    assert not isinstance(customers["signup"].rule, Generalize)


def test_draft_is_commented_and_deterministic(con, drafted) -> None:
    text, _ = drafted
    assert "email: {rule: fake, provider: email, pii: direct}  # the name 'email'" in text
    assert "references customers.customer_id: same rule, so joins survive" in text
    assert "signup: keep  # date kept; or {rule: shift_dates, entity: customer_id}" in text
    assert draft_policy(con, "src", "shop") == text


def test_the_header_names_the_real_check_command(drafted) -> None:
    """The drafted header tells the user to run the policy check, spelled as the command line
    parses it (a draft once pointed at ``benchforge anonymize check``, which the parser read as
    anonymizing a dataset named 'check')."""
    import re

    from benchforge.cli.main import build_parser

    text, _ = drafted
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    commands = re.findall(r"`benchforge ([^`]+)`", header)
    assert commands, "the header names no command to run"
    checks = [c for c in commands if c.startswith("policy check")]
    assert checks and all(not c.startswith("anonymize check") for c in commands)
    args = build_parser().parse_args(checks[0].split())
    assert (args.command, args.action) == ("policy", "check")
    assert args.dataset and args.policy

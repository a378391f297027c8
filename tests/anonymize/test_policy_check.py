"""check_policy on a tiny warehouse: one test per kind of problem, each asserting the field path
and the message, plus the PII detector on hand-picked values."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from benchforge.anonymize.policy.check import PolicyCheck, check_policy
from benchforge.anonymize.policy.loader import load_policy
from benchforge.anonymize.policy.models import PolicyError
from benchforge.anonymize.policy.pii import (
    content_reason,
    detect_pii,
    is_card,
    is_email,
    is_iban,
    is_ipv4,
    is_phone,
    name_reason,
)

CUSTOMERS = [
    # id, email, phone, country, birth, visits, revenue, balance, note, active
    ("CUS-001", "ann@example.com", "+1 202-555-0101", "US", date(1980, 1, 5), 3, 1200.5, -5.0),
    ("CUS-002", "bob@example.com", "+1 202-555-0102", "US", date(1981, 2, 6), 0, 830.0, 10.0),
    ("CUS-003", "cy@example.org", "(030) 555-0103", "DE", date(1975, 3, 7), 7, 99.9, 0.0),
    ("CUS-004", "di@example.org", "(030) 555-0104", "DE", date(1990, 4, 8), 1, 15000.0, 2.5),
    ("CUS-005", "ed@example.net", "+44 20 7946 0105", "GB", date(1985, 5, 9), 12, 560.25, -1.0),
    ("CUS-006", "fa@example.net", "+44 20 7946 0106", "GB", date(1970, 6, 1), 2, 43.0, 7.0),
]
NOTES = ["likes email", "prefers phone", "new", "vip", "returning", "new"]
# id, customer (one drifted key), quantity, unit price, day
ORDERS = [
    ("ORD-01", "CUS-001", 1, 10.0, 1),
    ("ORD-02", "CUS-001", 5, 2.5, 2),
    ("ORD-03", "cus-003 ", 2, 7.25, 3),
    ("ORD-04", "CUS-003", 7, 1.0, 4),
    ("ORD-05", "CUS-004", 3, 4.0, 5),
    ("ORD-06", "CUS-005", 9, 3.5, 6),
    ("ORD-07", "CUS-006", 4, 12.0, 7),
]

BASE: dict[str, Any] = {
    "domain": "shop",
    "tables": {
        "customers": {
            "primary_key": "customer_id",
            "identifiers": [{"columns": ["email", "contact"]}],
            "columns": {
                "customer_id": "pseudonymize",
                "email": {"rule": "fake", "provider": "email", "pii": "direct"},
                "contact": {"rule": "fake", "provider": "phone_number"},
                "country": "keep",
                "birth_date": {"rule": "generalize", "hierarchy": "date"},
                "visits": {"rule": "perturb", "method": "noise", "min": 0},
                "revenue": {"rule": "perturb", "method": "lsd", "group_by": ["country"]},
                "balance": {"rule": "perturb", "method": "noise"},  # has negatives: no min
                "note": "keep",
                "is_active": "keep",
            },
        },
        "orders": {
            "primary_key": "order_id",
            "foreign_keys": {"customer_id": "customers.customer_id"},
            "checks": ["total >= 0"],
            "columns": {
                "order_id": "pseudonymize",
                "customer_id": "pseudonymize",
                "quantity": "keep",
                "unit_price": {"rule": "perturb", "method": "lsd"},
                "total": {"rule": "derive", "sql": "quantity * unit_price"},
                "created": {"rule": "shift_dates", "entity": "customer_id"},
            },
        },
        "summary": {
            "primary_key": "customer_id",
            "foreign_keys": {"customer_id": "customers.customer_id"},
            "aggregate_of": {
                "sql": "SELECT upper(trim(customer_id)) AS customer_id, sum(total) AS order_total "
                "FROM orders GROUP BY 1",
                "key": ["customer_id"],
                "columns": ["order_total"],
            },
            "columns": {"customer_id": "pseudonymize", "order_total": "keep"},
        },
    },
    "quasi_identifiers": {
        "customers": {"columns": ["country", "birth_date"], "sensitive": ["is_active"], "k": 2}
    },
    "linkage": [{"table": "customers", "known": ["country", "birth_date"], "secret": "revenue"}],
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wh") / "warehouse.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA raw")
    con.execute(
        "CREATE TABLE raw.customers (customer_id VARCHAR, email VARCHAR, contact VARCHAR, "
        "country VARCHAR, birth_date DATE, visits INTEGER, revenue DOUBLE, balance DOUBLE, "
        "note VARCHAR, is_active BOOLEAN)"
    )
    for row, note in zip(CUSTOMERS, NOTES, strict=True):
        con.execute(
            "INSERT INTO raw.customers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [*row, note, row[5] > 1],
        )
    con.execute(
        "CREATE TABLE raw.orders (order_id VARCHAR, customer_id VARCHAR, quantity INTEGER, "
        "unit_price DOUBLE, total DOUBLE, created DATE)"
    )
    for oid, cid, qty, price, day in ORDERS:
        con.execute(
            "INSERT INTO raw.orders VALUES (?, ?, ?, ?, ?, ?)",
            [oid, cid, qty, price, qty * price, date(2024, 1, day)],
        )
    con.execute(
        "CREATE TABLE raw.summary AS SELECT upper(trim(customer_id)) AS customer_id, "
        "sum(total) AS order_total FROM raw.orders GROUP BY 1 ORDER BY 1"
    )
    con.close()
    return path


@pytest.fixture
def con(warehouse: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    connection.execute(f"ATTACH '{warehouse}' AS src (READ_ONLY)")
    yield connection
    connection.close()


Mutation = Callable[[dict[str, Any]], None]


def _check(
    con: duckdb.DuckDBPyConnection,
    tmp_path: Path,
    mutate: Mutation | None = None,
    domain: str | None = "shop",
) -> PolicyCheck:
    data = copy.deepcopy(BASE)
    if mutate is not None:
        mutate(data)
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return check_policy(load_policy(path), con, "src", domain)


def _problems(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, mutate: Mutation, domain: str | None = "shop"
) -> dict[str, str]:
    with pytest.raises(PolicyError) as info:
        _check(con, tmp_path, mutate, domain)
    assert str(tmp_path / "policy.yaml") in str(info.value)
    return dict(info.value.problems)


def _cols(data: dict[str, Any], table: str) -> dict[str, Any]:
    return data["tables"][table]["columns"]


# ---------------------------------------------------------------- the valid policy


def test_valid_policy_passes_and_reports_types_and_flags(con, tmp_path) -> None:
    result = _check(con, tmp_path)
    assert result.tables["customers"]["birth_date"] == "DATE"
    assert result.tables["orders"]["quantity"] == "INTEGER"
    assert list(result.tables["summary"]) == ["customer_id", "order_total"]
    assert "email" in result.pii_flags["customers.email"]
    assert "phone" in result.pii_flags["customers.contact"]  # by content: 6 of 6 phones
    assert "customers.note" not in result.pii_flags
    assert "customers.is_active" not in result.pii_flags
    assert result.warnings == []


def test_all_problems_are_reported_together(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        _cols(d, "customers")["note"] = {"rule": "perturb", "method": "lsd", "digits": 2}
        del _cols(d, "orders")["quantity"]

    problems = _problems(con, tmp_path, mutate)
    assert set(problems) == {"tables.customers.columns.note.rule", "tables.orders.columns.quantity"}
    assert problems["tables.customers.columns.note.rule"] == (
        "perturb lsd on a text column needs numbers stored as text; 6 of 6 values of note are "
        "not numbers"
    )


# ---------------------------------------------------------------- tables and columns


def test_domain_mismatch(con, tmp_path) -> None:
    problems = _problems(con, tmp_path, lambda d: None, domain="crm")
    assert problems == {"domain": "the policy is for domain 'shop' but the dataset is 'crm'"}


def test_warehouse_table_without_entry(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        del d["tables"]["summary"]

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.summary"].startswith("warehouse table 'summary' has no entry")


def test_policy_table_missing_from_warehouse_suggests(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["tables"]["order"] = d["tables"].pop("orders")
        d["tables"]["summary"]["aggregate_of"] = None

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.order"] == "no table 'order' in the warehouse; did you mean 'orders'?"
    assert "tables.orders" in problems  # and the real table has no entry


def test_column_without_rule(con, tmp_path) -> None:
    problems = _problems(con, tmp_path, lambda d: _cols(d, "customers").pop("note"))
    assert problems == {
        "tables.customers.columns.note": "no rule for column note: give it a rule or mark it keep"
    }


def test_unknown_column_suggests(con, tmp_path) -> None:
    problems = _problems(con, tmp_path, lambda d: _cols(d, "customers").update(notes="keep"))
    assert problems == {
        "tables.customers.columns.notes": "no column 'notes' in raw.customers; did you mean 'note'?"
    }


# ---------------------------------------------------------------- rule / type fit


@pytest.mark.parametrize(
    ("table", "column", "rule", "path", "message"),
    [
        (
            "orders",
            "created",
            {"rule": "perturb", "method": "lsd"},
            "rule",
            "perturb needs a numeric column; created is DATE",
        ),
        (
            "customers",
            "note",
            {"rule": "perturb", "method": "noise"},
            "rule",
            "works only with method lsd",
        ),
        (
            "customers",
            "visits",
            {"rule": "shift_dates", "entity": "customer_id"},
            "rule",
            "shift_dates needs a DATE or TIMESTAMP column; visits is INTEGER",
        ),
        (
            "orders",
            "created",
            {"rule": "shift_dates", "entity": "client_id"},
            "entity",
            "no column 'client_id' in raw.orders",
        ),
        (
            "orders",
            "created",
            {
                "rule": "shift_dates",
                "entity": "customer_id",
                "boundary": "2025-01-01 00:00:00",
                "boundary_column": "started",
            },
            "boundary_column",
            "no column 'started' in raw.orders",
        ),
        (
            "customers",
            "note",
            {"rule": "generalize", "hierarchy": "date"},
            "rule",
            "generalize date needs a DATE or TIMESTAMP column",
        ),
        (
            "customers",
            "visits",
            {"rule": "generalize", "hierarchy": "numeric"},
            "base_width",
            "generalize numeric needs base_width",
        ),
        (
            "customers",
            "visits",
            {"rule": "generalize", "hierarchy": "hierarchy"},
            "levels",
            "needs at least one level mapping",
        ),
        (
            "customers",
            "visits",
            {"rule": "scrub"},
            "rule",
            "scrub needs a text column; visits is INTEGER",
        ),
        (
            "customers",
            "revenue",
            {"rule": "fake", "provider": "name"},
            "rule",
            "fake needs a text column",
        ),
        (
            "customers",
            "revenue",
            "pseudonymize",
            "rule",
            "pseudonymize needs a text column or an integer key",
        ),
        (
            "customers",
            "visits",
            {"rule": "pseudonymize", "format": "hex"},
            "rule",
            "pseudonymize needs a text column or an integer key",
        ),
        (
            "customers",
            "revenue",
            {"rule": "perturb", "method": "lsd", "group_by": ["region"]},
            "group_by",
            "no column 'region' in raw.customers",
        ),
        (
            "customers",
            "revenue",
            {"rule": "perturb", "method": "lsd", "key": ["cust"]},
            "key",
            "no column 'cust' in raw.customers",
        ),
        (
            "customers",
            "revenue",
            {"rule": "perturb", "method": "lsd", "min": 5, "max": 1},
            "min",
            "min 5.0 is above max 1.0",
        ),
        (
            "customers",
            "visits",
            {"rule": "frequency_floor", "min_count": 5},
            "rule",
            "frequency_floor needs a text column; visits is INTEGER",
        ),
        (
            "customers",
            "note",
            {"rule": "frequency_floor", "min_count": 5, "within": ["county"]},
            "within",
            "no column 'county' in raw.customers",
        ),
    ],
)
def test_rule_does_not_fit_the_column(con, tmp_path, table, column, rule, path, message) -> None:
    qi_columns = BASE["quasi_identifiers"]["customers"]["columns"]

    def mutate(d: dict[str, Any]) -> None:
        _cols(d, table)[column] = rule
        if column in qi_columns:
            d["quasi_identifiers"] = {}

    problems = _problems(con, tmp_path, mutate)
    where = f"tables.{table}.columns.{column}.{path}"
    assert where in problems, problems
    assert message in problems[where]


def test_integer_key_may_keep_its_format(con, tmp_path) -> None:
    _check(con, tmp_path, lambda d: _cols(d, "orders").update(quantity="pseudonymize"))


def test_noise_without_min_on_a_non_negative_column(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        _cols(d, "customers")["visits"] = {"rule": "perturb", "method": "noise"}

    problems = _problems(con, tmp_path, mutate)
    message = problems["tables.customers.columns.visits.min"]
    assert "could make values negative; set min: 0" in message
    # balance goes below 0 in the source: noise without a floor is fine there (BASE has it)


def test_derive_that_does_not_compile(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        _cols(d, "orders")["total"] = {"rule": "derive", "sql": "quantity * unit_cost"}

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.orders.columns.total.sql"].startswith("does not compile on raw.orders:")


def test_derive_that_differs_from_the_source_warns_with_a_count(con, tmp_path) -> None:
    sql = "CASE WHEN quantity > 4 THEN quantity * unit_price + 1 ELSE quantity * unit_price END"
    result = _check(
        con, tmp_path, lambda d: _cols(d, "orders").update(total={"rule": "derive", "sql": sql})
    )
    expected = sum(1 for _, _, qty, _, _ in ORDERS if qty > 4)
    assert expected == 3
    assert result.warnings == [
        f"tables.orders.columns.total.sql: the expression differs from the source on {expected} "
        "rows; the release will not keep those rows' values"
    ]


# ---------------------------------------------------------------- keys


def test_fake_primary_key_is_refused(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        _cols(d, "orders")["order_id"] = {"rule": "fake", "provider": "user_name"}

    problems = _problems(con, tmp_path, mutate)
    assert "fake cannot keep it unique" in problems["tables.orders.columns.order_id.rule"]


def test_primary_key_must_be_keep_pseudonymize_or_derive(con, tmp_path) -> None:
    problems = _problems(con, tmp_path, lambda d: _cols(d, "orders").update(order_id="scrub"))
    assert problems["tables.orders.columns.order_id.rule"].startswith(
        "order_id is the primary key: keep, pseudonymize or"
    )
    derived = {"rule": "derive", "sql": "'ORD-' || right(order_id, 2)"}
    _check(con, tmp_path, lambda d: _cols(d, "orders").update(order_id=derived))


def test_unknown_primary_key_column(con, tmp_path) -> None:
    problems = _problems(con, tmp_path, lambda d: d["tables"]["orders"].update(primary_key="id"))
    assert problems["tables.orders.primary_key"].startswith("no column 'id' in raw.orders")


def test_foreign_key_to_a_missing_table_suggests(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["tables"]["orders"]["foreign_keys"] = {"customer_id": "customer.customer_id"}

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.orders.foreign_keys.customer_id"] == (
        "no table 'customer' in the warehouse; did you mean 'customers'?"
    )


def test_foreign_key_to_a_missing_column_and_bad_form(con, tmp_path) -> None:
    def missing(d: dict[str, Any]) -> None:
        d["tables"]["orders"]["foreign_keys"] = {"customer_id": "customers.id"}

    problems = _problems(con, tmp_path, missing)
    assert problems["tables.orders.foreign_keys.customer_id"].startswith(
        "no column 'id' in raw.customers"
    )

    def bad(d: dict[str, Any]) -> None:
        d["tables"]["orders"]["foreign_keys"] = {"customer_id": "customers"}

    problems = _problems(con, tmp_path, bad)
    assert problems["tables.orders.foreign_keys.customer_id"] == (
        "'customers' is not of the form table.column"
    )


def test_foreign_key_with_another_rule_breaks_joins(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        _cols(d, "orders")["customer_id"] = {"rule": "pseudonymize", "format": "hex"}

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.orders.columns.customer_id.rule"] == (
        "foreign key customer_id -> customers.customer_id is pseudonymize(format='hex') but "
        "customers.customer_id is pseudonymize: both must carry the same rule or joins break"
    )


def test_foreign_key_must_be_keep_or_pseudonymize(con, tmp_path) -> None:
    problems = _problems(con, tmp_path, lambda d: _cols(d, "orders").update(customer_id="suppress"))
    assert problems["tables.orders.columns.customer_id.rule"] == (
        "customer_id is a foreign key: keep or pseudonymize it, not suppress"
    )


def test_a_swapped_foreign_key_needs_its_parent_kept(con, tmp_path) -> None:
    swapped = {"rule": "swap", "within": ["quantity"]}
    problems = _problems(con, tmp_path, lambda d: _cols(d, "orders").update(customer_id=swapped))
    assert problems["tables.orders.columns.customer_id.rule"] == (
        "foreign key customer_id is swapped (its values move among rows, unreplaced), so "
        "customers.customer_id must be kept, not pseudonymize"
    )

    def parent_kept(d: dict[str, Any]) -> None:
        for table in ("customers", "summary"):
            _cols(d, table)["customer_id"] = "keep"
        _cols(d, "orders")["customer_id"] = swapped

    _check(con, tmp_path, parent_kept)


def test_swap_strata_name_real_columns(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        _cols(d, "customers")["country"] = {"rule": "swap", "within": ["is_activ", "country"]}

    with pytest.raises(PolicyError) as info:
        _check(con, tmp_path, mutate)
    assert [p for p in info.value.problems if p[0].endswith("country.within")] == [
        (
            "tables.customers.columns.country.within",
            "no column 'is_activ' in raw.customers; did you mean 'is_active'?",
        ),
        ("tables.customers.columns.country.within", "country cannot be swapped within itself"),
    ]


def test_documentation_fields_do_not_make_keys_differ(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        for table in ("customers", "orders", "summary"):
            _cols(d, table)["customer_id"] = "keep"
        _cols(d, "orders")["customer_id"] = {"rule": "keep", "reason": "public id"}

    _check(con, tmp_path, mutate)


# ---------------------------------------------------------------- identifiers, checks, aggregates


def test_identifier_with_an_unknown_column(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["tables"]["customers"]["identifiers"] = [{"columns": ["email", "phone"]}]

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.customers.identifiers[0].columns"].startswith(
        "no column 'phone' in raw.customers"
    )


def test_check_that_does_not_compile(con, tmp_path) -> None:
    problems = _problems(
        con, tmp_path, lambda d: d["tables"]["orders"]["checks"].append("totl > 0")
    )
    assert problems["tables.orders.checks[1]"].startswith("does not compile on raw.orders:")


def test_check_that_does_not_hold_counts_the_rows(con, tmp_path) -> None:
    problems = _problems(
        con, tmp_path, lambda d: d["tables"]["orders"]["checks"].append("quantity < 5")
    )
    failing = sum(1 for _, _, qty, _, _ in ORDERS if not qty < 5)
    assert failing == 3
    assert problems == {"tables.orders.checks[1]": f"does not hold on the source: {failing} rows"}


def test_aggregate_query_that_does_not_compile(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["tables"]["summary"]["aggregate_of"]["sql"] = "SELECT customer_id FROM order_lines"

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.summary.aggregate_of.sql"].startswith("does not compile:")


def test_aggregate_query_must_return_key_and_columns(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["tables"]["summary"]["aggregate_of"]["sql"] = (
            "SELECT upper(trim(customer_id)) AS customer_id, sum(total) AS total FROM orders "
            "GROUP BY 1"
        )

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.summary.aggregate_of.columns"] == (
        "the query does not return 'order_total'; did you mean 'total'? "
        "(it returns customer_id, total)"
    )


def test_aggregate_column_must_be_kept(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        _cols(d, "summary")["order_total"] = {"rule": "perturb", "method": "lsd"}

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.summary.columns.order_total.rule"].startswith(
        "order_total is recomputed by aggregate_of: its own rule must be keep"
    )


def test_the_search_path_is_restored_after_an_aggregate(con, tmp_path) -> None:
    con.execute("SET search_path = 'memory.main'")
    _check(con, tmp_path)
    assert con.execute("SELECT current_setting('search_path')").fetchone() == ("memory.main",)


# ---------------------------------------------------------------- PII


def test_direct_identifier_must_be_replaced(con, tmp_path) -> None:
    problems = _problems(
        con,
        tmp_path,
        lambda d: _cols(d, "customers").update(note={"rule": "keep", "pii": "direct"}),
    )
    assert problems["tables.customers.columns.note.rule"] == (
        "note is tagged pii: direct but its rule is keep: "
        "use pseudonymize | fake | suppress | scrub"
    )


def test_flagged_column_cannot_be_kept(con, tmp_path) -> None:
    problems = _problems(con, tmp_path, lambda d: _cols(d, "customers").update(contact="keep"))
    message = problems["tables.customers.columns.contact.rule"]
    assert message.startswith("keeps a column the PII detector flags (6 of 6 sampled values")
    assert "look like phone numbers" in message


def test_allow_pii_keeps_a_flagged_column_but_not_a_direct_one(con, tmp_path) -> None:
    allowed = {"rule": "keep", "allow_pii": True, "reason": "the shop's public line"}
    _check(con, tmp_path, lambda d: _cols(d, "customers").update(contact=allowed))
    problems = _problems(
        con, tmp_path, lambda d: _cols(d, "customers").update(contact={**allowed, "pii": "direct"})
    )
    assert "tagged pii: direct" in problems["tables.customers.columns.contact.rule"]


def test_allow_pii_on_an_unflagged_column_warns(con, tmp_path) -> None:
    result = _check(
        con,
        tmp_path,
        lambda d: _cols(d, "customers").update(note={"rule": "keep", "allow_pii": True}),
    )
    assert result.warnings == [
        "tables.customers.columns.note: allow_pii is set but the detector does not flag it"
    ]


# ---------------------------------------------------------------- quasi-identifiers, linkage


def test_quasi_identifiers_must_exist_and_be_keep_or_generalize(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["quasi_identifiers"]["customers"]["columns"] = ["country", "revenue", "age"]
        d["quasi_identifiers"]["customer"] = {"columns": ["country"]}

    problems = _problems(con, tmp_path, mutate)
    assert problems["quasi_identifiers.customers.columns"].startswith(
        "no column 'age' in raw.customers"
    )
    assert problems["quasi_identifiers.customer"] == (
        "no table 'customer' in the warehouse; did you mean 'customers'?"
    )

    def perturbed(d: dict[str, Any]) -> None:
        d["quasi_identifiers"]["customers"]["columns"] = ["country", "revenue"]

    problems = _problems(con, tmp_path, perturbed)
    assert problems["quasi_identifiers.customers.columns"] == (
        "quasi-identifier revenue must be keep or generalize, not perturb"
    )


def test_generalize_outside_the_quasi_identifiers_warns(con, tmp_path) -> None:
    result = _check(con, tmp_path, lambda d: d.update(quasi_identifiers={}))
    assert result.warnings == [
        "tables.customers.columns.birth_date: generalize acts only on the quasi-identifiers of "
        "quasi_identifiers.customers; this column is not one"
    ]


def test_linkage_columns_must_exist(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["linkage"] = [
            {"table": "customers", "known": ["country", "zip"], "secret": "country"},
            {"table": "shops", "known": ["x"]},
        ]

    problems = _problems(con, tmp_path, mutate)
    assert problems["linkage[0].known"].startswith("no column 'zip' in raw.customers")
    assert problems["linkage[0].secret"] == "country is also a known column"
    assert problems["linkage[1].table"].startswith("no table 'shops' in the warehouse")


def test_a_stream_must_perturb_alike_everywhere(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        shared = {"rule": "perturb", "method": "lsd", "key": ["customer_id"], "stream": "money"}
        _cols(d, "customers")["revenue"] = shared
        _cols(d, "orders")["unit_price"] = {**shared, "digits": 2}

    problems = _problems(con, tmp_path, mutate)
    assert problems["tables.orders.columns.unit_price.stream"].startswith(
        "stream 'money' is used with digits 3 and 1 key column(s) at "
        "tables.customers.columns.revenue"
    )


def test_a_stream_must_move_every_copy_by_the_same_minimum(con, tmp_path) -> None:
    def mutate(d: dict[str, Any]) -> None:
        shared = {"rule": "perturb", "method": "lsd", "key": ["customer_id"], "stream": "money"}
        _cols(d, "customers")["revenue"] = {**shared, "min_relative_change": 0.01}
        _cols(d, "orders")["unit_price"] = shared

    problems = _problems(con, tmp_path, mutate)
    assert "min_relative_change 0.01" in problems["tables.orders.columns.unit_price.stream"]


# ---------------------------------------------------------------- the detector


def test_detector_by_name_respects_the_column_type() -> None:
    assert "email" in str(name_reason("contact_email", "VARCHAR"))
    assert name_reason("has_opted_out_of_email", "BOOLEAN") is None
    assert "birth" in str(name_reason("birthdate", "DATE"))
    assert name_reason("birthdate_source", "BOOLEAN") is None
    assert "phone" in str(name_reason("mobile_phone", "BIGINT"))
    assert name_reason("card_count", "INTEGER") is None
    assert "IP" in str(name_reason("ip_address", "VARCHAR"))
    assert "company" in str(name_reason("company_name", "VARCHAR"))
    assert name_reason("country_name", "VARCHAR") is None
    assert name_reason("last_login_at", "TIMESTAMP") is None


@pytest.mark.parametrize(
    "value",
    [
        "+1-720-911-0501x33923",
        "1 (455) 317-9516",
        "(0161) 496 0265",
        "683.623.2735",
        "+44(0)3069990268",
        "18100690652",
        "5147076311",
        "04331 59703",
    ],
)
def test_phone_formats(value: str) -> None:
    assert is_phone(value)


@pytest.mark.parametrize(
    "value",
    [
        "2024-01-15",
        "15.01.2024",
        "1,234,567.00",
        "12345.67",
        "00000140",
        "123456",
        "CUS-001",
        "2024",
        "0094717649",
    ],
)
def test_not_phones(value: str) -> None:
    assert not is_phone(value)


def test_checksum_recognizers() -> None:
    assert is_iban("GB82 WEST 1234 5698 7654 32") and not is_iban("GB82 WEST 1234 5698 7654 33")
    assert is_card("4111 1111 1111 1111") and not is_card("4111 1111 1111 1112")
    assert not is_card("0000000000000000")  # Luhn-valid, but not a card
    assert is_ipv4("192.168.0.1") and not is_ipv4("192.168.0.256")
    assert is_email("ads@agency-agy-00005.example") and not is_email("not an email @ all")


def test_content_needs_half_of_the_sample() -> None:
    emails = ["a@x.com", "b@x.com", "c@x.com"]
    assert content_reason([*emails, "x", "y", "z"]) == (
        "3 of 6 sampled values (50%) look like email addresses"
    )
    assert content_reason([*emails, "w", "x", "y", "z"]) is None
    assert content_reason([]) is None


def test_detect_pii_samples_text_columns_only(con) -> None:
    assert "phone numbers" in str(detect_pii(con, "src", "customers", "contact", "VARCHAR"))
    assert detect_pii(con, "src", "customers", "note", "VARCHAR") is None
    assert detect_pii(con, "src", "customers", "visits", "INTEGER") is None

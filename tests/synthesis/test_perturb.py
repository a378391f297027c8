"""The perturb step on a tiny dataset (DuckDB + SQLite; PostgreSQL in test_perturb_postgres):
each perturbation kind bites (the naive query, an exact-key join or a removed column, gets the
answer wrong or fails; the documented one, in hints.md, gets the gold answer computed before
perturbation); the same seed gives byte-identical outputs, another seed other keys, texts and
naive answers; malformed specs name the file and the field."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from benchforge.core.engines import QueryResult, TrialDatabases, load_db_config
from benchforge.synthesis.perturb import (
    HINTS_FILE,
    RECORD_FILE,
    SCHEMA_FILE,
    PerturbSpecError,
    load_perturb_spec,
    parse_perturb_spec,
    perturb,
    read_perturb_record,
)
from tests.paths import REPO_ROOT
from tests.support.perturb import (
    ENTERPRISE_NOTES,
    ENTERPRISE_TICKETS,
    ENTERPRISE_TICKETS_SQL,
    HIGH_TICKETS,
    across_databases,
    gold,
    read_sqlite,
    spec_data,
    tiny_dataset,
)

OUTPUTS = ("db_config.yaml", SCHEMA_FILE, HINTS_FILE, RECORD_FILE)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_dataset(tmp_path_factory.mktemp("perturb") / "shop")


def run(dataset: Path, out: Path, seed: int = 1, **spec: Any) -> Path:
    perturb(dataset, parse_perturb_spec(spec_data(**spec)), out, seed)
    return out


def test_gold_answers_are_the_known_numbers(dataset: Path) -> None:
    assert gold(dataset, ENTERPRISE_TICKETS_SQL.format(join="t.customer_id = c.customer_id")) == (
        ENTERPRISE_TICKETS
    )
    assert gold(dataset, "SELECT count(*) FROM tickets WHERE priority = 'High'") == HIGH_TICKETS


# Per kind: the rule, and the documented way to join (what hints.md says the key looks like).
KEY_KINDS: dict[str, tuple[dict[str, Any], str]] = {
    "prefix": (
        {"kind": "prefix", "prefix": "CUST-"},
        "regexp_replace(t.customer_id, '^CUST-', 'CUS-') = c.customer_id",
    ),
    "zero_pad": (
        {"kind": "zero_pad", "width": 7},
        "CAST(regexp_extract(t.customer_id, '[0-9]+') AS INTEGER) = "
        "CAST(regexp_extract(c.customer_id, '[0-9]+') AS INTEGER)",
    ),
    "case": ({"kind": "case", "to": "lower"}, "upper(t.customer_id) = c.customer_id"),
    "trailing_space": (
        {"kind": "trailing_space", "rate": 0.3},
        "rtrim(t.customer_id) = c.customer_id",
    ),
}


@pytest.mark.parametrize("kind", KEY_KINDS)
def test_each_key_reformat_bites(dataset: Path, tmp_path: Path, kind: str) -> None:
    rule, documented = KEY_KINDS[kind]
    out = run(dataset, tmp_path / "out", key_rules=[rule])
    answer = gold(dataset, ENTERPRISE_TICKETS_SQL.format(join="t.customer_id = c.customer_id"))
    con = across_databases(out)
    naive = con.execute(ENTERPRISE_TICKETS_SQL.format(join="t.customer_id = c.customer_id"))
    assert naive.fetchone() != (answer,)
    right = con.execute(ENTERPRISE_TICKETS_SQL.format(join=documented)).fetchone()
    assert right == (answer,) == (ENTERPRISE_TICKETS,)
    (change,) = read_perturb_record(out).key_changes
    assert change.kind == kind
    ids = read_sqlite(out / "databases" / "support.sqlite", "tickets")["customer_id"]
    changed = sum(1 for value in ids if not re.fullmatch(r"CUS-\d{4}", value))
    assert change.rows_changed == changed > 0
    if kind == "trailing_space":
        assert 0 < changed < len(ids)
        assert all(re.fullmatch(r"CUS-\d{4} {0,3}", value) for value in ids)
    else:
        assert changed == len(ids)  # every id rewritten: the exact join finds nothing


def test_rules_compose_in_order_and_keep_the_number(dataset: Path, tmp_path: Path) -> None:
    rules = [
        {"kind": "prefix", "choices": ["cust_", "C"]},
        {"kind": "zero_pad", "width": 1},
        {"kind": "case", "to": "upper"},
    ]
    out = run(dataset, tmp_path / "out", key_rules=rules)
    record = read_perturb_record(out)
    prefix = record.key_changes[0].parameters["prefix"]
    assert prefix in ("cust_", "C")
    ids = read_sqlite(out / "databases" / "support.sqlite", "tickets")["customer_id"]
    assert ids.iloc[0] == f"{prefix.upper()}8"  # CUS-0008: new prefix, no padding, upper case
    hints = (out / HINTS_FILE).read_text()
    assert f"`{prefix.upper()}8` for the id written `CUS-0008`" in hints


def test_integer_keys_become_text(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    data = spec_data()
    data["keys"] = [
        {"table": "tickets", "column": "ticket_id", "rules": [{"kind": "prefix", "prefix": "T-"}]},
        {"table": "notes", "column": "note_id", "rules": [{"kind": "zero_pad", "width": 3}]},
    ]
    perturb(dataset, parse_perturb_spec(data), out, seed=1)
    tickets = read_sqlite(out / "databases" / "support.sqlite", "tickets")
    assert list(tickets["ticket_id"][:3]) == ["T-1", "T-2", "T-3"]
    with duckdb.connect(str(out / "databases" / "sales.duckdb"), read_only=True) as con:
        ids = con.execute("SELECT doc->>'note_id' FROM notes LIMIT 2").fetchall()
    assert ids == [("001",), ("002",)]
    assert "| ticket_id | TEXT |" in (out / SCHEMA_FILE).read_text()


def test_removed_column_is_only_in_the_text(dataset: Path, tmp_path: Path) -> None:
    out = run(dataset, tmp_path / "out", embed=True)
    answer = gold(dataset, "SELECT count(*) FROM tickets WHERE priority = 'High'")
    with sqlite3.connect(out / "databases" / "support.sqlite") as con:
        with pytest.raises(sqlite3.OperationalError, match="no such column: priority"):
            con.execute("SELECT count(*) FROM tickets WHERE priority = 'High'")
        texts = [
            row[0] for row in con.execute("SELECT description FROM tickets ORDER BY ticket_id")
        ]
    pattern = re.compile(r"Priority: (\w+)\.|rated this (\w+) priority\.")
    found = [next(g for g in m.groups() if g) for t in texts if (m := pattern.search(t))]
    assert len(found) == 60
    assert found.count("High") == answer == HIGH_TICKETS
    assert texts[0].startswith("Ticket text 1 ") and texts[4] in (
        "Priority: High.",
        "The customer rated this High priority.",
    )  # ticket 5 had no text: the sentence is all of it
    embed = read_perturb_record(out).embeds[0]
    assert embed.rows_embedded == 60 and sum(embed.template_counts) == 60
    assert all(count > 0 for count in embed.template_counts)
    assert "priority" not in (out / SCHEMA_FILE).read_text()
    assert "has no column `priority`" in (out / HINTS_FILE).read_text()


def test_removed_value_inside_words_needs_the_pattern(dataset: Path, tmp_path: Path) -> None:
    """A substring search for 'Low' also counts texts that merely contain it, once the
    surrounding text does: the documented pattern does not."""
    out = run(dataset, tmp_path / "out", embed=True)
    frame = read_sqlite(out / "databases" / "support.sqlite", "tickets")
    frame["description"] = "Slow reply. " + frame["description"]
    naive = int(frame["description"].str.contains("Low", case=False).sum())
    documented = int(
        frame["description"].str.contains(r"Priority: Low\.|rated this Low priority").sum()
    )
    answer = gold(dataset, "SELECT count(*) FROM tickets WHERE priority = 'Low'")
    assert naive != answer and documented == answer == 20


def test_documents_need_their_json_operators(dataset: Path, tmp_path: Path) -> None:
    out = run(dataset, tmp_path / "out")
    answer = gold(
        dataset,
        "SELECT count(*) FROM notes n JOIN customers c USING (customer_id) "
        "WHERE c.segment = 'Enterprise'",
    )
    with duckdb.connect(str(out / "databases" / "sales.duckdb"), read_only=True) as con:
        with pytest.raises(duckdb.BinderException, match="customer_id"):
            con.execute("SELECT count(*) FROM notes WHERE customer_id = 'CUS-0003'")
        right = con.execute(
            "SELECT count(*) FROM notes n JOIN customers c ON n.doc->>'customer_id' = "
            "c.customer_id WHERE c.segment = 'Enterprise'"
        ).fetchone()
        assert con.execute("SELECT typeof(doc) FROM notes LIMIT 1").fetchone() == ("JSON",)
    assert right == (answer,) == (ENTERPRISE_NOTES,)
    schema = (out / SCHEMA_FILE).read_text()
    assert "### `notes` (30 JSON documents)" in schema and "doc->>'field'" in schema


def test_db_config_is_read_by_the_engines_layer(dataset: Path, tmp_path: Path) -> None:
    out = run(dataset, tmp_path / "out", key_rules=[KEY_KINDS["prefix"][0]])
    config = load_db_config(out / "db_config.yaml")
    assert {n: e.engine for n, e in config.databases.items()} == {
        "sales": "duckdb",
        "support": "sqlite",
    }
    assert str(tmp_path) not in (out / "db_config.yaml").read_text()  # relative paths only
    with TrialDatabases(config) as dbs:
        result = dbs.query_db("support", "SELECT customer_id FROM tickets ORDER BY ticket_id")
    assert isinstance(result, QueryResult) and result.rows[0] == ("CUST-0008",)


def test_same_seed_same_bytes_other_seed_other_keys_texts_answers(
    dataset: Path, tmp_path: Path
) -> None:
    rules = [
        {"kind": "prefix", "choices": ["CUST-", "cust_", "C"]},
        {"kind": "trailing_space", "rate": 0.3},
    ]
    a = run(dataset, tmp_path / "a", seed=5, key_rules=rules, embed=True)
    b = run(dataset, tmp_path / "b", seed=5, key_rules=rules, embed=True)
    for name in OUTPUTS:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    tickets_a = read_sqlite(a / "databases" / "support.sqlite", "tickets")
    assert tickets_a.equals(read_sqlite(b / "databases" / "support.sqlite", "tickets"))

    c = run(dataset, tmp_path / "c", seed=6, key_rules=rules, embed=True)
    tickets_c = read_sqlite(c / "databases" / "support.sqlite", "tickets")
    assert (a / RECORD_FILE).read_bytes() != (c / RECORD_FILE).read_bytes()
    assert list(tickets_a["customer_id"]) != list(tickets_c["customer_id"])
    assert list(tickets_a["description"]) != list(tickets_c["description"])
    normalized = ENTERPRISE_TICKETS_SQL.format(
        join="regexp_replace(rtrim(t.customer_id), '^[^0-9]*', '') = "
        "regexp_replace(c.customer_id, '^[^0-9]*', '')"
    )
    right_a, right_c = (across_databases(out).execute(normalized).fetchone() for out in (a, c))
    assert right_a == right_c == (ENTERPRISE_TICKETS,)  # gold does not move with the seed


def test_seed_changes_the_naive_answer(dataset: Path, tmp_path: Path) -> None:
    rules = [{"kind": "trailing_space", "rate": 0.3}]
    naive = ENTERPRISE_TICKETS_SQL.format(join="t.customer_id = c.customer_id")
    answers = {
        seed: across_databases(run(dataset, tmp_path / str(seed), seed=seed, key_rules=rules))
        .execute(naive)
        .fetchone()
        for seed in (1, 2, 3)
    }
    assert len(set(answers.values())) > 1, answers
    assert all(answer != (ENTERPRISE_TICKETS,) for answer in answers.values())


def write_spec(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "perturb.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            lambda d: d.update(
                keys=[
                    {
                        "table": "tickets",
                        "column": "customer_id",
                        "rules": [{"kind": "zero_pad", "width": 0}],
                    }
                ]
            ),
            "keys.0.rules.0.width",
            "greater than or equal to 1",
        ),
        (
            lambda d: d.update(
                keys=[{"table": "tickets", "column": "customer_id", "rules": [{"kind": "shuffle"}]}]
            ),
            "keys.0.rules.0.kind",
            "'shuffle'",
        ),
        (
            lambda d: d.update(
                keys=[
                    {
                        "table": "tickets",
                        "column": "customer_id",
                        "rules": [{"kind": "prefix", "prefix": "A", "choices": ["B"]}],
                    }
                ]
            ),
            "keys.0.rules.0",
            "either prefix or choices",
        ),
        (
            lambda d: d["databases"]["sales"].update(engine="mongodb"),
            "databases.sales.engine",
            "'duckdb', 'sqlite' or 'postgres'",
        ),
        (
            lambda d: d["databases"]["support"].update(documents=["notes"]),
            "databases.support",
            "DuckDB (JSON) or PostgreSQL (JSONB)",
        ),
        (
            lambda d: d.update(
                embed=[
                    {
                        "table": "tickets",
                        "columns": ["priority"],
                        "into": "description",
                        "templates": ["{segment}"],
                    }
                ]
            ),
            "embed.0",
            "only the removed columns",
        ),
        (
            lambda d: d["databases"]["sales"].update(tables=["customers", "tickets"]),
            "databases",
            "placed in 'sales' already",
        ),
    ],
)
def test_malformed_spec_names_file_and_field(
    tmp_path: Path, change: Any, field: str, message: str
) -> None:
    data = spec_data(notes_engine="duckdb")
    change(data)
    path = write_spec(tmp_path, data)
    with pytest.raises(PerturbSpecError) as caught:
        load_perturb_spec(path)
    assert any(f == field and message in m for f, m in caught.value.problems), caught.value.problems
    assert f"{path}: {field}: " in str(caught.value)


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            lambda d: d["databases"]["sales"].update(tables=["custmers"]),
            "databases.sales.tables.0",
            "no table 'custmers'",
        ),
        (
            lambda d: d.update(
                keys=[
                    {
                        "table": "tickets",
                        "column": "client_id",
                        "rules": [{"kind": "case", "to": "lower"}],
                    }
                ]
            ),
            "keys.0.column",
            "no column 'client_id' in table 'tickets'",
        ),
        (
            lambda d: d.update(
                embed=[
                    {
                        "table": "tickets",
                        "columns": ["priority"],
                        "into": "body",
                        "templates": ["{priority}"],
                    }
                ]
            ),
            "embed.0.into",
            "no column 'body'",
        ),
    ],
)
def test_spec_that_does_not_fit_the_dataset_names_file_and_field(
    dataset: Path, tmp_path: Path, change: Any, field: str, message: str
) -> None:
    data = spec_data()
    change(data)
    path = write_spec(tmp_path, data)
    with pytest.raises(PerturbSpecError) as caught:
        perturb(dataset, path, tmp_path / "out", seed=1)
    assert f"{path}: {field}: {message}" in str(caught.value)
    assert not (tmp_path / "out").exists()  # checked before anything is written


def test_shipped_crm_spec_is_valid() -> None:
    spec = load_perturb_spec(REPO_ROOT / "task_specs" / "dab-crm" / "perturb.yaml")
    engines = {db.engine for db in spec.databases.values()}
    assert engines == {"duckdb", "sqlite", "postgres"}
    assert any(db.documents for db in spec.databases.values())
    kinds = {rule.kind for key in spec.keys for rule in key.rules}
    assert kinds == {"prefix", "zero_pad", "case", "trailing_space"}

"""The perturb step's PostgreSQL side on a real server (started once for the file): the
script loads into the template database named in db_config.yaml, each trial reads its own
copy through the engines layer, the JSONB documents answer through their operators and not as
columns, and the reformatted keys bite there as in the other engines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml

from benchforge.core.engines import QueryFailed, QueryResult, TrialDatabases, load_db_config
from benchforge.core.engines.models import PostgresEntry
from benchforge.core.engines.postgres_trials import trial_postgres
from benchforge.synthesis.perturb import (
    RECORD_FILE,
    load_postgres_templates,
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
    spec_data,
    tiny_dataset,
)
from tests.support.postgres import PostgresServer, running_postgres

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def perturbed(tmp_path_factory: pytest.TempPathFactory, server: PostgresServer) -> Path:
    root = tmp_path_factory.mktemp("perturb-pg")
    spec = spec_data(
        key_rules=[{"kind": "prefix", "prefix": "CUST-"}, {"kind": "trailing_space", "rate": 0.3}],
        embed=True,
        support_engine="postgres",
        notes_engine="postgres",
    )
    perturb(tiny_dataset(root / "shop"), parse_perturb_spec(spec), root / "out", seed=1)
    load_postgres_templates(root / "out", server.url())
    return root / "out"


def rows(outcome: object) -> list[tuple[object, ...]]:
    assert isinstance(outcome, QueryResult), outcome
    return outcome.rows


def test_template_named_in_db_config_is_loaded(perturbed: Path, server: PostgresServer) -> None:
    config = load_db_config(perturbed / "db_config.yaml")
    entry = config.databases["support"]
    assert isinstance(entry, PostgresEntry) and entry.template.startswith("bfp_support_")
    with (
        trial_postgres(config, server.url(), "trial-a") as targets,
        TrialDatabases(config, postgres=targets) as dbs,
    ):
        assert rows(dbs.query_db("support", "SELECT count(*) FROM tickets")) == [(60,)]
        assert rows(dbs.query_db("support", "SELECT count(*) FROM notes")) == [(30,)]


def test_documents_answer_through_jsonb_operators(perturbed: Path, server: PostgresServer) -> None:
    config = load_db_config(perturbed / "db_config.yaml")
    with (
        trial_postgres(config, server.url(), "trial-b") as targets,
        TrialDatabases(config, postgres=targets) as dbs,
    ):
        naive = dbs.query_db("support", "SELECT customer_id FROM notes")
        assert isinstance(naive, QueryFailed) and "customer_id" in naive.message
        assert rows(dbs.query_db("support", "SELECT pg_typeof(doc)::text FROM notes LIMIT 1")) == [
            ("jsonb",)
        ]
        notes = rows(dbs.query_db("support", "SELECT doc->>'customer_id' FROM notes"))
        tickets = dbs.query_db("support", "SELECT ticket_id, customer_id, description FROM tickets")
        removed = dbs.query_db("support", "SELECT priority FROM tickets")
    assert isinstance(removed, QueryFailed)
    assert isinstance(tickets, QueryResult)
    con = across_databases(perturbed, pd.DataFrame(tickets.rows, columns=tickets.columns))
    con.register("notes", pd.DataFrame(notes, columns=["customer_id"]))
    enterprise_notes = con.execute(
        "SELECT count(*) FROM notes n JOIN customers c USING (customer_id) "
        "WHERE c.segment = 'Enterprise'"
    ).fetchone()
    assert enterprise_notes == (ENTERPRISE_NOTES,)
    naive = con.execute(ENTERPRISE_TICKETS_SQL.format(join="t.customer_id = c.customer_id"))
    assert naive.fetchone() != (ENTERPRISE_TICKETS,)
    documented = "regexp_replace(rtrim(t.customer_id), '^CUST-', 'CUS-') = c.customer_id"
    right = con.execute(ENTERPRISE_TICKETS_SQL.format(join=documented)).fetchone()
    assert right == (ENTERPRISE_TICKETS,)
    high = con.execute(
        "SELECT count(*) FROM tickets WHERE regexp_matches(description, "
        "'Priority: High\\.|rated this High priority')"
    ).fetchone()
    assert high == (HIGH_TICKETS,)


def test_loading_again_replaces_the_template(perturbed: Path, server: PostgresServer) -> None:
    templates = load_postgres_templates(perturbed, server.url())
    config = load_db_config(perturbed / "db_config.yaml")
    entry = config.databases["support"]
    assert isinstance(entry, PostgresEntry) and templates == {"support": entry.template}
    with (
        trial_postgres(config, server.url(), "trial-c") as targets,
        TrialDatabases(config, postgres=targets) as dbs,
    ):
        assert rows(dbs.query_db("support", "SELECT count(*) FROM tickets")) == [(60,)]


def test_flow_perturbs_and_loads_the_templates(
    tmp_path: Path, perturbed: Path, server: PostgresServer
) -> None:
    """The flow composes the same steps: the same record as the library's for the same seed,
    and the template loaded on the server."""
    from benchforge.flows.perturb import perturb_dataset

    spec = tmp_path / "perturb.yaml"
    data = spec_data(
        key_rules=[{"kind": "prefix", "prefix": "CUST-"}, {"kind": "trailing_space", "rate": 0.3}],
        embed=True,
        support_engine="postgres",
        notes_engine="postgres",
    )
    spec.write_text(yaml.safe_dump(data))
    record = perturb_dataset(
        str(perturbed.parent / "shop"), str(spec), str(tmp_path / "out"), 1, server.url()
    )
    assert (tmp_path / "out" / RECORD_FILE).read_bytes() == (perturbed / RECORD_FILE).read_bytes()
    assert record == read_perturb_record(perturbed)
    config = load_db_config(tmp_path / "out" / "db_config.yaml")
    with (
        trial_postgres(config, server.url(), "trial-flow") as targets,
        TrialDatabases(config, postgres=targets) as dbs,
    ):
        assert rows(dbs.query_db("support", "SELECT count(*) FROM notes")) == [(30,)]


def test_shipped_crm_spec_bites_on_a_crm_dataset(tmp_path: Path, server: PostgresServer) -> None:
    """task_specs/dab-crm/perturb.yaml on a small crm dataset: "how many High-priority cases
    have a contact with a mobile phone" is 0 or an error the naive way (cases in PostgreSQL,
    contacts in SQLite), and the gold answer the documented way (hints.md)."""
    from benchforge.synthesis.dataset import build_dataset

    dataset = tmp_path / "crm"
    build_dataset("crm", scale=0.01, seed=7, out=str(dataset), validate=False)
    answer = gold(
        dataset,
        "SELECT count(*) FROM cases c JOIN contacts p USING (contact_id) "
        "WHERE c.priority = 'High' AND p.mobile_phone IS NOT NULL",
    )
    assert answer > 0
    out = tmp_path / "out"
    perturb(dataset, REPO_ROOT / "task_specs" / "dab-crm" / "perturb.yaml", out, seed=1)
    load_postgres_templates(out, server.url())
    config = load_db_config(out / "db_config.yaml")
    with (
        trial_postgres(config, server.url(), "trial-crm") as targets,
        TrialDatabases(config, postgres=targets) as dbs,
    ):
        assert isinstance(dbs.query_db("support", "SELECT priority FROM cases"), QueryFailed)
        cases = dbs.query_db("support", "SELECT contact_id, description FROM cases")
        contacts = dbs.query_db("customers", "SELECT contact_id, mobile_phone FROM contacts")
    assert isinstance(cases, QueryResult) and isinstance(contacts, QueryResult)
    con = duckdb.connect(":memory:")
    con.register("cases", pd.DataFrame(cases.rows, columns=cases.columns))
    con.register("contacts", pd.DataFrame(contacts.rows, columns=contacts.columns))
    question = (
        "SELECT count(*) FROM cases c JOIN contacts p ON {join} "
        "WHERE {high} AND p.mobile_phone IS NOT NULL"
    )
    naive = question.format(join="c.contact_id = p.contact_id", high="TRUE")
    assert con.execute(naive).fetchone() == (0,)
    documented = question.format(
        join="'CON-' || lpad(regexp_extract(c.contact_id, '[0-9]+'), 8, '0') = p.contact_id",
        high="regexp_matches(c.description, "
        "'Priority: High\\.|marked this as High priority\\.|set the priority to High\\.')",
    )
    assert con.execute(documented).fetchone() == (answer,)
    hints = (out / "hints.md").read_text()
    assert "`contact_id` in `support.cases` starts with" in hints
    assert "has no column `priority`" in hints

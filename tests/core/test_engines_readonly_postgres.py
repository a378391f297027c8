"""Read-only PostgreSQL access for agent tools, on a real server (started once for the file):
every kind of write statement is refused through ``query_db`` and by the engine alone (the
read-only role and transaction), nothing changes; the role cannot write even when it turns
its transaction read-write; each trial reads its own database copied from the template, and
two trials made in parallel do not see each other's data; the databases are dropped after."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from psycopg import errors as pg_errors

from benchforge.core.engines import (
    DbConfig,
    QueryFailed,
    QueryLimits,
    QueryRefused,
    QueryResult,
    TrialDatabases,
    open_readonly,
    present,
)
from benchforge.core.engines.postgres_trials import (
    READER_ROLE,
    TrialDatabaseError,
    create_trial_database,
    drop_trial_database,
    ensure_reader_role,
    reader_conninfo,
    trial_database_name,
    trial_postgres,
)
from tests.support.engines import (
    AMOUNT_SUM,
    CREATE_INDEX,
    CREATE_ORDERS,
    NOT_IN_DIALECT,
    ROWS,
    flat,
    order_rows,
    postgres_writes,
    rows_digest,
)
from tests.support.postgres import PostgresServer, running_postgres

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TEMPLATE = "shop_template"
TRIAL_DB = "bf_test_trial"
# What the engine alone runs without refusing, and why nothing changes: transaction control
# and session settings inside the query's own read-only transaction, rolled back after
# (SET TRANSACTION READ WRITE included: the role has no write grant to use it with).
ENGINE_RUNS_HARMLESSLY = {"transaction", "SET"}


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    with running_postgres(TEMPLATE) as srv:
        with psycopg.connect(srv.url(TEMPLATE), autocommit=True) as con:
            con.execute(CREATE_ORDERS)
            con.execute(CREATE_INDEX)
            with con.cursor() as cur:
                cur.executemany("INSERT INTO orders VALUES (%s, %s, %s, %s)", order_rows())
        create_trial_database(srv.url(), TEMPLATE, TRIAL_DB)
        yield srv


def _digest(server: PostgresServer, database: str) -> str:
    with psycopg.connect(server.url(database)) as con:
        return rows_digest(con.execute("SELECT * FROM orders ORDER BY order_id").fetchall())


def _catalogue(server: PostgresServer, database: str) -> list[tuple[str, str]]:
    with psycopg.connect(server.url(database)) as con:
        return con.execute(
            "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname !~ '^pg_' "
            "AND n.nspname <> 'information_schema' ORDER BY 1, 2"
        ).fetchall()


WRITE_CASES = flat(postgres_writes(Path("/OUTSIDE"))) + flat(NOT_IN_DIALECT["postgres"])


@pytest.mark.parametrize("precheck", [True, False], ids=["query_db", "engine-alone"])
@pytest.mark.parametrize(("kind", "sql"), WRITE_CASES)
def test_every_write_is_refused_and_nothing_changes(
    server: PostgresServer, tmp_path: Path, kind: str, sql: str, precheck: bool
) -> None:
    if not precheck and kind in NOT_IN_DIALECT["postgres"]:
        pytest.skip("not a statement of this dialect: only the lexical check sees it")
    sql = sql.replace("/OUTSIDE", str(tmp_path))
    catalogue = _catalogue(server, TRIAL_DB)
    con = open_readonly(
        "postgres",
        reader_conninfo(server.url(), TRIAL_DB),
        logical_name="shop",
        precheck=precheck,
    )
    try:
        outcome = con.query(sql)
        if precheck or kind not in ENGINE_RUNS_HARMLESSLY:
            assert isinstance(outcome, QueryRefused | QueryFailed), (sql, outcome)
        if precheck or kind not in ENGINE_RUNS_HARMLESSLY | {"other"}:
            assert isinstance(outcome, QueryRefused), (sql, outcome)
        if isinstance(outcome, QueryRefused | QueryFailed):
            assert TRIAL_DB not in outcome.message
        after = con.query("SELECT count(*), sum(amount_cents) FROM orders")
        assert isinstance(after, QueryResult) and after.rows == [(ROWS, AMOUNT_SUM)]
        write = con.query("INSERT INTO orders VALUES (5000, 'x', 1, NULL)")
        assert isinstance(write, QueryRefused)  # whatever the statement before set
    finally:
        con.close()
    assert _digest(server, TRIAL_DB) == rows_digest(order_rows())
    assert _catalogue(server, TRIAL_DB) == catalogue
    assert list(tmp_path.iterdir()) == []


def test_the_role_cannot_write_even_out_of_a_read_only_transaction(
    server: PostgresServer,
) -> None:
    with psycopg.connect(server.url()) as admin:
        attrs = admin.execute(
            "SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls, "
            "rolinherit FROM pg_roles WHERE rolname = %s",
            (READER_ROLE,),
        ).fetchone()
    assert attrs == (False, False, False, False, False, False)
    with psycopg.connect(reader_conninfo(server.url(), TRIAL_DB), autocommit=True) as con:
        assert con.execute("SHOW default_transaction_read_only").fetchone() == ("on",)
        con.execute("SET default_transaction_read_only = off")
        for sql, error in (
            ("INSERT INTO orders VALUES (5000, 'x', 1, NULL)", pg_errors.InsufficientPrivilege),
            ("UPDATE orders SET amount_cents = 0", pg_errors.InsufficientPrivilege),
            ("DELETE FROM orders", pg_errors.InsufficientPrivilege),
            ("TRUNCATE orders", pg_errors.InsufficientPrivilege),
            ("DROP TABLE orders", pg_errors.InsufficientPrivilege),
            ("CREATE TABLE stolen (x int)", pg_errors.InsufficientPrivilege),
            ("CREATE TEMP TABLE scratch (x int)", pg_errors.InsufficientPrivilege),
            ("CREATE DATABASE other", pg_errors.InsufficientPrivilege),
            ("COPY orders TO '/tmp/orders.csv'", pg_errors.InsufficientPrivilege),
        ):
            with pytest.raises(error):
                con.execute(sql)
        with pytest.raises(pg_errors.InsufficientPrivilege):
            con.execute("BEGIN; SET TRANSACTION READ WRITE; DELETE FROM orders; COMMIT")
        con.execute("ROLLBACK")
    assert _digest(server, TRIAL_DB) == rows_digest(order_rows())


def test_reads_timeouts_and_truncation(server: PostgresServer, tmp_path: Path) -> None:
    config = DbConfig.model_validate(
        {"databases": {"shop": {"engine": "postgres", "template": TEMPLATE}}}
    )
    targets = {"shop": reader_conninfo(server.url(), TRIAL_DB)}
    with TrialDatabases(config, postgres=targets, limits=QueryLimits(timeout_s=0.5)) as dbs:
        total = dbs.query_db("shop", "SELECT count(*) AS n, sum(amount_cents) AS s FROM orders")
        assert isinstance(total, QueryResult)
        assert total.columns == ["n", "s"] and total.rows == [(ROWS, AMOUNT_SUM)]
        dollar = dbs.query_db("shop", "SELECT $$a;b$$ AS x, E'c\\'d;' AS y")
        assert isinstance(dollar, QueryResult) and dollar.rows == [("a;b", "c'd;")]
        capped = dbs.query_db("shop", "SELECT order_id FROM orders ORDER BY order_id", 7)
        assert isinstance(capped, QueryResult) and capped.truncated and capped.row_count == 7
        slow = dbs.query_db("shop", "SELECT pg_sleep(5)")
        assert isinstance(slow, QueryFailed) and "time limit of 0.5 s" in slow.message
        missing = dbs.query_db("shop", "SELECT * FROM nowhere")
        assert isinstance(missing, QueryFailed) and "nowhere" in missing.message
        assert dbs.list_tables("shop") == ["orders"]
        everything = dbs.query_db("shop", "SELECT * FROM orders ORDER BY order_id")
        assert isinstance(everything, QueryResult)
        view = present(everything, tmp_path, db_name="shop", max_rows=5)
        assert view.truncated and view.saved_file == "query_results/shop_001.csv"
        assert len((tmp_path / view.saved_file).read_text().splitlines()) == 1 + ROWS


def test_parallel_trials_read_their_own_databases(server: PostgresServer) -> None:
    config = DbConfig.model_validate(
        {"databases": {"shop": {"engine": "postgres", "template": TEMPLATE}}}
    )
    admin = server.url()

    def trial(trial_id: str) -> tuple[str, list[int], list[str]]:
        with trial_postgres(config, admin, trial_id) as targets:
            database = psycopg.conninfo.conninfo_to_dict(targets["shop"])["dbname"]
            assert isinstance(database, str)
            with psycopg.connect(server.url(database), autocommit=True) as con:
                con.execute("INSERT INTO orders VALUES (%s, %s, 1, NULL)", (1000, trial_id))
            seen: list[str] = []
            with TrialDatabases(config, postgres=targets) as dbs:
                # both trials have written before either reads: each sees only its own row
                barrier.wait(timeout=60)
                rows = dbs.query_db("shop", "SELECT customer FROM orders WHERE order_id = 1000")
                assert isinstance(rows, QueryResult)
                seen = [r[0] for r in rows.rows]
                count = dbs.query_db("shop", "SELECT count(*) FROM orders")
                assert isinstance(count, QueryResult)
                counts = [int(count.rows[0][0])]
                barrier.wait(timeout=60)
        return database, counts, seen

    import threading

    barrier = threading.Barrier(2)
    with ThreadPoolExecutor(2) as pool:
        (db_a, count_a, seen_a), (db_b, count_b, seen_b) = pool.map(trial, ["trial-a", "trial-b"])
    assert db_a != db_b and db_a.startswith("bf_trial_") and len(db_a) == len("bf_trial_") + 20
    assert (seen_a, seen_b) == (["trial-a"], ["trial-b"])
    assert count_a == count_b == [ROWS + 1]
    assert _digest(server, TEMPLATE) == rows_digest(order_rows())
    with psycopg.connect(admin) as con:
        left = con.execute("SELECT datname FROM pg_database WHERE datname LIKE 'bf_trial_%'")
        assert left.fetchall() == []


def test_trial_database_names_and_errors(server: PostgresServer) -> None:
    assert trial_database_name("bf_trial", "t1") == trial_database_name("bf_trial", "t1")
    assert trial_database_name("bf_trial", "t1") != trial_database_name("bf_trial", "t2")
    with pytest.raises(TrialDatabaseError, match="database prefix 'Bad-Prefix'"):
        trial_database_name("Bad-Prefix", "t1")
    with pytest.raises(TrialDatabaseError, match="could not copy template database 'nope'"):
        create_trial_database(server.url(), "nope", "bf_never")
    drop_trial_database(server.url(), "bf_never")  # gone already: nothing to do


def test_many_trials_starting_at_once_all_get_their_databases(server: PostgresServer) -> None:
    """The role's settings are shared rows of the server's catalogue: trials setting them at
    the same moment used to fail one another with 'tuple concurrently updated' (CI, a run of
    four trials at --concurrency 4). Eight threads making the role and copies at once, with a
    fresh role and with one that exists: every call succeeds and every copy is read-only."""
    import threading

    admin = server.url()
    role = "bf_race_reader"
    barrier = threading.Barrier(8)

    def trial(index: int) -> str:
        barrier.wait(timeout=60)
        for _ in range(10):
            ensure_reader_role(admin, role)
        name = trial_database_name("bf_race", f"trial-{index}")
        create_trial_database(admin, TEMPLATE, name, role=role)
        return name

    for _ in ("a fresh role", "a role that exists"):
        with ThreadPoolExecutor(8) as pool:
            names = list(pool.map(trial, range(8)))
        for name in names:
            with psycopg.connect(reader_conninfo(admin, name, role)) as con:
                assert con.execute("SHOW default_transaction_read_only").fetchone() == ("on",)
                assert con.execute("SELECT count(*) FROM orders").fetchone() == (ROWS,)
            drop_trial_database(admin, name)
    with psycopg.connect(admin, autocommit=True) as con:
        con.execute(f"DROP ROLE {role}")


def test_a_reader_role_with_loosened_settings_is_tightened_again(server: PostgresServer) -> None:
    """The role's settings are checked each time, not trusted because the role exists: one
    left writable (by hand, or by an older Benchforge) gets read-only transactions back."""
    admin = server.url()
    role = "bf_loosened_reader"
    ensure_reader_role(admin, role)
    with psycopg.connect(admin, autocommit=True) as con:
        con.execute(f"ALTER ROLE {role} SET default_transaction_read_only = off")
        con.execute(f"ALTER ROLE {role} RESET statement_timeout")
    name = trial_database_name("bf_loosened", "trial")
    create_trial_database(admin, TEMPLATE, name, role=role)
    try:
        with psycopg.connect(reader_conninfo(admin, name, role)) as con:
            assert con.execute("SHOW default_transaction_read_only").fetchone() == ("on",)
            assert con.execute("SHOW statement_timeout").fetchone() == ("10min",)
    finally:
        drop_trial_database(admin, name)
        with psycopg.connect(admin, autocommit=True) as con:
            con.execute(f"DROP ROLE {role}")

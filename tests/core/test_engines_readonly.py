"""Read-only database access for agent tools (``benchforge.core.engines``), DuckDB and SQLite
(PostgreSQL: test_engines_readonly_postgres.py, slow): every kind of write statement is
refused with a message for the agent, through ``query_db`` and by the engine alone, and the
database files are byte-for-byte unchanged after; reads give known numbers; large results are
truncated in the text and saved whole in the workspace; a malformed db_config.yaml names the
file and the field."""

from __future__ import annotations

import csv
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from benchforge.core.engines import (
    DbConfigError,
    QueryFailed,
    QueryLimits,
    QueryRefused,
    QueryResult,
    TrialDatabases,
    load_db_config,
    open_readonly,
    present,
)
from benchforge.core.engines.models import DbConfig
from benchforge.core.engines.statements import first_keyword, refusal, split_statements
from tests.support.engines import (
    AMOUNT_SUM,
    CREATE_INDEX,
    CREATE_ORDERS,
    CUSTOMER_C3,
    NOT_IN_DIALECT,
    ROWS,
    SEMICOLON_NOTE,
    duckdb_writes,
    flat,
    folder_state,
    order_rows,
    rows_digest,
    sqlite_writes,
)

SLOW_QUERY = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) "
    "SELECT count(*) FROM n"
)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset folder: shop.duckdb and shop.sqlite (the same orders), and db_config.yaml."""
    folder = tmp_path_factory.mktemp("dataset")
    with duckdb.connect(str(folder / "shop.duckdb")) as con:
        con.execute(CREATE_ORDERS)
        con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", order_rows())
        con.execute(CREATE_INDEX)
    con2 = sqlite3.connect(folder / "shop.sqlite")
    con2.execute(CREATE_ORDERS)
    con2.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", order_rows())
    con2.execute(CREATE_INDEX)
    con2.commit()
    con2.close()
    (folder / "db_config.yaml").write_text(
        "databases:\n"
        "  sales:\n    engine: duckdb\n    path: shop.duckdb\n"
        "  support:\n    engine: sqlite\n    path: shop.sqlite\n"
        "    description: the support desk's copy\n"
    )
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A host folder the agent's SQL names (files to read, places to write)."""
    (tmp_path / "rows.csv").write_text("order_id,customer,amount_cents,note\n1,x,1,y\n")
    return tmp_path


def _digest(kind: str, path: Path) -> str:
    if kind == "duckdb":
        with duckdb.connect(str(path), read_only=True) as con:
            return rows_digest(con.execute("SELECT * FROM orders ORDER BY order_id").fetchall())
    con = sqlite3.connect(path)
    try:
        return rows_digest(con.execute("SELECT * FROM orders ORDER BY order_id").fetchall())
    finally:
        con.close()


ENGINES = {"duckdb": ("shop.duckdb", duckdb_writes), "sqlite": ("shop.sqlite", sqlite_writes)}
WRITE_CASES = [
    (engine, kind, sql)
    for engine, (_, writes) in ENGINES.items()
    for kind, sql in flat(writes(Path("/OUTSIDE"))) + flat(NOT_IN_DIALECT.get(engine, {}))
]


@pytest.mark.parametrize("precheck", [True, False], ids=["query_db", "engine-alone"])
@pytest.mark.parametrize(("engine", "kind", "sql"), WRITE_CASES)
def test_every_write_is_refused_and_nothing_changes(
    dataset: Path, outside: Path, engine: str, kind: str, sql: str, precheck: bool
) -> None:
    file = dataset / ENGINES[engine][0]
    sql = sql.replace("/OUTSIDE", str(outside))
    if not precheck and kind in NOT_IN_DIALECT.get(engine, {}):
        pytest.skip("not a statement of this dialect: only the lexical check sees it")
    before = folder_state(dataset), folder_state(outside)
    con = open_readonly(engine, str(file), logical_name="shop", precheck=precheck)  # type: ignore[arg-type]
    try:
        outcome = con.query(sql)
        assert isinstance(outcome, QueryRefused), (sql, outcome)
        assert "read-only" in outcome.message or "one statement" in outcome.message
        assert str(dataset) not in outcome.message and "shop.duckdb" not in outcome.message
        after_read = con.query("SELECT count(*), sum(amount_cents) FROM orders")
        assert isinstance(after_read, QueryResult) and after_read.rows == [(ROWS, AMOUNT_SUM)]
    finally:
        con.close()
    assert (folder_state(dataset), folder_state(outside)) == before
    assert _digest(engine, file) == rows_digest(order_rows())


@pytest.mark.parametrize("engine", ENGINES)
def test_reads_give_known_numbers(dataset: Path, engine: str) -> None:
    con = open_readonly(engine, str(dataset / ENGINES[engine][0]), logical_name="shop")  # type: ignore[arg-type]
    try:
        total = con.query("SELECT count(*) AS n, sum(amount_cents) AS total FROM orders")
        assert isinstance(total, QueryResult)
        assert total.columns == ["n", "total"] and total.rows == [(ROWS, AMOUNT_SUM)]
        assert total.row_count == 1 and not total.truncated and total.elapsed_s >= 0
        # a ';' and comment markers inside a string literal do not split the statement
        quoted = SEMICOLON_NOTE.replace("'", "''")
        notes = con.query(f"SELECT count(*) FROM orders WHERE note = '{quoted}';")
        assert isinstance(notes, QueryResult) and notes.rows == [(ROWS // 10,)]
        c3 = con.query(
            "-- customers\nWITH c AS (SELECT * FROM orders WHERE customer = 'c3') "
            "SELECT count(*) FROM c"
        )
        assert isinstance(c3, QueryResult) and c3.rows == [(CUSTOMER_C3,)]
        capped = con.query("SELECT order_id FROM orders ORDER BY order_id", max_rows=5)
        assert isinstance(capped, QueryResult)
        assert capped.rows == [(i,) for i in range(1, 6)] and capped.truncated
        assert capped.row_count == 5
        missing = con.query("SELECT * FROM no_such_table")
        assert isinstance(missing, QueryFailed) and "no_such_table" in missing.message
        assert con.list_tables() == ["orders"]
        [orders] = con.describe()
        assert [c.name for c in orders.columns] == ["order_id", "customer", "amount_cents", "note"]
    finally:
        con.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_query_past_its_time_limit_is_stopped(dataset: Path, engine: str) -> None:
    con = open_readonly(
        engine,  # type: ignore[arg-type]
        str(dataset / ENGINES[engine][0]),
        logical_name="shop",
        limits=QueryLimits(timeout_s=0.3),
    )
    try:
        outcome = con.query(SLOW_QUERY)
        assert isinstance(outcome, QueryFailed) and "time limit of 0.3 s" in outcome.message
        after = con.query("SELECT count(*) FROM orders")  # the connection still serves
        assert isinstance(after, QueryResult) and after.rows == [(ROWS,)]
    finally:
        con.close()


def test_host_files_are_out_of_reach_of_duckdb(dataset: Path, outside: Path) -> None:
    con = open_readonly("duckdb", str(dataset / "shop.duckdb"), logical_name="shop")
    try:
        outcome = con.query(f"SELECT * FROM read_csv('{outside}/rows.csv')")
        assert isinstance(outcome, QueryRefused) and "disabled by configuration" in outcome.message
    finally:
        con.close()


def test_trial_databases_by_logical_name(dataset: Path, tmp_path: Path) -> None:
    config = load_db_config(dataset / "db_config.yaml")
    assert config.databases["support"].description == "the support desk's copy"
    with TrialDatabases(config) as dbs:
        assert dbs.names() == ["sales", "support"]
        for name in dbs.names():
            result = dbs.query_db(name, "SELECT count(*) FROM orders")
            assert isinstance(result, QueryResult) and result.rows == [(ROWS,)]
            refused = dbs.query_db(name, "DELETE FROM orders")
            assert isinstance(refused, QueryRefused)
            assert present(refused, tmp_path, db_name=name).text.startswith("Refused: ")
        unknown = dbs.query_db("warehouse", "SELECT 1")
        assert isinstance(unknown, QueryFailed)
        assert unknown.message == "no database named 'warehouse': the databases are sales, support"
        assert dbs.list_tables("support") == ["orders"]


def test_truncation_saves_the_whole_result_in_the_workspace(dataset: Path, tmp_path: Path) -> None:
    with TrialDatabases(load_db_config(dataset / "db_config.yaml")) as dbs:
        everything = dbs.query_db("sales", "SELECT * FROM orders ORDER BY order_id")
        small = dbs.query_db("sales", "SELECT order_id FROM orders ORDER BY order_id LIMIT 3")
        capped = dbs.query_db("sales", "SELECT order_id FROM orders ORDER BY order_id", 120)
    assert isinstance(everything, QueryResult) and isinstance(small, QueryResult)
    assert isinstance(capped, QueryResult)
    workspace = tmp_path / "workspace"

    fits = present(small, workspace, db_name="sales")
    assert not fits.truncated and fits.saved_file is None and not workspace.exists()
    assert fits.text.splitlines()[1:] == ["order_id", "1", "2", "3"]

    by_rows = present(everything, workspace, db_name="sales", max_rows=10)
    assert by_rows.truncated and by_rows.saved_file == "query_results/sales_001.csv"
    lines = by_rows.text.splitlines()
    assert lines[0].startswith("200 rows, 4 columns")
    assert lines[2] == "1 | c1 | 37 | NULL" and len(lines) == 1 + 1 + 10 + 1
    assert lines[-1].startswith("[truncated: 10 of 200 rows shown; all 200 rows are saved")
    assert "query_results/sales_001.csv" in lines[-1]
    with (workspace / by_rows.saved_file).open(newline="") as fh:
        saved = list(csv.reader(fh))
    assert saved[0] == ["order_id", "customer", "amount_cents", "note"]
    assert len(saved) == 1 + ROWS and saved[10] == ["10", "c3", "370", SEMICOLON_NOTE]

    by_chars = present(everything, workspace, db_name="sales", max_rows=1000, max_chars=1000)
    assert by_chars.truncated and len(by_chars.text) <= 1000
    assert by_chars.saved_file == "query_results/sales_002.csv"
    shown = int(by_chars.text.splitlines()[-1].split()[1])
    assert 0 < shown < ROWS and len(by_chars.text.splitlines()) == shown + 3

    fetch_capped = present(capped, workspace, db_name="sales", max_rows=10)
    assert fetch_capped.text.startswith("at least 120 rows")
    assert "the first 120 rows (the fetch limit stopped reading there)" in fetch_capped.text
    with pytest.raises(ValueError, match="max_chars must be at least"):
        present(small, workspace, db_name="sales", max_chars=10)


@pytest.mark.parametrize(
    ("sql", "count"),
    [
        ("SELECT 1", 1),
        ("SELECT 1;", 1),
        ("SELECT 1; ;  -- trailing\n", 1),
        ("SELECT ';' AS x", 1),
        ('SELECT 1 AS "a;b"', 1),
        ("SELECT 1 /* ; /* nested ; */ still ; */", 1),
        ("SELECT $$;$$, $tag$ ; $$ ; $tag$", 1),
        ("SELECT E'it\\'s; fine'", 1),
        ("SELECT 'it''s; fine'", 1),
        ("SELECT [a;b] FROM t", 1),
        ("SELECT 1; SELECT 2", 2),
        ("SELECT 1;DELETE FROM t;", 2),
        ("SELECT 'x'; DROP TABLE t; -- bye", 2),
        ("-- only a comment", 0),
        ("", 0),
    ],
)
def test_statements_are_split_outside_quotes_and_comments(sql: str, count: int) -> None:
    assert len(split_statements(sql)) == count


def test_the_lexical_check_names_what_it_refuses() -> None:
    assert first_keyword("/* x */ -- y\n ((select 1))") == "SELECT"
    assert refusal("SELECT 1") is None and refusal("(SELECT 1) UNION (SELECT 2)") is None
    assert refusal("with x as (select 1) select * from x") is None
    assert refusal("DELETE FROM t") == (
        "query_db is read-only: DELETE statements are refused. Only statements that read run: "
        "SELECT, WITH, VALUES, TABLE, FROM, SHOW, DESCRIBE, EXPLAIN, SUMMARIZE."
    )
    assert refusal("SELECT 1; SELECT 2") == (
        "query_db runs one statement per call and this query has 2: send them one at a time"
    )
    assert refusal("  -- nothing\n") == (
        "the query is empty: send one SQL statement that reads (e.g. SELECT ...)"
    )
    assert refusal("42") == (
        "query_db is read-only: this statement is refused. Only statements that read run: "
        "SELECT, WITH, VALUES, TABLE, FROM, SHOW, DESCRIBE, EXPLAIN, SUMMARIZE."
    )


@pytest.fixture
def config_folder(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "shop.duckdb").write_bytes(b"")
    yield tmp_path


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("databases: [", "(yaml)", "while parsing a flow"),
        ("{}", "databases", "Field required"),
        ("databases: {}", "databases", "at least 1 item"),
        ("databases:\n  s:\n    path: shop.duckdb\n", "databases.s.engine", "Field required"),
        (
            "databases:\n  s:\n    engine: mysql\n    path: x\n",
            "databases.s.engine",
            "unknown engine 'mysql': one of duckdb, sqlite, postgres",
        ),
        ("databases:\n  s:\n    engine: duckdb\n", "databases.s.path", "Field required"),
        (
            "databases:\n  s:\n    engine: duckdb\n    path: shop.duckdb\n    paht: x\n",
            "databases.s.paht",
            "Extra inputs are not permitted",
        ),
        ("databases:\n  s:\n    engine: postgres\n", "databases.s.template", "Field required"),
        (
            "databases:\n  9s:\n    engine: duckdb\n    path: shop.duckdb\n",
            "databases",
            "database names must be letters",
        ),
        (
            "databases:\n  s:\n    engine: sqlite\n    path: gone.sqlite\n",
            "databases.s.path",
            "no such file: ",
        ),
    ],
)
def test_a_malformed_db_config_names_the_file_and_the_field(
    config_folder: Path, text: str, field: str, message: str
) -> None:
    path = config_folder / "db_config.yaml"
    path.write_text(text)
    with pytest.raises(DbConfigError) as caught:
        load_db_config(path)
    assert f"{path}: {field}: " in str(caught.value) and message in str(caught.value)
    with pytest.raises(DbConfigError, match=r"db_config\.yaml: \(file\): No such file"):
        load_db_config(config_folder / "missing" / "db_config.yaml")


def test_relative_paths_resolve_against_the_config_folder(config_folder: Path) -> None:
    path = config_folder / "db_config.yaml"
    path.write_text("databases:\n  s:\n    engine: duckdb\n    path: shop.duckdb\n")
    config = load_db_config(path)
    assert config == DbConfig.model_validate(
        {"databases": {"s": {"engine": "duckdb", "path": str(config_folder / "shop.duckdb")}}}
    )


def test_messages_name_the_logical_database_only() -> None:
    from benchforge.core.engines.base import scrub

    hidden = {"x": "shop", "/data/x.duckdb": "shop", '"x"': '"shop"'}
    assert scrub('cannot execute INSERT on database "x" (/data/x.duckdb)', hidden) == (
        'cannot execute INSERT on database "shop" (shop)'
    )

"""The ``dab`` toolset on two tiny databases written here (a DuckDB and a SQLite file behind a
``db_config.yaml``): list_db shows logical names and tables, never files; query_db reads known
numbers and saves every result; every kind of write is refused as a message and changes
nothing; a long result is cut and saved whole; execute_python (in the sandbox) sees earlier
results but not the databases; return_answer ends the trial with the answer."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pydantic import SecretStr

from benchforge.agents.mock_llm import (
    MockServerConfig,
    MockServerHandle,
    ScriptedReply,
    ScriptedScript,
    ScriptedToolCall,
    run_server,
)
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registry import build_agent
from benchforge.agents.tools.dab import DAB_LIMITS, DAB_TOOLS, DabLimits, cut_output, open_databases
from benchforge.agents.tools.tool import ToolOutcome
from benchforge.agents.tools.toolsets import toolset
from benchforge.core.engines import DbConfigError
from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig
from benchforge.core.records import AgentLimits, TrialKey
from benchforge.core.sandbox import NamespaceBackend, SandboxBackend

# Physical names the agent must never see: neither the files nor their stems.
DUCKDB_FILE = "warehouse_7f3a.duckdb"
SQLITE_FILE = "legacy_crm_v2.sqlite"
DB_CONFIG = f"""\
databases:
  sales:
    engine: duckdb
    path: files/{DUCKDB_FILE}
    description: Orders by customer
  crm:
    engine: sqlite
    path: files/{SQLITE_FILE}
"""


SCRIPT_NAME = "dab-revenue"
JOIN = (
    "o = results['sales_001']\n"
    "o['account_key'] = 'C-' + o['customer_id'].astype(str)\n"
    "j = o.merge(results['crm_001'], on='account_key').groupby('region')['amount_usd'].sum()\n"
    "print(j.idxmax(), j.max())\n"
)
SCRIPT = ScriptedScript(
    replies=[
        ScriptedReply(tool_calls=[ScriptedToolCall(name="list_db", arguments={})]),
        ScriptedReply(
            tool_calls=[
                ScriptedToolCall(
                    name="query_db", arguments={"db": "sales", "sql": "delete from orders"}
                ),
                ScriptedToolCall(
                    name="query_db",
                    arguments={"db": "sales", "sql": "select customer_id, amount_usd from orders"},
                ),
                ScriptedToolCall(
                    name="query_db",
                    arguments={"db": "crm", "sql": "select account_key, region from accounts"},
                ),
            ]
        ),
        ScriptedReply(
            tool_calls=[ScriptedToolCall(name="execute_python", arguments={"code": JOIN})]
        ),
        ScriptedReply(
            tool_calls=[ScriptedToolCall(name="return_answer", arguments={"answer": "AMER"})]
        ),
    ]
)


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    config = MockServerConfig(scripts={SCRIPT_NAME: SCRIPT}, builtin_scripts=False)
    with run_server(config=config) as handle:
        yield handle


@pytest.fixture(scope="module")
def sandbox() -> SandboxBackend:
    """The namespace sandbox, as tests/agents/test_react_da.py uses it."""
    backend = NamespaceBackend()
    caps = backend.capabilities()
    if not caps.usable:
        message = f"namespace sandbox unavailable on this machine: {caps.reason}"
        if os.environ.get("BENCHFORGE_ALLOW_NO_NAMESPACES") == "1":
            pytest.skip(message)
        pytest.fail(message)
    return backend


def _databases(data: Path) -> None:
    """sales.orders: 3 orders (amounts 120.5 + 80 + 42.25 = 242.75), sales.events: 500 rows;
    crm.accounts: 3 accounts keyed 'C-1'.. (the orders' customer_id with a prefix)."""
    files = data / "files"
    files.mkdir(parents=True)
    con = duckdb.connect(str(files / DUCKDB_FILE))
    con.execute(
        "create table orders as select * from (values (10, 1, 120.5), (11, 2, 80.0), "
        "(12, 2, 42.25)) t(order_id, customer_id, amount_usd)"
    )
    con.execute("create table events as select range as event_id, 'x' as kind from range(500)")
    con.close()
    lite = sqlite3.connect(files / SQLITE_FILE)
    lite.execute("create table accounts (account_key text primary key, name text, region text)")
    lite.executemany(
        "insert into accounts values (?, ?, ?)",
        [("C-1", "Acme", "EMEA"), ("C-2", "Globex", "AMER"), ("C-3", "Initech", "AMER")],
    )
    lite.commit()
    lite.close()
    (data / "db_config.yaml").write_text(DB_CONFIG)


def _env(tmp_path: Path, sandbox: SandboxBackend, **limits: Any) -> TaskEnvironment:
    key = TrialKey(
        suite="dab-test",
        task_id="revenue-by-region",
        task_version="1",
        agent="react",
        agent_config_hash="0" * 12,
        model=f"mock-script:{SCRIPT_NAME}",
        epoch=0,
    )
    data = tmp_path / "data"
    if not data.exists():
        _databases(data)
    return TaskEnvironment(
        key=key,
        family="dab_query",
        prompt="Which region brings the most order revenue?",
        workspace_path=tmp_path / "ws",
        data_dir=data,
        tools=toolset("dab"),
        limits=AgentLimits(**{"action_timeout_s": 60.0, **limits}),
        sandbox=sandbox,
        submission="answer",
    )


def _call(env: TaskEnvironment, name: str, **arguments: Any) -> ToolOutcome:
    return asyncio.run(env.tools.call(env, name, arguments))


def _digests(data: Path) -> dict[str, str]:
    return {
        p.relative_to(data).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data.rglob("*"))
        if p.is_file()
    }


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_the_toolset_and_dab_limits() -> None:
    assert DAB_TOOLS == ("list_db", "read_doc", "query_db", "execute_python", "return_answer")
    dab = (DAB_LIMITS.max_result_chars, DAB_LIMITS.tool_call_timeout_s)
    assert dab == (10_000, 600.0)
    limits = DAB_LIMITS.agent_limits()
    assert (limits.max_rounds, limits.wall_s, limits.action_timeout_s) == (100, 3600.0, 600.0)
    assert "list_db" in toolset("dab").instructions


def test_each_call_runs_under_the_trials_action_timeout_capped_at_dabs(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    for action_timeout_s, query_timeout_s in ((60.0, 60.0), (1200.0, 600.0)):
        env = _env(tmp_path, sandbox, action_timeout_s=action_timeout_s)
        with open_databases(env) as databases:
            assert databases.limits.timeout_s == query_timeout_s
            assert databases.limits.fetch_rows == DAB_LIMITS.fetch_rows
    with pytest.raises(ValueError, match="max_result_chars"):
        DabLimits(max_result_chars=10)


# --- list_db -------------------------------------------------------------------------------


def test_list_db_names_databases_and_tables_never_files(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox)
    listed = _call(env, "list_db")
    assert listed.ok
    assert listed.output == (
        "sales (duckdb): Orders by customer\n  tables: events, orders\ncrm (sqlite)\n"
        "  tables: accounts"
    )
    for hidden in (str(tmp_path), "files", "warehouse_7f3a", "legacy_crm_v2", ".duckdb"):
        assert hidden not in listed.output
    one = _call(env, "list_db", db="crm")
    assert one.ok and one.output == "crm (sqlite)\n  tables: accounts"
    unknown = _call(env, "list_db", db="warehouse_7f3a")
    assert not unknown.ok
    assert (
        unknown.output == "error: no database named 'warehouse_7f3a': the databases are sales, crm"
    )


def test_a_broken_db_config_is_the_tasks_error_not_the_agents(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox)
    (tmp_path / "data" / "db_config.yaml").write_text("databases:\n  sales:\n    engine: oracle\n")
    with pytest.raises(DbConfigError, match="unknown engine 'oracle'"):
        _call(env, "list_db")
    no_data = _env(tmp_path, sandbox)
    no_data.data_dir = None
    result = _call(no_data, "query_db", db="sales", sql="select 1")
    assert not result.ok and result.output == "error: this task has no databases"


# --- query_db ------------------------------------------------------------------------------


def test_query_db_reads_and_saves_every_result(tmp_path: Path, sandbox: SandboxBackend) -> None:
    env = _env(tmp_path, sandbox)
    total = _call(env, "query_db", db="sales", sql="select sum(amount_usd) as revenue from orders")
    assert total.ok, total.output
    lines = total.output.splitlines()
    assert lines[1:3] == ["revenue", "242.75"]
    assert (
        lines[3]
        == "[saved as query_results/sales_001.csv; in execute_python: results['sales_001']]"
    )
    assert _rows(env.workspace / "query_results/sales_001.csv") == [["revenue"], ["242.75"]]
    accounts = _call(
        env, "query_db", db="crm", sql="select account_key, region from accounts order by 1"
    )
    assert accounts.ok and accounts.output.splitlines()[1:5] == [
        "account_key | region",
        "C-1 | EMEA",
        "C-2 | AMER",
        "C-3 | AMER",
    ]
    assert "query_results/crm_001.csv" in accounts.output
    again = _call(env, "query_db", db="sales", sql="select count(*) as n from orders")
    assert again.ok and "query_results/sales_002.csv" in again.output
    wrong = _call(env, "query_db", db="sales", sql="select nope from orders")
    assert not wrong.ok and not wrong.terminate and wrong.output.startswith("Error:")
    assert "nope" in wrong.output and str(tmp_path) not in wrong.output
    unknown = _call(env, "query_db", db="inventory", sql="select 1")
    assert not unknown.ok and "the databases are sales, crm" in unknown.output
    empty = _call(env, "query_db", db="sales", sql="  ")
    assert not empty.ok and empty.output == "error: the query is empty"
    assert sorted(p.name for p in (env.workspace / "query_results").iterdir()) == [
        "crm_001.csv",
        "sales_001.csv",
        "sales_002.csv",
    ]


WRITES = {
    "sales": [
        "insert into orders values (13, 3, 1.0)",
        "update orders set amount_usd = 0",
        "delete from orders",
        "create table stolen as select 1 as x",
        "create temp table scratch as select 1 as x",
        "create view v as select 1 as x",
        "drop table orders",
        "alter table orders add column note varchar",
        "truncate orders",
        "copy orders to 'out.csv'",
        "attach 'other.duckdb' as other",
        "install httpfs",
        "set enable_external_access = true",
        "checkpoint",
        "select 1; drop table orders",
        "with more as (select 13, 3, 1.0) insert into orders select * from more",
    ],
    "crm": [
        "insert into accounts values ('C-4', 'Umbrella', 'APAC')",
        "update accounts set region = 'EMEA'",
        "delete from accounts",
        "create table stolen (x int)",
        "create temp table scratch (x int)",
        "drop table accounts",
        "alter table accounts add column note text",
        "attach database 'other.sqlite' as other",
        "pragma query_only = 0",
        "vacuum",
        "begin immediate",
        "replace into accounts values ('C-1', 'Evil', 'EMEA')",
        "select 1; delete from accounts",
        "with more as (select 'C-4', 'U', 'APAC') insert into accounts select * from more",
    ],
}


def test_every_write_is_refused_as_a_message_and_nothing_changes(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox)
    data = tmp_path / "data"
    before = _digests(data)
    for db, writes in WRITES.items():
        for sql in writes:
            result = _call(env, "query_db", db=db, sql=sql)
            assert not result.ok and not result.terminate, (db, sql, result.output)
            assert result.output.startswith("Refused: "), (db, sql, result.output)
            assert str(tmp_path) not in result.output and "warehouse_7f3a" not in result.output
    assert _digests(data) == before  # no file changed, none appeared
    assert not (env.workspace / "query_results").exists()  # no result was saved: none ran
    assert (
        not (env.workspace / "out.csv").exists() and not (env.workspace / "other.duckdb").exists()
    )
    orders = _call(
        env, "query_db", db="sales", sql="select count(*) as n, sum(amount_usd) as s from orders"
    )
    assert orders.output.splitlines()[1:3] == ["n | s", "3 | 242.75"]
    accounts = _call(
        env, "query_db", db="crm", sql="select count(*) as n from accounts where region = 'AMER'"
    )
    assert accounts.output.splitlines()[1:3] == ["n", "2"]


def test_a_long_result_is_cut_and_saved_whole(tmp_path: Path, sandbox: SandboxBackend) -> None:
    env = _env(tmp_path, sandbox)
    many = _call(env, "query_db", db="sales", sql="select event_id, kind from events order by 1")
    assert many.ok
    lines = many.output.splitlines()
    assert lines[0].startswith("500 rows, 2 columns")
    assert lines[1:3] == ["event_id | kind", "0 | x"]
    assert lines[-2] == f"{DAB_LIMITS.max_result_rows - 1} | x"
    assert lines[-1] == (
        f"[truncated: {DAB_LIMITS.max_result_rows} of 500 rows shown; all 500 rows are saved in "
        "your workspace as query_results/sales_001.csv (CSV, header row)]"
    )
    saved = _rows(env.workspace / "query_results/sales_001.csv")
    assert len(saved) == 501 and saved[0] == ["event_id", "kind"] and saved[-1] == ["499", "x"]
    # few rows, but over DAB's characters: cut by characters, saved whole
    wide = _call(
        env, "query_db", db="sales", sql="select order_id, repeat('ab', 3000) as blob from orders"
    )
    assert wide.ok and len(wide.output) <= DAB_LIMITS.max_result_chars
    assert "saved in your workspace as query_results/sales_002.csv" in wide.output
    blob = _rows(env.workspace / "query_results/sales_002.csv")
    assert len(blob) == 4 and all(len(row[1]) == 6000 for row in blob[1:])


# --- execute_python ------------------------------------------------------------------------


def test_execute_python_sees_earlier_results_not_the_databases(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox, action_timeout_s=30.0)
    _call(env, "query_db", db="sales", sql="select customer_id, amount_usd from orders")
    _call(env, "query_db", db="crm", sql="select account_key, region from accounts")
    data = tmp_path / "data"
    code = (
        "import os, pandas as pd\n"
        "print(sorted(results))\n"
        "orders, accounts = results['sales_001'], results['crm_001']\n"
        "orders['account_key'] = 'C-' + orders['customer_id'].astype(str)\n"
        "joined = orders.merge(accounts, on='account_key')\n"
        "by_region = joined.groupby('region')['amount_usd'].sum()\n"
        "print('top', by_region.idxmax(), by_region.max())\n"
        "print('csv', pd.read_csv('query_results/sales_001.csv')['amount_usd'].sum())\n"
        f"print('data visible', os.path.exists({str(data)!r}))\n"
        "print('data named', any(k.startswith('BENCHFORGE_DATA') for k in os.environ))\n"
    )
    result = _call(env, "execute_python", code=code)
    assert result.ok, result.output
    assert "['crm_001', 'sales_001']" in result.output
    assert "top AMER 122.25" in result.output and "csv 242.75" in result.output
    assert "data visible False" in result.output and "data named False" in result.output
    missing = _call(env, "execute_python", code="results['sales_009']")
    assert not missing.ok and missing.exit_code == 1
    assert "KeyError" in missing.output and "crm_001, sales_001" in missing.output
    assert 'File "<code>", line 1' in missing.output and "exec(" not in missing.output


def test_execute_python_output_over_the_limit_is_saved_whole(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox, action_timeout_s=30.0)
    result = _call(
        env, "execute_python", code="for i in range(3000):\n    print(f'line {i:05d}')\n"
    )
    assert result.ok
    body = result.output.split("\n", 1)[1]  # after "exit code 0"
    note, tail = body.split("\n", 1)
    assert len(body) <= DAB_LIMITS.max_result_chars and len(note) > 100
    assert note.startswith(f"[truncated: the last {len(tail)} of 33000 characters shown;")
    assert "saved in your workspace as tool_outputs/execute_python_001.txt" in body
    assert body.endswith("line 02999\n") and "line 00000" not in body
    whole = (env.workspace / "tool_outputs/execute_python_001.txt").read_text()
    assert whole.startswith("line 00000\n") and whole.count("\n") == 3000
    clipped = cut_output(env, "y" * 20_000, "execute_python", clipped=True)
    assert "the last part of the output that was kept is saved" in clipped
    assert (env.workspace / "tool_outputs/execute_python_002.txt").read_text() == "y" * 20_000
    assert cut_output(env, "short", "execute_python") == "short"


def test_execute_python_stops_at_the_trials_action_timeout(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox, action_timeout_s=1.0)
    result = _call(env, "execute_python", code="import time\ntime.sleep(30)\n")
    assert result.timed_out and not result.ok and "ran past 1 s" in result.output


# --- return_answer -------------------------------------------------------------------------


def test_return_answer_ends_the_trial_with_the_answer(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox)
    empty = _call(env, "return_answer", answer="  ")
    assert not empty.ok and not empty.terminate and empty.output == "error: the answer is empty"
    done = _call(env, "return_answer", answer="AMER (122.25)")
    assert done.ok and done.terminate and done.answer == "AMER (122.25)"


def test_read_doc_shows_the_schema_and_the_hints_only(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox)
    assert env.data_dir is not None
    (env.data_dir / "hints.md").write_text("# Hints\ncrm.accounts.account_key is 'C-' + id\n")
    (env.data_dir / "schema.md").write_text("# Schema\nsales.orders(order_id, ...)\n")
    hints = _call(env, "read_doc", doc="hints")
    assert hints.ok and hints.output == "# Hints\ncrm.accounts.account_key is 'C-' + id\n"
    schema = _call(env, "read_doc", doc="schema")
    assert schema.ok and schema.output.startswith("# Schema")
    for other in ("db_config", "db_config.yaml", "../perturbations.json", "hints.md"):
        refused = _call(env, "read_doc", doc=other)
        assert not refused.ok
        assert refused.output == f"error: no document {other!r}: the documents are schema, hints"
    (env.data_dir / "hints.md").unlink()
    missing = _call(env, "read_doc", doc="hints")
    assert not missing.ok and missing.output == "error: this dataset has no hints document"


# --- the react agent, through the toolset ---------------------------------------------------


def test_react_answers_through_the_dab_toolset(
    tmp_path: Path, sandbox: SandboxBackend, mock: MockServerHandle
) -> None:
    env = _env(tmp_path, sandbox, action_timeout_s=30.0)
    config = LlmConfig(
        role="agent",
        model=f"mock-script:{SCRIPT_NAME}",
        base_url=mock.url,
        api_key=SecretStr("k"),
        timeout_s=10.0,
    )
    agent = build_agent("react")

    async def run() -> AgentOutcome:
        async with LlmClient(config) as client:
            env.llm = LlmClientView(client, steps=env.trajectory, epoch=0)
            return await agent.run(env)

    outcome = asyncio.run(asyncio.wait_for(run(), timeout=120))
    assert outcome.termination == "finished" and outcome.answer == "AMER"
    tools = [(s.name, s.ok) for s in env.trajectory.close("done") if s.kind == "tool"]
    assert tools == [
        ("list_db", True),
        ("query_db", False),  # the refused delete: told, and the trial goes on
        ("query_db", True),
        ("query_db", True),
        ("execute_python", True),
        ("return_answer", True),
    ]
    python_step = next(s for s in env.trajectory.steps if s.name == "execute_python")
    assert python_step.output is not None and "AMER 122.25" in python_step.output

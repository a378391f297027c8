"""react-da and its ``da`` toolset, offline: the shipped mock script drives the agent end to
end on a tiny analysis database (report and chart written), the SQL tool cannot change the
database or touch files, the file tools stay inside the workspace, and the code tools run in
the sandbox (the request it gets, and containment the host would not give)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pydantic import SecretStr

from benchforge.agents.builtin import ReactAgent, ReactDaConfig
from benchforge.agents.mock_llm import (
    MockServerConfig,
    MockServerHandle,
    load_builtin_scripts,
    run_server,
)
from benchforge.agents.protocol import AgentOutcome, TaskEnvironment
from benchforge.agents.registry import agent_entry, build_agent
from benchforge.agents.tools.da import DA_TOOLS
from benchforge.agents.tools.tool import ToolOutcome
from benchforge.agents.tools.toolsets import toolset
from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig
from benchforge.core.records import AgentLimits, TrialKey
from benchforge.core.sandbox import (
    NamespaceBackend,
    SandboxBackend,
    SandboxRequest,
    SandboxResult,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    with run_server(config=MockServerConfig()) as handle:
        yield handle


@pytest.fixture(scope="module")
def sandbox() -> SandboxBackend:
    """The namespace sandbox: containment is part of what is tested, so a machine without it
    fails unless BENCHFORGE_ALLOW_NO_NAMESPACES=1 says that is known (as tests/core does)."""
    backend = NamespaceBackend()
    caps = backend.capabilities()
    if not caps.usable:
        message = f"namespace sandbox unavailable on this machine: {caps.reason}"
        if os.environ.get("BENCHFORGE_ALLOW_NO_NAMESPACES") == "1":
            pytest.skip(message)
        pytest.fail(message)
    return backend


def _database(data: Path) -> Path:
    """customers (3 rows), orders (3 rows), events (120 rows): the first table by name is
    customers."""
    data.mkdir(parents=True)
    path = data / "analysis.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "create table customers as select * from (values (1, 'Acme', 'EMEA'), "
        "(2, 'Globex', 'AMER'), (3, 'Initech', 'AMER')) t(customer_id, name, region)"
    )
    con.execute(
        "create table orders as select * from (values (10, 1, 120.5), (11, 2, 80.0), "
        "(12, 2, 42.25)) t(order_id, customer_id, amount_usd)"
    )
    con.execute("create table events as select range as event_id from range(120)")
    con.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _env(
    tmp_path: Path,
    sandbox: SandboxBackend,
    llm: LlmClientView | None = None,
    **limits: Any,
) -> TaskEnvironment:
    key = TrialKey(
        suite="da-test",
        task_id="tiny-question",
        task_version="1",
        agent="react-da",
        agent_config_hash="0" * 12,
        model="mock-script:react-da-report",
        epoch=0,
    )
    data = tmp_path / "data"
    if not data.exists():
        _database(data)
    return TaskEnvironment(
        key=key,
        family="da_open",
        prompt="Which region brings the most order revenue?",
        workspace_path=tmp_path / "ws",
        data_dir=data,
        tools=toolset("da"),
        limits=AgentLimits(**{"action_timeout_s": 60.0, **limits}),
        sandbox=sandbox,
        llm=llm,
        submission="report",
    )


def _call(env: TaskEnvironment, name: str, **arguments: Any) -> ToolOutcome:
    return asyncio.run(env.tools.call(env, name, arguments))


# --- the agent, end to end -------------------------------------------------------------------


def test_react_da_is_registered_with_the_da_toolset() -> None:
    assert toolset("da").names == DA_TOOLS == ("sql", "python", "write_file", "read_file", "finish")
    agent = build_agent("react-da")
    assert isinstance(agent, ReactAgent) and agent.uses_model and agent.name == "react-da"
    assert agent.supports_toolset("da") and not agent.supports_toolset("de")
    assert agent.config == ReactDaConfig()
    assert agent.config.system_prompt == toolset("da").instructions
    entry = agent_entry("react-da")  # offline, a run naming no model uses the shipped script
    assert entry is not None and entry.mock_model == "mock-script:react-da-report"
    assert "react-da-report" in load_builtin_scripts()[0]
    assert "report/report.md" in agent.config.system_prompt
    names = [s["function"]["name"] for s in toolset("da").schemas()]
    assert names == list(DA_TOOLS)


def test_the_mock_script_writes_a_report_and_a_chart(
    tmp_path: Path, mock: MockServerHandle, sandbox: SandboxBackend
) -> None:
    config = LlmConfig(
        role="agent",
        model="mock-script:react-da-report",
        base_url=mock.url,
        api_key=SecretStr("k"),
        timeout_s=10.0,
    )
    env = _env(tmp_path, sandbox)
    database = env.data_dir / "analysis.duckdb"  # type: ignore[operator]
    before = _digest(database)

    async def run() -> AgentOutcome:
        async with LlmClient(config) as client:
            env.llm = LlmClientView(client, steps=env.trajectory, epoch=0)
            return await build_agent("react-da").run(env)

    outcome = asyncio.run(asyncio.wait_for(run(), timeout=60))
    assert outcome.termination == "finished", outcome
    assert "report/report.md" in (outcome.answer or "")
    steps = env.trajectory.close("done")
    tools = [s for s in steps if s.kind == "tool"]
    assert [s.name for s in tools] == ["sql", "sql", "python", "write_file", "finish"]
    assert all(s.ok for s in tools), [(s.name, s.output) for s in tools if not s.ok]
    assert len([s for s in steps if s.kind == "model"]) == 5
    listing, first_rows, charted = (tools[0].output or ""), tools[1].output, tools[2].output
    rows = [line.split("|") for line in listing.splitlines()[3:6]]
    assert [[c.strip() for c in row] for row in rows] == [
        [name, "BASE TABLE"] for name in ("customers", "events", "orders")
    ]
    # the first table by name, whatever it is called: customers
    assert "customer_id | name    | region" in (first_rows or "")
    assert "Initech" in (first_rows or "") and "(3 rows)" in (first_rows or "")
    assert "events: 120 rows" in (charted or "") and "orders: 3 rows" in (charted or "")
    report = env.workspace / "report" / "report.md"
    assert report.read_text(encoding="utf-8").startswith("# Analysis report")
    assert "](chart.png)" in report.read_text(encoding="utf-8")
    assert (env.workspace / "report" / "chart.png").read_bytes().startswith(PNG_MAGIC)
    # the chart code ran headless and left no matplotlib cache in the workspace
    assert sorted(p.name for p in env.workspace.iterdir()) == ["report"]
    assert _digest(database) == before


# --- sql: read-only ---------------------------------------------------------------------------


def test_sql_returns_a_capped_text_table(tmp_path: Path, sandbox: SandboxBackend) -> None:
    env = _env(tmp_path, sandbox)
    result = _call(
        env,
        "sql",
        query="select c.region, round(sum(o.amount_usd), 2) as revenue from orders o "
        "join customers c using (customer_id) group by 1 order by 2 desc",
    )
    assert result.ok, result.output
    lines = result.output.splitlines()
    assert lines[1:5] == [
        "region | revenue",
        "-------+--------",
        "AMER   | 122.25",
        "EMEA   | 120.50",
    ]
    capped = _call(env, "sql", query="select * from events order by event_id", max_rows=10)
    assert capped.ok and "(10 rows; more not shown" in capped.output
    assert "9" in capped.output.splitlines()[-2] and "\n10\n" not in capped.output
    bad = _call(env, "sql", query="select * from events", max_rows=0)
    assert not bad.ok and "max_rows" in bad.output
    wrong = _call(env, "sql", query="select nope from orders")
    assert not wrong.ok and wrong.exit_code == 1 and "nope" in wrong.output


def test_sql_cannot_change_the_database_or_touch_files(
    tmp_path: Path, sandbox: SandboxBackend
) -> None:
    env = _env(tmp_path, sandbox)
    database = env.data_dir / "analysis.duckdb"  # type: ignore[operator]
    before = _digest(database)
    writes = {
        "create table stolen as select 1 as x": "read-only",
        "insert into orders values (13, 3, 1.0)": "read-only",
        "update orders set amount_usd = 0": "read-only",
        "drop table orders": "read-only",
        "copy orders to 'out.csv'": "disabled",
        "attach 'other.duckdb' as other": "disabled",
        "select * from read_csv('/etc/passwd')": "disabled",
        "set enable_external_access = true": "external access",
    }
    for query, why in writes.items():
        result = _call(env, "sql", query=query)
        assert not result.ok, query
        assert why in result.output, (query, result.output)
    assert _digest(database) == before
    assert sorted(p.name for p in env.workspace.iterdir()) == []  # no out.csv, no other.duckdb
    count = _call(env, "sql", query="select count(*) as n from orders").output
    assert count.splitlines()[1:5] == ["n", "-", "3", "(1 rows)"]  # the insert never landed


# --- file tools: inside the workspace ---------------------------------------------------------


def test_file_tools_stay_inside_the_workspace(tmp_path: Path, sandbox: SandboxBackend) -> None:
    env = _env(tmp_path, sandbox)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("gold answer")
    (env.workspace / "escape").symlink_to(outside)
    refused = {
        str(tmp_path / "x.md"): "relative",
        "/etc/passwd": "relative",
        "~/x.md": "relative",
        "../x.md": "'..'",
        "report/../../x.md": "'..'",
        "escape/secret.txt": "outside the workspace",
        "": "relative",
    }
    for path, why in refused.items():
        for name, extra in (("write_file", {"content": "x"}), ("read_file", {})):
            result = _call(env, name, path=path, **extra)
            assert not result.ok and why in result.output, (name, path, result.output)
    assert (outside / "secret.txt").read_text() == "gold answer"
    assert not (tmp_path / "x.md").exists()
    wrote = _call(env, "write_file", path="report/notes/a.md", content="# Notes\n")
    assert wrote.ok and (env.workspace / "report/notes/a.md").read_text() == "# Notes\n"
    assert _call(env, "read_file", path="report/notes/a.md").output == "# Notes\n"
    (env.workspace / "report" / "blob.bin").write_bytes(b"\xff\xfe\x00")
    assert "binary file (3 bytes)" in _call(env, "read_file", path="report/blob.bin").output


def test_finish_needs_the_report(tmp_path: Path, sandbox: SandboxBackend) -> None:
    env = _env(tmp_path, sandbox)
    early = _call(env, "finish", summary="done")
    assert not early.ok and not early.terminate and "report/report.md" in early.output
    _call(env, "write_file", path="report/report.md", content="# Answer\n\nAMER leads.\n")
    done = _call(env, "finish", summary="AMER leads")
    assert done.ok and done.terminate and done.answer == "AMER leads"
    unknown = _call(env, "bash", command="ls")
    assert not unknown.ok and "unknown tool" in unknown.output


# --- python: in the sandbox -------------------------------------------------------------------


class Recording:
    """A sandbox backend that records each request and runs it on the real one."""

    def __init__(self, inner: SandboxBackend) -> None:
        self.inner = inner
        self.name = inner.name
        self.requests: list[SandboxRequest] = []

    def isolation(self) -> Any:
        return self.inner.isolation()

    def run(self, request: SandboxRequest) -> SandboxResult:
        self.requests.append(request)
        return self.inner.run(request)

    async def run_async(self, request: SandboxRequest) -> SandboxResult:
        self.requests.append(request)
        return await self.inner.run_async(request)


def test_python_runs_in_the_sandbox(tmp_path: Path, sandbox: SandboxBackend) -> None:
    recording = Recording(sandbox)
    env = _env(tmp_path, recording, action_timeout_s=20.0)
    data = env.data_dir
    assert data is not None
    env.hidden = [env.workspace / "gold"]
    (env.workspace / "gold").mkdir()
    (env.workspace / "gold" / "answer.txt").write_text("AMER 122.25")
    code = (
        "import os, duckdb\n"
        "print('cwd', os.getcwd())\n"
        "print('backend', os.environ['MPLBACKEND'])\n"
        "con = duckdb.connect(os.environ['ANALYSIS_DB'], read_only=True)\n"
        "print('orders', con.execute('select count(*) from orders').fetchone()[0])\n"
        "print('gold', os.listdir('gold'))\n"
        f"for target in [{str(data / 'dropped.txt')!r}, {str(tmp_path / 'host.txt')!r}]:\n"
        "    try:\n"
        "        open(target, 'w').write('x')\n"
        "        print('wrote', target)\n"
        "    except OSError as exc:\n"
        "        print('refused', type(exc).__name__)\n"
    )
    result = _call(env, "python", code=code)
    assert result.ok, result.output
    assert f"cwd {env.workspace}" in result.output
    assert "backend Agg" in result.output and "orders 3" in result.output
    assert "gold []" in result.output  # masked by the sandbox, there on the host
    assert result.output.count("refused") == 2 and "wrote" not in result.output
    assert not (data / "dropped.txt").exists() and not (tmp_path / "host.txt").exists()
    request = recording.requests[-1]
    assert request.argv == [sys.executable, "-"] and request.stdin == code
    assert request.workspace == env.workspace and data in request.read_only
    assert request.env["ANALYSIS_DB"] == str(data / "analysis.duckdb")
    assert request.limits.wall_s == 20.0 and not request.network
    # a script file of the workspace runs the same way
    _call(env, "write_file", path="analysis.py", content="print(6 * 7)\n")
    by_path = _call(env, "python", path="analysis.py")
    assert by_path.ok and by_path.output.endswith("42\n")
    assert recording.requests[-1].argv == [sys.executable, str(env.workspace / "analysis.py")]
    both = _call(env, "python", code="print(1)", path="analysis.py")
    assert not both.ok and "exactly one" in both.output


def test_python_is_stopped_at_the_action_timeout(tmp_path: Path, sandbox: SandboxBackend) -> None:
    env = _env(tmp_path, sandbox, action_timeout_s=1.0)
    result = _call(env, "python", code="import time\ntime.sleep(30)\n")
    assert result.timed_out and not result.ok
    assert "ran past 1 s" in result.output

"""The mock's shipped scripts (agents/mock_llm/scripts) and file references in scripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import openai
import pytest
import yaml

import benchforge.agents.mock_llm.config as mock_config
from benchforge.agents.mock_llm import (
    BUILTIN_SCRIPTS_DIR,
    PROJECT_ROOT,
    MockServerConfig,
    MockServerHandle,
    ScriptedScript,
    ScriptedToolCall,
    ScriptFileError,
    ToolSequenceScript,
    load_builtin_scripts,
    load_script,
    load_scripts_dir,
    run_server,
)
from benchforge.core.errors import ConfigError
from tests.paths import REPO_ROOT

MINI_TASK = REPO_ROOT / "tests/fixtures/task_specs/de-mini/mini-evol-won-by-industry"
CRM_SLA_TASK = REPO_ROOT / "task_specs/de-crm/crm-evol-support-response-sla"

SHIPPED = {
    "react-de-mini-solve",
    "react-de-mini-mistakes",
    "react-de-crm-sla-solve",
    "react-de-loop",
    "single-call",
    "ds-star-lake-solve",
    "ds-star-lake-mistakes",
    "ds-guru-lake-solve",
    "react-dab-crm-substring",
}
REACT_DE_TOOLS = {"bash", "create_file", "edit_file", "run_dbt", "terminate"}

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for name in sorted(REACT_DE_TOOLS)
]


def _calls(script: ScriptedScript | ToolSequenceScript) -> list[ScriptedToolCall]:
    if isinstance(script, ToolSequenceScript):
        return list(script.tool_calls)
    return [call for reply in script.replies for call in reply.tool_calls]


def _args(call: ScriptedToolCall) -> dict[str, Any]:
    args = json.loads(call.arguments_json())
    assert isinstance(args, dict)
    return args


def _overlay(task: Path) -> dict[str, str]:
    """``repo/<path>`` -> text of every file of the task's gold_v2 overlay."""
    spec = yaml.safe_load((task / "task.yaml").read_text(encoding="utf-8"))
    # A task that deletes files would need rm calls the solve scripts do not make.
    assert not spec.get("removed"), spec["removed"]
    overlay = task / spec.get("gold_v2", "gold_v2")
    files = sorted(p for p in overlay.rglob("*") if p.is_file())
    assert files
    return {
        f"repo/{p.relative_to(overlay).as_posix()}": p.read_text(encoding="utf-8") for p in files
    }


@pytest.fixture(scope="module")
def shipped() -> dict[str, ScriptedScript | ToolSequenceScript]:
    return load_scripts_dir(BUILTIN_SCRIPTS_DIR)


# --- file references -------------------------------------------------------------------------


def test_every_shipped_script_loads_in_a_checkout(
    shipped: dict[str, ScriptedScript | ToolSequenceScript],
) -> None:
    assert set(shipped) >= SHIPPED
    scripts, unavailable = load_builtin_scripts()
    assert unavailable == {}
    assert set(scripts) == set(shipped)
    assert MockServerConfig().all_scripts().keys() >= SHIPPED
    assert (PROJECT_ROOT / "task_specs").resolve() == (REPO_ROOT / "task_specs").resolve()


def test_file_references_are_replaced_by_the_file_text(tmp_path: Path) -> None:
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "model.sql").write_text("select 1 as x\n", encoding="utf-8")
    (tmp_path / "files" / "call.json").write_text('{"command": "ls"}', encoding="utf-8")
    project_file = "tests/fixtures/mini_dbt/models/marts/dim_accounts.sql"
    script = tmp_path / "refs.yaml"
    script.write_text(
        "replies:\n"
        "  - tool_calls:\n"
        "      - name: create_file\n"
        "        arguments:\n"
        "          path: repo/a.sql\n"
        f"          content: {{$file: {project_file}}}\n"
        "      - name: create_file\n"
        "        arguments:\n"
        "          path: repo/b.sql\n"
        "          content: {$script_file: files/model.sql}\n"
        "          nested: [{$script_file: files/model.sql}]\n"
        "      - name: bash\n"
        "        arguments: {$script_file: files/call.json}\n",
        encoding="utf-8",
    )
    loaded = load_script(script)
    a, b, raw = _calls(loaded)
    assert _args(a)["content"] == (REPO_ROOT / project_file).read_text(encoding="utf-8")
    assert _args(b) == {
        "path": "repo/b.sql",
        "content": "select 1 as x\n",
        "nested": ["select 1 as x\n"],
    }
    assert raw.arguments == '{"command": "ls"}'
    # $file resolves against the given project root.
    (tmp_path / project_file).parent.mkdir(parents=True)
    (tmp_path / project_file).write_text("select 2", encoding="utf-8")
    again = load_script(script, project_root=tmp_path)
    assert _args(_calls(again)[0])["content"] == "select 2"


def test_a_missing_file_is_a_config_error_naming_script_and_field(tmp_path: Path) -> None:
    script = tmp_path / "broken.yaml"
    script.write_text(
        "replies:\n"
        "  - content: hi\n"
        "  - tool_calls:\n"
        "      - name: create_file\n"
        "        arguments: {path: repo/x.sql, content: {$file: no/such/file.sql}}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_script(script)
    assert isinstance(info.value, ScriptFileError)
    message = str(info.value)
    assert str(script) in message
    assert "replies.1.tool_calls.0.arguments.content" in message
    assert "no/such/file.sql" in message
    with pytest.raises(ScriptFileError, match=r"broken\.yaml"):
        load_scripts_dir(tmp_path)


def test_a_malformed_file_reference_is_a_config_error(tmp_path: Path) -> None:
    script = tmp_path / "odd.yaml"
    script.write_text(
        "replies:\n  - tool_calls:\n      - name: bash\n"
        "        arguments: {command: {$file: a.txt, extra: 1}}\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError, match=r"odd\.yaml: replies\.0\.tool_calls\.0\.arguments\.command"
    ):
        load_script(script)


def test_shipped_scripts_with_missing_files_only_fail_when_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An installed package: the project root has none of the referenced task files.
    monkeypatch.setattr(mock_config, "PROJECT_ROOT", tmp_path)
    monkeypatch.chdir(tmp_path)  # nor is there a checkout to fall back on
    catalog = MockServerConfig().catalog()
    assert "single-call" in catalog.scripts and "react-de-loop" in catalog.scripts
    assert set(catalog.unavailable) == {
        "react-de-mini-solve",
        "react-de-mini-mistakes",
        "react-de-crm-sla-solve",
    }
    assert "react-de-mini-solve.yaml" in catalog.unavailable["react-de-mini-solve"]
    with run_server(config=MockServerConfig()) as handle:
        client = openai.OpenAI(base_url=handle.url, api_key="k", max_retries=0, timeout=10)
        with pytest.raises(openai.NotFoundError) as info:
            client.chat.completions.create(
                model="mock-script:react-de-mini-solve",
                messages=[{"role": "user", "content": "go"}],
                tools=cast(Any, TOOL_SPECS),
            )
        assert info.value.code == "mock_script_unavailable"
        assert "gold_v2" in str(info.value)
        done = client.chat.completions.create(
            model="mock-script:single-call", messages=[{"role": "user", "content": "go"}]
        )
        assert done.choices[0].message.content == "done"
        client.close()


def test_user_scripts_override_shipped_ones_and_builtins_can_be_left_out(tmp_path: Path) -> None:
    (tmp_path / "single-call.yaml").write_text("replies:\n  - content: mine\n", encoding="utf-8")
    config = MockServerConfig(scripts_dir=tmp_path)
    scripts = config.all_scripts()
    assert isinstance(scripts["single-call"], ScriptedScript)
    assert scripts["single-call"].replies[0].content == "mine"
    assert "react-de-loop" in scripts
    assert MockServerConfig(builtin_scripts=False).all_scripts() == {}


# --- the shipped scripts ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "task"),
    [("react-de-mini-solve", MINI_TASK), ("react-de-crm-sla-solve", CRM_SLA_TASK)],
)
def test_solve_scripts_write_exactly_the_gold_overlay(
    shipped: dict[str, ScriptedScript | ToolSequenceScript], name: str, task: Path
) -> None:
    calls = _calls(shipped[name])
    assert {c.name for c in calls} <= REACT_DE_TOOLS
    assert _args(calls[0]) == {"command": "cat change_request.md"}
    written = {_args(c)["path"]: _args(c)["content"] for c in calls if c.name == "create_file"}
    assert written == _overlay(task)
    assert [c.name for c in calls if c.name not in {"bash", "create_file"}] == [
        "run_dbt",
        "terminate",
    ]
    assert _args(calls[-2]) == {"args": "run"}
    assert _args(calls[-1])["answer"].strip()


def test_mistakes_script_fails_then_fixes_the_sql_but_not_the_logic(
    shipped: dict[str, ScriptedScript | ToolSequenceScript],
) -> None:
    calls = _calls(shipped["react-de-mini-mistakes"])
    assert {c.name for c in calls} <= REACT_DE_TOOLS
    gold = _overlay(MINI_TASK)
    files: dict[str, str] = {}
    runs: list[dict[str, str]] = []  # the files as each run_dbt sees them
    for call in calls:
        args = _args(call)
        if call.name == "create_file":
            assert args["path"] in gold
            files[args["path"]] = args["content"]
        elif call.name == "edit_file":
            assert files[args["path"]].count(args["old"]) == 1
            files[args["path"]] = files[args["path"]].replace(args["old"], args["new"])
        elif call.name == "run_dbt":
            runs.append(dict(files))
    assert calls[-1].name == "terminate"
    assert len(runs) == 2 and set(runs[-1]) == set(gold)
    industry = "repo/models/marts/fct_won_revenue_by_industry.sql"
    country = "repo/models/marts/fct_won_revenue_by_country.sql"
    # The enriched opportunities have `industry`, not `account_industry`: the first run fails.
    enriched = (REPO_ROOT / "tests/fixtures/mini_dbt/models/intermediate").joinpath(
        "int_opportunities_enriched.sql"
    )
    assert "account_industry" not in enriched.read_text(encoding="utf-8")
    assert "account_industry" in runs[0][industry]
    assert "account_industry" not in runs[1][industry]
    # The fix leaves the logic error: the new mart counts every opportunity, not won ones.
    assert "is_won" in gold[industry] and "is_won" not in runs[1][industry]
    assert runs[1][country] == gold[country]


def test_loop_script_repeats_the_same_action(
    shipped: dict[str, ScriptedScript | ToolSequenceScript],
) -> None:
    calls = _calls(shipped["react-de-loop"])
    first = [(c.name, _args(c)) for c in calls[:3]]
    assert first == [("bash", {"command": "ls repo"})] * 3
    assert {c.name for c in calls} <= REACT_DE_TOOLS


def test_single_call_script_answers_done_in_one_turn(
    shipped: dict[str, ScriptedScript | ToolSequenceScript],
) -> None:
    script = shipped["single-call"]
    assert isinstance(script, ScriptedScript)
    assert [(r.content, r.tool_calls) for r in script.replies] == [("done", [])]


# --- over HTTP --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServerHandle]:
    handle = run_server("127.0.0.1", 0, MockServerConfig())
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def sdk(mock: MockServerHandle) -> Iterator[openai.OpenAI]:
    mock.reset()
    client = openai.OpenAI(base_url=mock.url, api_key="test-key", max_retries=0, timeout=10)
    try:
        yield client
    finally:
        client.close()


def test_default_server_serves_the_shipped_scripts(sdk: openai.OpenAI) -> None:
    names = {m.id for m in sdk.models.list().data}
    assert {f"mock-script:{name}" for name in SHIPPED} <= names
    completion = sdk.chat.completions.create(
        model="mock-script:react-de-mini-solve",
        messages=[
            {"role": "system", "content": "You are a data engineer."},
            {"role": "user", "content": "Solve TASK.md"},
        ],
        tools=cast(Any, TOOL_SPECS),
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls
    call = choice.message.tool_calls[0]
    assert call.type == "function"
    assert call.function.name == "bash"
    assert json.loads(call.function.arguments) == {"command": "cat change_request.md"}
    single = sdk.chat.completions.create(
        model="mock-script:single-call", messages=[{"role": "user", "content": "one call"}]
    )
    assert single.choices[0].message.content == "done"

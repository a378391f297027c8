"""The lake toolset on the mini weather lake: files listed and read inside the lake only, code
run in the sandbox with the lake as its read-only working directory, and the answer submitted
with its pipeline."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from benchforge.agents.protocol import TaskEnvironment
from benchforge.agents.tools.lake import LAKE_TOOLS, decode
from benchforge.agents.tools.tool import ToolOutcome
from benchforge.agents.tools.toolsets import toolset
from tests.agents.dsstar_env import lake_env, namespace_sandbox


@pytest.fixture
def env(tmp_path: Path) -> TaskEnvironment:
    made = lake_env(tmp_path, namespace_sandbox(), model="-", agent="react-lake")
    made.tools = toolset("lake")
    made.workspace.mkdir(parents=True, exist_ok=True)
    return made


def call(env: TaskEnvironment, name: str, **arguments: Any) -> ToolOutcome:
    return asyncio.run(env.tools.call(env, name, arguments))


def test_the_toolset_is_registered() -> None:
    assert LAKE_TOOLS == ("list_files", "read_file", "execute_python", "submit_answer")


def test_files_are_listed_and_read_inside_the_lake(env: TaskEnvironment) -> None:
    listed = call(env, "list_files").output
    assert "readings_2023.csv" in listed and "stations.json" in listed
    head = call(env, "read_file", path="readings_2023.csv", lines=2).output
    assert head.startswith("[utf-8]") and len(head.splitlines()) == 3
    escaped = call(env, "read_file", path="../ws/secret.txt")
    assert not escaped.ok and "not in the lake" in escaped.output


def test_encodings_are_read_from_the_bytes() -> None:
    assert decode("é;x".encode("utf-16")) == ("é;x", "utf-16")
    assert decode("é".encode("latin-1"))[1] == "latin-1 (not UTF-8)"
    assert decode(b"\xef\xbb\xbfa,b") == ("a,b", "utf-8-sig")


def test_code_runs_over_the_read_only_lake(env: TaskEnvironment) -> None:
    ran = call(
        env,
        "execute_python",
        code="import os\nprint(sorted(os.listdir('.'))[0])\n"
        "open(os.environ['BENCHFORGE_WORKSPACE'] + '/note.txt', 'w').write('kept')\n"
        "open('written.txt', 'w')\n",
    )
    assert "README.md" in ran.output
    assert not ran.ok and ("Read-only" in ran.output or "Permission" in ran.output)
    assert (env.workspace / "note.txt").read_text() == "kept"


def test_the_answer_is_submitted_with_its_pipeline(env: TaskEnvironment) -> None:
    done = call(env, "submit_answer", answer="12.5", pipeline_code="print(12.5)\n")
    assert done.terminate and done.answer == "12.5"
    assert (env.workspace / "answer" / "pipeline.py").read_text() == "print(12.5)\n"
    empty = call(env, "submit_answer", answer=" ", pipeline_code="")
    assert not empty.ok and not empty.terminate

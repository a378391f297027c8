"""The ds-star and ds-guru agents end to end on the mini weather lake, against the mock server
and in the namespace sandbox: ds-star solves it after a distractor file, a failing script and
an unconverted unit (12.5), answers wrong when its verifier accepts too early (56.5), reuses
cached descriptions, runs each role on its own model, honours its ablations and round limit;
retrieval keeps the nearest files or the oracle's; hostile and endless scripts are contained;
ds-guru solves it on its second try and gives up when it has none."""

from __future__ import annotations

import asyncio
import hashlib
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from benchforge.agents.dsstar import DsGuruAgent, DsGuruConfig, DsStarAgent, DsStarConfig
from benchforge.agents.dsstar.calls import RoleModels
from benchforge.agents.dsstar.config import ORACLE_FILES_ENV, Ablations, ScriptLimits
from benchforge.agents.dsstar.descriptions import FileDescription
from benchforge.agents.dsstar.retrieval import retrieve
from benchforge.agents.dsstar.usage import rounds_to_sufficiency, usage_by_role
from benchforge.agents.mock_llm import (
    KeyedReply,
    KeyedScript,
    MockServerConfig,
    MockServerHandle,
    run_server,
)
from benchforge.agents.registry import build_agent
from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig
from benchforge.core.records import Step
from benchforge.core.sandbox import SandboxBackend
from tests.agents.dsstar_env import QUESTION, lake_env, namespace_sandbox, run_agent

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

SOLVE = "mock-script:ds-star-lake-solve"
MISTAKES = "mock-script:ds-star-lake-mistakes"
GURU = "mock-script:ds-guru-lake-solve"


def _code(text: str) -> str:
    return f"```python\n{text}\n```"


PLAIN = "mock-script:plain"
PLAIN_SCRIPT = KeyedScript(
    policy="keyed",
    replies=[
        KeyedReply(system="You are the analyzer", content=_code("print('a file')")),
        KeyedReply(system="You are the planner", content="Count the readings."),
        KeyedReply(system="You are the coder", content=_code("print('readings: 6')")),
        KeyedReply(system="You are the verifier", content="Insufficient."),
        KeyedReply(system="You are the router", content="Step 1 is wrong."),
        KeyedReply(system="You are the finalizer", content=_code("print('6')")),
    ],
)
VERIFIER = "mock-script:verifier-says-yes"
VERIFIER_SCRIPT = KeyedScript(
    policy="keyed", replies=[KeyedReply(system="You are the verifier", content="Yes.")]
)
SECRET = "the-secret-is-42"
HOSTILE = "mock-script:hostile"


def _hostile_script(secret: Path, outside: Path, port: int) -> KeyedScript:
    code = f"""
import socket
from pathlib import Path
for name, attempt in [
    ("read", lambda: Path({str(secret)!r}).read_text()),
    ("write", lambda: Path({str(outside)!r}).write_text("x")),
    ("lake", lambda: Path("README.md").write_text("overwritten")),
    ("socket", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2)),
    ("dns", lambda: socket.create_connection(("example.com", 80), timeout=2)),
]:
    try:
        print(name, "ALLOWED", repr(attempt())[:80])
    except Exception as exc:
        print(name, "DENIED", type(exc).__name__)
"""
    return KeyedScript(
        policy="keyed",
        replies=[
            KeyedReply(system="You are the planner", content="Look around."),
            KeyedReply(system="You are the coder", content=_code(code)),
            KeyedReply(system="You are the verifier", content="Yes"),
            KeyedReply(
                system="You are the finalizer",
                content=_code(f"print(open({str(secret)!r}).read())"),
            ),
        ],
    )


LOOP = "mock-script:endless"
LOOP_SCRIPT = KeyedScript(
    policy="keyed",
    replies=[
        KeyedReply(system="You are the planner", content="Wait."),
        KeyedReply(system="You are the coder", content=_code("while True:\n    pass")),
        KeyedReply(system="You are the verifier", content="Sufficient"),
        KeyedReply(system="You are the finalizer", content=_code("print('gave up')")),
    ],
)


@pytest.fixture(scope="module")
def secret_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("host")
    (folder / "secret.txt").write_text(SECRET)
    return folder


@pytest.fixture(scope="module")
def mock(secret_dir: Path) -> Iterator[MockServerHandle]:
    with socket.socket() as probe:  # a port of the host that the hostile script tries
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    scripts = {
        "plain": PLAIN_SCRIPT,
        "verifier-says-yes": VERIFIER_SCRIPT,
        "hostile": _hostile_script(secret_dir / "secret.txt", secret_dir / "outside.txt", port),
        "endless": LOOP_SCRIPT,
    }
    with run_server(config=MockServerConfig(scripts=scripts)) as handle:
        yield handle


@pytest.fixture(scope="module")
def sandbox() -> SandboxBackend:
    return namespace_sandbox()


def _roles(steps: list[Step], kind: str = "model") -> list[str | None]:
    return [s.role for s in steps if s.kind == kind]


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*"))}


# --- ds-star ------------------------------------------------------------------------------------


def test_ds_star_recovers_from_a_distractor_a_crash_and_a_unit(
    tmp_path: Path, sandbox: SandboxBackend, mock: MockServerHandle
) -> None:
    # a traceback of over 100 characters is summarized before the debugger sees it
    config = DsStarConfig(description_cache_dir=tmp_path / "cache", traceback_summary_chars=100)
    env = lake_env(tmp_path, sandbox, model=SOLVE)
    outcome, steps, view = run_agent(DsStarAgent(config), env, mock, SOLVE)

    assert (outcome.termination, outcome.answer) == ("finished", "12.5")
    calls = Counter(_roles(steps))
    assert calls == {
        "analyzer": 4,  # one per lake file
        "planner": 3,  # the draft step, again after the router, then the conversion
        "coder": 3,
        "debugger": 2,  # a traceback summary and a fix of the KeyError
        "verifier": 3,  # rounds to sufficiency
        "router": 2,  # "Step 1 is wrong", then "Add Step"
        "finalizer": 1,
    }
    scripts = [(s.role, s.ok) for s in steps if s.kind == "tool"]
    assert scripts[:4] == [("analyzer", True)] * 4
    assert scripts[4:] == [
        ("coder", True),  # the draft file: runs, but the router rejects it
        ("coder", False),  # KeyError 'temp'
        ("debugger", True),
        ("coder", True),
        ("finalizer", True),
    ]
    assert all(s.name == "python" for s in steps if s.kind == "tool")
    # every model call in the trial's ledger, with tokens, and in the trajectory by role
    assert len(view.ledger) == sum(calls.values())
    usage = usage_by_role(steps)
    assert {role: u.calls for role, u in usage.items()} == calls
    assert sum(u.prompt_tokens for u in usage.values()) == view.ledger.totals().prompt_tokens
    assert rounds_to_sufficiency(steps) == 3
    assert all(s.prompt_tokens and s.completion_tokens for s in steps if s.kind == "model")
    kept = env.workspace / "ds-star"
    assert "5 / 9" in (kept / "solution.py").read_text()
    assert "round(" in (kept / "final.py").read_text()

    # a second trial on the same files (another folder) reuses every description
    again = lake_env(tmp_path / "again", sandbox, model=SOLVE)
    outcome, steps, _ = run_agent(DsStarAgent(config), again, mock, SOLVE)
    assert outcome.answer == "12.5"
    assert "analyzer" not in _roles(steps) and "analyzer" not in _roles(steps, "tool")
    assert len(list((tmp_path / "cache").glob("*.json"))) == 4


def test_ds_star_answers_wrong_when_it_accepts_the_distractor_unconverted(
    tmp_path: Path, sandbox: SandboxBackend, mock: MockServerHandle
) -> None:
    config = DsStarConfig(description_cache_dir=tmp_path / "cache")
    env = lake_env(tmp_path, sandbox, model=MISTAKES)
    outcome, steps, _ = run_agent(DsStarAgent(config), env, mock, MISTAKES)
    assert (outcome.termination, outcome.answer) == ("finished", "56.5")
    assert Counter(_roles(steps))["verifier"] == 1
    assert rounds_to_sufficiency(steps) == 1


def test_no_analyzer_no_router_a_model_per_role_and_the_round_limit(
    tmp_path: Path, sandbox: SandboxBackend, mock: MockServerHandle
) -> None:
    config = DsStarConfig(
        max_rounds=2,
        ablations=Ablations(no_analyzer=True, no_router=True),
        description_cache_dir=tmp_path / "cache",
    )
    env = lake_env(tmp_path, sandbox, model=PLAIN)
    outcome, steps, _ = run_agent(DsStarAgent(config), env, mock, PLAIN)
    assert (outcome.termination, outcome.answer) == ("round_limit", "6")
    assert Counter(_roles(steps)) == {"planner": 3, "coder": 3, "verifier": 2, "finalizer": 1}
    assert rounds_to_sufficiency(steps) is None

    per_role = config.model_copy(update={"models": {"verifier": VERIFIER}})
    env = lake_env(tmp_path / "per-role", sandbox, model=PLAIN)
    outcome, steps, view = run_agent(DsStarAgent(per_role), env, mock, PLAIN)
    assert (outcome.termination, outcome.answer) == ("finished", "6")
    by_role = {s.role: s.name for s in steps if s.kind == "model"}
    assert by_role == {"planner": PLAIN, "coder": PLAIN, "verifier": VERIFIER, "finalizer": PLAIN}
    assert {r.model for r in view.ledger.records()} == {PLAIN, VERIFIER}


def test_retrieval_keeps_the_nearest_files_or_the_oracles(
    tmp_path: Path, sandbox: SandboxBackend, mock: MockServerHandle
) -> None:
    described = [
        FileDescription(path=p, text="")
        for p in ["README.md", "readings_2023.csv", "readings_2023_draft.csv", "stations.json"]
    ]
    llm = LlmConfig(role="agent", model=PLAIN, base_url=mock.url, api_key=SecretStr("k"))

    async def pick(config: DsStarConfig, env_vars: dict[str, str]) -> tuple[list[str], list[Step]]:
        env = lake_env(tmp_path, sandbox, model=PLAIN, env=env_vars)
        async with LlmClient(llm) as client:
            view = LlmClientView(client, steps=env.trajectory)
            kept = await retrieve(env, RoleModels(view, {}), config, QUESTION, described)
        return [d.path for d in kept], env.trajectory.close("done")

    small = DsStarConfig(retrieval_limit=2, top_k=1)
    paths, steps = asyncio.run(pick(small, {}))
    assert paths == ["readings_2023.csv"]  # the question's words: 2023 (and fewer others)
    assert [(s.role, s.output) for s in steps] == [("retriever", "5 embeddings")]
    assert steps[0].prompt_tokens and steps[0].name == "text-embedding-3-small"

    everything = asyncio.run(pick(DsStarConfig(retrieval_limit=4), {}))
    assert len(everything[0]) == 4 and everything[1] == []

    oracle = DsStarConfig(retrieval="oracle")
    wanted = {ORACLE_FILES_ENV: "stations.json\nreadings_2023.csv\n"}
    assert asyncio.run(pick(oracle, wanted)) == (["readings_2023.csv", "stations.json"], [])
    with pytest.raises(ValueError, match=ORACLE_FILES_ENV):
        asyncio.run(pick(oracle, {}))


def test_a_hostile_script_is_contained(
    tmp_path: Path, sandbox: SandboxBackend, mock: MockServerHandle, secret_dir: Path
) -> None:
    config = DsStarConfig(
        ablations=Ablations(no_analyzer=True), max_debug_attempts=0, description_cache_dir=tmp_path
    )
    env = lake_env(tmp_path, sandbox, model=HOSTILE)
    lake_before = _digests(tmp_path / "lake")
    outcome, steps, _ = run_agent(DsStarAgent(config), env, mock, HOSTILE)

    coder = next(s for s in steps if s.kind == "tool" and s.role == "coder")
    assert coder.output is not None
    for attempt in ("read", "write", "lake", "socket", "dns"):
        assert f"{attempt} DENIED" in coder.output, coder.output
    assert "ALLOWED" not in coder.output
    # the secret reached nothing: no output, no answer; nothing was written outside
    assert all(SECRET not in (s.output or "") for s in steps)
    assert outcome.answer is None and outcome.termination == "agent_error"
    assert not (secret_dir / "outside.txt").exists()
    assert _digests(tmp_path / "lake") == lake_before


def test_a_script_that_loops_forever_is_stopped_at_its_limit(
    tmp_path: Path, sandbox: SandboxBackend, mock: MockServerHandle
) -> None:
    config = DsStarConfig(
        ablations=Ablations(no_analyzer=True),
        max_debug_attempts=0,
        scripts=ScriptLimits(wall_s=2.0),
        description_cache_dir=tmp_path,
    )
    env = lake_env(tmp_path, sandbox, model=LOOP)
    t0 = time.monotonic()
    outcome, steps, _ = run_agent(DsStarAgent(config), env, mock, LOOP)
    assert time.monotonic() - t0 < 60
    coder = next(s for s in steps if s.kind == "tool" and s.role == "coder")
    assert coder.timed_out is True and coder.ok is False
    assert "time limit" in (coder.output or "")
    assert outcome.answer == "gave up"


# --- ds-guru -----------------------------------------------------------------------------------


def test_ds_guru_answers_on_its_second_try(
    tmp_path: Path, sandbox: SandboxBackend, mock: MockServerHandle
) -> None:
    env = lake_env(tmp_path, sandbox, model=GURU, agent="ds-guru")
    outcome, steps, _ = run_agent(build_agent("ds-guru"), env, mock, GURU)
    assert (outcome.termination, outcome.answer) == ("finished", "12.5")
    assert [(s.kind, s.role, s.ok) for s in steps] == [
        ("model", "guru", True),
        ("tool", "guru", False),  # KeyError 'temperature', shown to the model
        ("model", "guru", True),
        ("tool", "guru", True),
    ]

    one_shot = DsGuruAgent(DsGuruConfig(error_retries=0))
    env = lake_env(tmp_path / "one-shot", sandbox, model=GURU, agent="ds-guru")
    outcome, steps, _ = run_agent(one_shot, env, mock, GURU)
    assert outcome.termination == "round_limit" and outcome.answer is None
    assert "script failed" in (outcome.error or "")
    assert len(steps) == 2

"""ds-star's pieces that need no sandbox: reading the roles' replies (label variants, code
fences, JSON), its config, usage per role from a trajectory, the mock's keyed scripts and
hashed embeddings, and the client's embeddings through a view (ledger and a model step with
its role)."""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr, ValidationError

from benchforge.agents.dsstar import DsStarConfig
from benchforge.agents.dsstar.guru import main_answer
from benchforge.agents.dsstar.lake import ScriptRun
from benchforge.agents.dsstar.replies import (
    ReplyError,
    Route,
    extract_code,
    extract_json,
    parse_route,
    parse_verdict,
)
from benchforge.agents.dsstar.retrieval import cosine
from benchforge.agents.dsstar.usage import RoleUsage, rounds_to_sufficiency, usage_by_role
from benchforge.agents.mock_llm import (
    KeyedReply,
    KeyedScript,
    MockServerConfig,
    PolicyError,
    PolicyRequest,
    PolicyResolver,
    load_builtin_scripts,
    run_server,
)
from benchforge.agents.mock_llm.app import EMBEDDING_DIMENSIONS, hashed_embedding
from benchforge.agents.protocol import Trajectory
from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig
from benchforge.core.records import Step

# --- replies ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "sufficient"),
    [
        ("Yes", True),
        ("**Yes**, the plan answers it.", True),
        ("Sufficient.", True),
        ("sufficient: the mean is converted", True),
        ("No", False),
        ("No, not yet sufficient", False),
        ("Insufficient: the unit is wrong", False),
        ("The plan is not sufficient.", False),
        ("", False),  # unreadable: a round more, never an early answer
        ("I cannot tell.", False),
        (None, False),
    ],
)
def test_verdicts_in_their_label_variants(reply: str | None, sufficient: bool) -> None:
    assert parse_verdict(reply) is sufficient


@pytest.mark.parametrize(
    ("reply", "route"),
    [
        ("Step 2 is wrong", Route(action="truncate", wrong_step=2)),
        ("**Step 1** is wrong: the draft file.", Route(action="truncate", wrong_step=1)),
        ("step #3 is incorrect", Route(action="truncate", wrong_step=3)),
        ("The error is in Step 2.", Route(action="truncate", wrong_step=2)),
        ("Add Step", Route(action="add")),
        ("add step: convert the unit", Route(action="add")),
        ("Add step 4 to convert", Route(action="add")),
        ("Add Step. Step 1 is fine.", Route(action="add")),
        ("Step 9 is wrong", Route(action="add")),  # no such step: add
        ("Step 0 is wrong", Route(action="add")),
        ("", Route(action="add")),
    ],
)
def test_routes_in_their_label_variants(reply: str, route: Route) -> None:
    assert parse_route(reply, steps=3) == route


def test_code_is_the_last_python_block_or_the_bare_reply() -> None:
    reply = "First:\n```python\nprint(1)\n```\nthen all of it:\n```python\nprint(2)\n```"
    assert extract_code(reply) == "print(2)\n"
    assert extract_code("```\nprint(3)\n```") == "print(3)\n"
    assert extract_code("print(4)") == "print(4)\n"
    with pytest.raises(ReplyError, match="no python code block"):
        extract_code("```json\n{}\n```")
    with pytest.raises(ReplyError, match="no code"):
        extract_code("  ")


def test_json_plans_and_ds_gurus_answer_line() -> None:
    assert extract_json('Plan:\n```json\n{"main-task": {"query": "q"}}\n```') == {
        "main-task": {"query": "q"}
    }
    assert extract_json('here {"a": 1} it is') == {"a": 1}
    for bad in ("no json", "```json\n[1]\n```", "{not json}"):
        with pytest.raises(ReplyError):
            extract_json(bad)

    def run(stdout: str) -> ScriptRun:
        return ScriptRun(code="", exit_code=0, stdout=stdout, stderr="", timed_out=False)

    assert main_answer(run('debug\n{"main-task": 12.5, "subtask-1": "S2"}\n\n')) == "12.5"
    assert main_answer(run('{"main-task": "Ridge"}')) == "Ridge"
    assert main_answer(run('{"main-task": [1, 2]}')) == "[1, 2]"
    for bad in ("", "12.5", '{"subtask-1": 1}', "[1]"):
        with pytest.raises(ReplyError):
            main_answer(run(bad))


def test_a_runs_report_keeps_the_end_and_says_why_it_stopped() -> None:
    run = ScriptRun(code="", exit_code=None, stdout="x" * 500, stderr="", timed_out=True)
    report = run.report(200)
    assert report.startswith("[...]\n") and len(report) == 206 and not run.ok
    assert ScriptRun(code="", exit_code=0, stdout="", stderr="", timed_out=False).report(200) == (
        "(no output)"
    )


def test_config_rejects_unknown_roles_and_fields() -> None:
    config = DsStarConfig(models={"verifier": "m-v"})
    assert (config.model_for("verifier", "m"), config.model_for("coder", "m")) == ("m-v", "m")
    with pytest.raises(ValidationError):
        DsStarConfig.model_validate({"models": {"oracle": "m"}})
    with pytest.raises(ValidationError):
        DsStarConfig.model_validate({"ablations": {"no_planner": True}})
    with pytest.raises(ValidationError):
        DsStarConfig(max_rounds=0)


# --- the mock: keyed scripts and embeddings ----------------------------------------------------


def _request(system: str, user: str) -> PolicyRequest:
    return PolicyRequest(
        model="mock-script:k",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
    )


def test_a_keyed_script_answers_by_system_prompt_and_user_text() -> None:
    script = KeyedScript(
        policy="keyed",
        replies=[
            KeyedReply(system="planner", when=["Step 1:"], unless=["Step 2:"], content="second"),
            KeyedReply(system="planner", content="first"),
            KeyedReply(system="verifier", when=["done"], content="Yes"),
        ],
    )
    resolver = PolicyResolver({"k": script})
    answer = lambda system, user: resolver.resolve(_request(system, user)).reply(  # noqa: E731
        _request(system, user)
    )
    assert answer("the planner", "no steps").content == "first"
    assert answer("the planner", "Step 1: a").content == "second"
    assert answer("the planner", "Step 1: a\nStep 2: b").content == "first"
    assert answer("the verifier", "all done").content == "Yes"
    with pytest.raises(PolicyError, match="no reply for this request"):
        answer("the verifier", "not yet")


def test_shipped_ds_star_scripts_are_keyed() -> None:
    scripts, unavailable = load_builtin_scripts()
    assert unavailable == {}
    for name in ("ds-star-lake-solve", "ds-star-lake-mistakes"):
        assert isinstance(scripts[name], KeyedScript)


def test_hashed_embeddings_are_deterministic_unit_vectors() -> None:
    a = hashed_embedding("Mean temperature at Ridge")
    assert len(a) == EMBEDDING_DIMENSIONS
    assert math.isclose(sum(v * v for v in a), 1.0)
    assert a == hashed_embedding("mean  TEMPERATURE at ridge!")
    near = cosine(a, hashed_embedding("ridge temperature readings"))
    far = cosine(a, hashed_embedding("invoice totals by customer"))
    assert near > far
    assert hashed_embedding("") == [0.0] * EMBEDDING_DIMENSIONS


def test_embeddings_through_a_view_are_recorded_with_their_role() -> None:
    with run_server(config=MockServerConfig(builtin_scripts=False)) as mock:
        config = LlmConfig(
            role="agent", model="mock-echo", base_url=mock.url, api_key=SecretStr("k")
        )
        trajectory = Trajectory()

        async def embed() -> list[list[float]]:
            async with LlmClient(config) as client:
                view = LlmClientView(client, steps=trajectory)
                embedding = await view.embed(["a b", "c"], model="emb-1", role="retriever")
                assert len(view.ledger) == 1 and len(client.ledger) == 1
                record = view.ledger.records()[0]
                assert (record.model, record.prompt_tokens, record.ok) == ("emb-1", 2, True)
                return embedding.vectors

        vectors = asyncio.run(embed())
    assert vectors == [hashed_embedding("a b"), hashed_embedding("c")]
    (step,) = trajectory.close("done")
    assert (step.kind, step.name, step.role, step.output) == (
        "model",
        "emb-1",
        "retriever",
        "2 embeddings",
    )


def test_usage_by_role_and_rounds_to_sufficiency() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def step(role: str | None, output: str, cost: float | None, ok: bool = True) -> Step:
        return Step(
            kind="model",
            index=0,
            started_at=t0,
            seconds=0.5,
            name="m",
            role=role,
            output=output,
            prompt_tokens=100,
            completion_tokens=10,
            cost_usd=cost,
            ok=ok,
        )

    tool = Step(kind="tool", index=0, started_at=t0, seconds=1.0, name="python", role="coder")
    steps = [
        step("planner", "Load it", 0.01),
        tool,
        step("verifier", "No.", 0.02),
        step("verifier", "Yes", None, ok=False),  # failed: no verdict
        step("verifier", "Sufficient", 0.02),
        step(None, "x", 0.0),
    ]
    usage = usage_by_role(steps)
    assert usage["planner"] == RoleUsage(
        calls=1, prompt_tokens=100, completion_tokens=10, cost_usd=0.01, seconds=0.5
    )
    verifier = usage["verifier"]
    assert (verifier.calls, verifier.prompt_tokens, verifier.failed) == (3, 300, 1)
    assert verifier.cost_usd is None  # one call unpriced
    assert set(usage) == {"planner", "verifier", "-"}
    assert rounds_to_sufficiency(steps) == 3
    assert rounds_to_sufficiency(steps[:3]) is None

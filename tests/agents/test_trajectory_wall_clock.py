"""A trial stopped by its wall clock keeps the trajectory the agent recorded before the kill,
and the step in flight at the kill is recorded as interrupted."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel

from benchforge.agents.builtin.command import CommandAgent, CommandAgentConfig
from benchforge.agents.protocol import Agent, AgentOutcome, TaskEnvironment
from benchforge.agents.registry import build_agent
from benchforge.core.artifacts import open_store
from benchforge.core.llm import SharedSemaphore
from benchforge.core.llm.records import LlmCallRecord, LlmResponse, LlmToolCall, LlmUsage
from benchforge.core.records import AgentLimits, TrialKey
from benchforge.core.sandbox import ProcessBackend
from benchforge.evaluation.tasks.loader import load_task
from benchforge.harness.executor import RunContext, run_trial
from benchforge.harness.models import TrialPlan
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES

TASK = FIXTURES / "task_specs" / "de-mini" / "mini-arch-retention"


class _Config(BaseModel):
    pass


class TwoStepsThenHang:
    """Records a model step and a tool step, then hangs inside a third (tool) step."""

    name = "two-steps-then-hang"
    uses_model = False

    @property
    def config(self) -> BaseModel:
        return _Config()

    async def run(self, env: TaskEnvironment) -> AgentOutcome:
        started = env.trajectory.start()
        env.trajectory.step("model", "scripted", started, output="call bash")
        started = env.trajectory.start()
        env.trajectory.step("tool", "bash", started, arguments={"command": "ls"}, output="x")
        hang = {"command": "sleep 60"}
        started = env.trajectory.start("tool", "bash", arguments=hang)
        await asyncio.sleep(60)
        env.trajectory.step("tool", "bash", started, arguments=hang, output="never")
        return AgentOutcome(termination="finished")


def _trial(
    tmp_path: Path, agent: Agent, wall_s: float, llm: Any = None
) -> tuple[RunStore, TrialPlan]:
    run = RunStore(open_store(str(tmp_path / "artifacts")), "wall")
    task = load_task(TASK)
    key = TrialKey(
        suite=task.spec.suite,
        task_id=task.spec.id,
        task_version=task.spec.version,
        agent=agent.name,
        agent_config_hash="0" * 12,
        model="-",
        epoch=0,
    )
    plan = TrialPlan(key=key, task_folder=str(TASK), agent_spec=agent.name, dataset_dir=None)
    ctx = RunContext(
        run=run,
        scratch=tmp_path / "scratch",
        sandbox=ProcessBackend(),
        limits=AgentLimits(wall_s=wall_s),
        llm_configs={},
        trial_slots=SharedSemaphore(1),
        solutions=lambda _key: None,
    )
    result = asyncio.run(asyncio.wait_for(run_trial(plan, task, agent, llm, ctx), timeout=30))
    assert result.termination == "wall_clock"
    return run, plan


def test_wall_clock_trial_keeps_steps_recorded_before_the_kill(tmp_path: Path) -> None:
    run, plan = _trial(tmp_path, TwoStepsThenHang(), wall_s=0.3)
    stored = run.read_result(plan.key.slug)
    assert stored.termination == "wall_clock"
    assert "0.3 s" in (stored.error or "")
    steps = stored.trajectory
    assert [(s.kind, s.name, s.index) for s in steps[:2]] == [
        ("model", "scripted", 0),
        ("tool", "bash", 1),
    ]
    assert steps[0].output == "call bash" and steps[1].arguments == {"command": "ls"}
    assert all(s.ok and s.error is None for s in steps[:2])
    # the step in flight at the kill: recorded, not ok, marked interrupted
    assert len(steps) == 3
    hung = steps[2]
    assert (hung.kind, hung.name, hung.index) == ("tool", "bash", 2)
    assert hung.arguments == {"command": "sleep 60"}
    assert not hung.ok and hung.interrupted and "wall clock" in (hung.error or "")
    assert 0.1 < hung.seconds < 5
    assert stored.llm.calls == 1


class HangingSecondCall:
    """A stand-in LLM client: the first call asks for a tool, the second never answers."""

    def __init__(self) -> None:
        self.config = SimpleNamespace(
            model="fake-model", role="agent", normalized_base_url="http://fake"
        )
        self.calls = 0

    async def complete(self, messages: Any, tools: Any = None, **kwargs: Any) -> LlmResponse:
        self.calls += 1
        if self.calls > 1:
            await asyncio.sleep(60)
        record = LlmCallRecord(
            role="agent",
            model="fake-model",
            base_url="http://fake",
            started_at=datetime.now(UTC),
            latency_s=0.0,
            attempts=1,
            status="ok",
            prompt_tokens=10,
            completion_tokens=5,
        )
        return LlmResponse(
            content=None,
            tool_calls=[LlmToolCall(id="c1", name="no_such_tool", arguments="{}")],
            finish_reason="tool_calls",
            usage=LlmUsage(prompt_tokens=10, completion_tokens=5),
            record=record,
        )


def test_react_de_model_call_in_flight_at_the_kill_is_recorded_as_interrupted(
    tmp_path: Path,
) -> None:
    llm = HangingSecondCall()
    run, plan = _trial(tmp_path, build_agent("react-de"), wall_s=0.3, llm=llm)
    stored = run.read_result(plan.key.slug)
    assert stored.termination == "wall_clock" and llm.calls == 2
    kinds = [(s.kind, s.name, s.ok, bool(s.interrupted)) for s in stored.trajectory]
    assert kinds == [
        ("model", "fake-model", True, False),
        ("tool", "no_such_tool", False, False),
        ("model", "fake-model", False, True),
    ]
    assert [s.index for s in stored.trajectory] == [0, 1, 2]
    assert stored.llm.calls == 2 and stored.llm.errors == 1 and stored.llm.prompt_tokens == 10


def test_command_agent_cut_by_the_trial_wall_clock_keeps_its_command_step(
    tmp_path: Path,
) -> None:
    """The command's own limit (30 s) outlasts the trial's (0.5 s): before, the only step was
    recorded when the command returned, so the stored trajectory was empty."""
    agent = CommandAgent(CommandAgentConfig(argv=["sleep", "30"], wall_s=30))
    run, plan = _trial(tmp_path, agent, wall_s=0.5)
    stored = run.read_result(plan.key.slug)
    assert stored.termination == "wall_clock"
    assert [(s.kind, s.name, s.arguments) for s in stored.trajectory] == [
        ("tool", "command", {"argv": ["sleep", "30"]})
    ]
    step = stored.trajectory[0]
    assert step.interrupted and not step.ok and "wall clock (0.5 s)" in (step.error or "")

"""What the ds-star / ds-guru tests share: the mini weather lake copied per test, a task
environment over it, and running an agent against the mock server."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from pydantic import SecretStr

from benchforge.agents.mock_llm import MockServerHandle
from benchforge.agents.protocol import Agent, AgentOutcome, TaskEnvironment
from benchforge.agents.tools.toolsets import Toolset
from benchforge.core.llm import LlmClient, LlmClientView, LlmConfig
from benchforge.core.records import AgentLimits, Step, TrialKey
from benchforge.core.sandbox import NamespaceBackend, SandboxBackend
from tests.paths import REPO_ROOT

LAKE = REPO_ROOT / "tests/fixtures/lakes/mini-weather"
QUESTION = (
    "What was the mean 2023 temperature at the Ridge station, in degrees Celsius, rounded to "
    "one decimal?"
)
LAKE_TOOLSET = Toolset("lake", ())  # not registered: the lake family owns that name


def namespace_sandbox() -> SandboxBackend:
    backend = NamespaceBackend()
    caps = backend.capabilities()
    if not caps.usable:
        message = f"namespace sandbox unavailable on this machine: {caps.reason}"
        if os.environ.get("BENCHFORGE_ALLOW_NO_NAMESPACES") == "1":
            pytest.skip(message)
        pytest.fail(message)
    return backend


def lake_env(
    tmp_path: Path,
    sandbox: SandboxBackend,
    *,
    model: str,
    agent: str = "ds-star",
    extra_files: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    **limits: float,
) -> TaskEnvironment:
    data = tmp_path / "lake"
    if not data.exists():
        shutil.copytree(LAKE, data)
        for name, text in (extra_files or {}).items():
            (data / name).write_text(text, encoding="utf-8")
    key = TrialKey(
        suite="lake-test",
        task_id="ridge-mean-celsius",
        task_version="1",
        agent=agent,
        agent_config_hash="0" * 12,
        model=model,
        epoch=0,
    )
    return TaskEnvironment(
        key=key,
        family="lake_pipeline",
        prompt=QUESTION,
        workspace_path=tmp_path / "ws",
        data_dir=data,
        tools=LAKE_TOOLSET,
        limits=AgentLimits(**{"action_timeout_s": 60.0, **limits}),
        sandbox=sandbox,
        env=dict(env or {}),
        submission="answer",
    )


def run_agent(
    agent: Agent, env: TaskEnvironment, mock: MockServerHandle, model: str
) -> tuple[AgentOutcome, list[Step], LlmClientView]:
    config = LlmConfig(
        role="agent", model=model, base_url=mock.url, api_key=SecretStr("k"), timeout_s=20.0
    )

    async def run() -> tuple[AgentOutcome, LlmClientView]:
        async with LlmClient(config) as client:
            env.llm = LlmClientView(client, steps=env.trajectory, epoch=0)
            return await agent.run(env), env.llm

    outcome, view = asyncio.run(asyncio.wait_for(run(), timeout=240))
    return outcome, env.trajectory.close("done"), view

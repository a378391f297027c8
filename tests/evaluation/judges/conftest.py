"""A mock LLM server (its judge policies) and judges on a real ``LlmClient`` (through a view,
on the LLM loop, as scoring runs them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from benchforge.agents.mock_llm import MockServerHandle, Policy, run_server
from benchforge.core.llm import LlmConfig
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.harness.judging import open_judge

JudgeFactory = Callable[..., Judge]


def start_mock(policies: Mapping[str, Policy] | None = None) -> MockServerHandle:
    return run_server("127.0.0.1", 0, policies=policies)


@pytest.fixture(scope="module")
def mock_server() -> Iterator[MockServerHandle]:
    handle = start_mock()
    try:
        yield handle
    finally:
        handle.stop()


def judge_factory(url: str, cache_dir: Path, stack: ExitStack) -> Callable[..., Judge]:
    def make(model: str = "mock-judge", *, cache: bool = True, **settings: Any) -> Judge:
        config = LlmConfig(
            role="judge",
            model=model,
            base_url=url,
            api_key="mock",
            max_retries=0,
            cache_dir=cache_dir if cache else None,
        )
        return stack.enter_context(open_judge(config, JudgeSettings(**settings)))

    return make


@pytest.fixture
def make_judge(mock_server: MockServerHandle, tmp_path: Path) -> Iterator[JudgeFactory]:
    """``make_judge(model, cache=True, **JudgeSettings fields)``: a judge on the module's mock
    server, its response cache in this test's tmp_path."""
    with ExitStack() as stack:
        yield judge_factory(mock_server.url, tmp_path / "llm-cache", stack)

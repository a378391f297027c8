"""Which model endpoint a run's agents call, and each model's client configuration."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from benchforge.agents.mock_llm import MockServerConfig, run_server
from benchforge.core.llm import LlmConfig
from benchforge.core.records import LlmOptions
from benchforge.core.settings import BenchforgeSettings

MOCK_API_KEY = "benchforge-mock"


def uses_mock(settings: BenchforgeSettings, calls_models: bool) -> bool:
    """Models are called and no API key is configured: the run talks to the mock server."""
    return calls_models and settings.openai_api_key is None


@contextmanager
def llm_endpoint(settings: BenchforgeSettings, use_mock: bool) -> Iterator[str | None]:
    """Yields the base URL agents call: the configured endpoint, or (``use_mock``: models are
    called and no API key is configured) the Benchforge mock server started here for the run."""
    if not use_mock:
        yield settings.openai_base_url
        return
    with run_server(config=MockServerConfig(scripts_dir=settings.mock_scripts_dir)) as handle:
        yield handle.url


def llm_configs(
    settings: BenchforgeSettings,
    models: list[str],
    base_url: str | None,
    concurrency: int,
    use_mock: bool,
    options: LlmOptions,
) -> dict[str, LlmConfig]:
    """model -> the agent-role client configuration (``concurrency`` calls at once per model)."""
    configs = {}
    for model in models:
        overrides: dict[str, object] = {"concurrency": concurrency, **options.model_dump()}
        if base_url:
            overrides["base_url"] = base_url
        if use_mock:
            overrides["api_key"] = MOCK_API_KEY
        configs[model] = LlmConfig.from_settings(settings, role="agent", model=model, **overrides)
    return configs

"""LlmConfig: which endpoint, key and model a role (agent, judge, ...) uses, and its limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from benchforge.core.settings import BenchforgeSettings

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


class LlmConfig(BaseModel):
    """One role's model settings. Secrets stay ``SecretStr``; ``repr`` never shows the key.

    ``concurrency`` and ``requests_per_minute`` are limits of the (base_url, model) pair,
    shared by every live client of that pair in the process; two live clients of one pair
    must agree on them.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str = Field(min_length=1, description="who calls: 'agent', 'judge', ...")
    model: str = Field(min_length=1)
    base_url: str = OPENAI_DEFAULT_BASE_URL
    api_key: SecretStr | None = None
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="None: not sent (the provider's default)"
    )
    max_tokens: int | None = Field(default=None, gt=0, description="None: not sent")
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = Field(
        default="max_tokens",
        description="request field carrying max_tokens; OpenAI reasoning models want "
        "max_completion_tokens",
    )
    timeout_s: float = Field(default=120.0, gt=0, description="per HTTP attempt")
    max_retries: int = Field(default=5, ge=0, description="attempts = max_retries + 1")
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(
        default=60.0, ge=0, description="cap on one backoff sleep, Retry-After included"
    )
    concurrency: int = Field(default=8, ge=1, description="requests in flight per model")
    requests_per_minute: float | None = Field(default=None, gt=0, description="None: no cap")
    cache_dir: Path | None = Field(default=None, description="response cache; None: off")
    cache_endpoint: str | None = Field(
        default=None,
        description="names the endpoint in cache keys instead of base_url: the mock server "
        "listens on a new port each run, and its answers must still be found again",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="extra request fields (part of the cache key)"
    )

    @classmethod
    def from_settings(
        cls, settings: BenchforgeSettings, role: str, model: str, **overrides: Any
    ) -> LlmConfig:
        """Endpoint and key from benchforge settings (``openai_base_url``, ``openai_api_key``);
        ``overrides`` set any other field."""
        fields: dict[str, Any] = {"role": role, "model": model}
        if settings.openai_base_url:
            fields["base_url"] = settings.openai_base_url
        if settings.openai_api_key is not None:
            fields["api_key"] = settings.openai_api_key
        fields.update(overrides)
        return cls(**fields)

    @property
    def normalized_base_url(self) -> str:
        return self.base_url.rstrip("/")

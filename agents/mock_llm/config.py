"""Mock server configuration: fault injection and scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from benchforge.errors import ConfigError
from benchforge.yamlio import read_yaml


class FaultConfig(BaseModel):
    """Faults injected into chat completions, decided per request from ``seed`` and the
    request's arrival number (so a sequential client sees the same faults on every run).

    Latency is ``latency_ms``, or uniform in [latency_ms, latency_ms_max] when that is set.
    A "timeout" fault stalls the request ``timeout_sleep_s`` (past the client's timeout;
    it ends early when the client hangs up) and then answers 504.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    latency_ms: float = Field(default=0.0, ge=0)
    latency_ms_max: float | None = Field(default=None, ge=0)
    rate_429: float = Field(default=0.0, ge=0, le=1)
    rate_500: float = Field(default=0.0, ge=0, le=1)
    rate_timeout: float = Field(default=0.0, ge=0, le=1)
    retry_after_s: float | None = Field(
        default=1.0, ge=0, description="Retry-After sent with 429s; None: no header"
    )
    timeout_sleep_s: float = Field(default=30.0, ge=0)
    seed: int = 0

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.rate_429 + self.rate_500 + self.rate_timeout > 1.0 + 1e-9:
            raise ValueError("rate_429 + rate_500 + rate_timeout must not exceed 1")
        if self.latency_ms_max is not None and self.latency_ms_max < self.latency_ms:
            raise ValueError("latency_ms_max must be >= latency_ms")
        return self


class ScriptedToolCall(BaseModel):
    """A tool call in a script; ``arguments`` may be an object (sent as JSON) or JSON text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, sort_keys=True)


class ScriptedReply(BaseModel):
    """One assistant turn: text, tool calls, or both."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str | None = None
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)

    @model_validator(mode="after")
    def _not_empty(self) -> Self:
        if self.content is None and not self.tool_calls:
            raise ValueError("a reply needs content or tool_calls")
        return self


class ScriptedScript(BaseModel):
    """Replies replayed in order: turn k (k assistant messages so far) gets ``replies[k]``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: Literal["scripted"] = "scripted"
    replies: list[ScriptedReply] = Field(min_length=1)


class ToolSequenceScript(BaseModel):
    """One tool call per turn, in order, then the ``final`` answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: Literal["tool_sequence"]
    tool_calls: list[ScriptedToolCall]
    final: str


MockScript = Annotated[ScriptedScript | ToolSequenceScript, Field(discriminator="policy")]


class _ScriptFile(BaseModel):
    script: MockScript


class MockServerConfig(BaseModel):
    """Everything the mock server is started with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    faults: FaultConfig = Field(default_factory=FaultConfig)
    scripts: dict[str, MockScript] = Field(default_factory=dict)
    scripts_dir: Path | None = Field(
        default=None, description="*.yaml / *.yml / *.json scripts, named by file stem"
    )
    fallback_model: str | None = Field(
        default=None,
        description="answer models that are not mock-* as this mock model (e.g. 'mock-echo'); "
        "None: such models get 404",
    )

    def all_scripts(self) -> dict[str, ScriptedScript | ToolSequenceScript]:
        """Scripts from ``scripts_dir`` overlaid with ``scripts``; ConfigError names a bad file."""
        found: dict[str, ScriptedScript | ToolSequenceScript] = {}
        if self.scripts_dir is not None:
            found.update(load_scripts_dir(self.scripts_dir))
        found.update(self.scripts)
        return found


def load_script(path: Path) -> ScriptedScript | ToolSequenceScript:
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else read_yaml(text)
        if isinstance(data, dict):
            data.setdefault("policy", "scripted")
        return _ScriptFile.model_validate({"script": data}).script
    except (OSError, ValueError) as exc:  # ValidationError and JSON errors are ValueErrors
        detail = exc if not isinstance(exc, ValidationError) else _describe(exc)
        raise ConfigError(f"{path}: invalid mock script: {detail}") from None


def load_scripts_dir(directory: Path) -> dict[str, ScriptedScript | ToolSequenceScript]:
    directory = Path(directory)
    if not directory.is_dir():
        raise ConfigError(f"mock scripts folder {directory} does not exist")
    return {
        path.stem: load_script(path)
        for path in sorted(directory.iterdir())
        if path.suffix in {".yaml", ".yml", ".json"}
    }


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'][1:]) or '<root>'}: {err['msg']}"
        for err in exc.errors()
    )

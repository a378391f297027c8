"""Mock server configuration: fault injection and scripts.

Script files (``*.yaml`` / ``*.yml`` / ``*.json``, named by file stem) may pull text from other
files: anywhere in a script, a mapping with the single key ``$file`` or ``$script_file`` is
replaced at load time by the text of the file it names, e.g. in a tool call's arguments

    tool_calls:
      - name: create_file
        arguments:
          path: repo/models/marts/fct_x.sql
          content: {$file: task_specs/de-x/x-evol-task/gold_v2/models/marts/fct_x.sql}

- ``{$file: PATH}``: a relative PATH is relative to the catalogue root (``PROJECT_ROOT``, the
  installed package's folder holding ``task_specs/`` and ``dbt_projects/``), else to the
  working directory, for scripts that replay authored
  project files (task specs, fixtures) instead of copying them;
- ``{$script_file: PATH}``: a relative PATH is relative to the folder of the script file, for
  scripts that travel with their own files.

Absolute paths are used as they are. A whole ``arguments: {$file: call.json}`` makes the
arguments that JSON text, sent verbatim. A file that cannot be read is a ``ScriptFileError``
(a ``ConfigError``) naming the script file and the field path, e.g.
``replies.3.tool_calls.0.arguments.content``.

The server loads the scripts shipped in ``BUILTIN_SCRIPTS_DIR`` (unless
``builtin_scripts=False``), then ``scripts_dir``, then ``scripts``; a later name wins. The
shipped scripts reference project files that exist only in a source checkout, so a shipped
script whose referenced file is missing (an installed package) does not stop the server: it
is listed as unavailable and a request to it is answered 404 ``mock_script_unavailable`` with
the reason. Every other script problem, and any problem in the user's ``scripts_dir``, is a
``ConfigError`` at startup.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from benchforge.core.catalogue import PACKAGE_ROOT
from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml


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


class KeyedReply(BaseModel):
    """A reply chosen by what the request says, not by its turn: it answers when ``system`` is
    in the system prompt, every ``when`` text is in the last user message and no ``unless``
    text is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str = ""
    when: list[str] = Field(default_factory=list)
    unless: list[str] = Field(default_factory=list)
    content: str


class KeyedScript(BaseModel):
    """Replies keyed by the conversation (the first that matches answers), for agents whose
    every call is a fresh conversation (ds-star's roles): a role is told apart by its system
    prompt, a round by what the user message holds. No match is an error naming the role."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: Literal["keyed"]
    replies: list[KeyedReply] = Field(min_length=1)


MockScript = Annotated[
    ScriptedScript | ToolSequenceScript | KeyedScript, Field(discriminator="policy")
]
Script = ScriptedScript | ToolSequenceScript | KeyedScript

PROJECT_ROOT = PACKAGE_ROOT
"""Base of relative ``$file`` references: the catalogue root of the installed package (it holds
``task_specs/`` and ``dbt_projects/``); a path not found there is taken from the working
directory (a checkout's test fixtures)."""

BUILTIN_SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts"
"""The scripts shipped with the mock (package data), loaded by default."""

_FILE_REF_KEYS = ("$file", "$script_file")


class ScriptFileError(ConfigError):
    """A script's ``$file`` / ``$script_file`` reference names a file that cannot be read."""


@dataclass(frozen=True)
class ScriptCatalog:
    """The scripts a server answers, and the shipped ones it cannot (name -> why)."""

    scripts: dict[str, Script] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


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
    builtin_scripts: bool = Field(
        default=True,
        description="also load the shipped scripts (BUILTIN_SCRIPTS_DIR), under scripts_dir "
        "and scripts",
    )
    fallback_model: str | None = Field(
        default=None,
        description="answer models that are not mock-* as this mock model (e.g. 'mock-echo'); "
        "None: such models get 404",
    )
    judge_labels_file: Path | None = Field(
        default=None,
        description="truth labels (JSON lines {case_id, label, ...}) the noisy mock judges "
        "(mock-judge-noisy:<params>) answer from; see agents/mock_llm/noisy_judge.py",
    )

    def catalog(self) -> ScriptCatalog:
        """The shipped scripts (if ``builtin_scripts``), overlaid with ``scripts_dir``, then
        ``scripts``. ConfigError names a bad file; a shipped script whose referenced file is
        missing is only listed as unavailable."""
        found: dict[str, Script] = {}
        unavailable: dict[str, str] = {}
        if self.builtin_scripts:
            found, unavailable = load_builtin_scripts()
        if self.scripts_dir is not None:
            found.update(load_scripts_dir(self.scripts_dir))
        found.update(self.scripts)
        return ScriptCatalog(
            scripts=found, unavailable={k: v for k, v in unavailable.items() if k not in found}
        )

    def all_scripts(self) -> dict[str, Script]:
        """The scripts the server answers (see ``catalog``)."""
        return self.catalog().scripts


def load_script(path: Path, *, project_root: Path | None = None) -> Script:
    """One script file, its file references replaced by their text (see the module doc);
    ``project_root`` (default ``PROJECT_ROOT``) is the base of relative ``$file`` paths."""
    path = Path(path)
    project_root = PROJECT_ROOT if project_root is None else Path(project_root)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else read_yaml(text)
        data = _resolve_file_refs(data, (), script=path, project_root=project_root)
        if isinstance(data, dict):
            data.setdefault("policy", "scripted")
        return _ScriptFile.model_validate({"script": data}).script
    except (OSError, ValueError) as exc:  # ValidationError and JSON errors are ValueErrors
        detail = exc if not isinstance(exc, ValidationError) else _describe(exc)
        raise ConfigError(f"{path}: invalid mock script: {detail}") from None


def load_scripts_dir(directory: Path, *, project_root: Path | None = None) -> dict[str, Script]:
    directory = Path(directory)
    if not directory.is_dir():
        raise ConfigError(f"mock scripts folder {directory} does not exist")
    return {
        path.stem: load_script(path, project_root=project_root) for path in _script_paths(directory)
    }


def load_builtin_scripts(
    directory: Path | None = None, *, project_root: Path | None = None
) -> tuple[dict[str, Script], dict[str, str]]:
    """The scripts in ``directory`` (default ``BUILTIN_SCRIPTS_DIR``), and (name -> why) those
    whose referenced files cannot be read; any other problem is a ConfigError."""
    directory = BUILTIN_SCRIPTS_DIR if directory is None else Path(directory)
    scripts: dict[str, Script] = {}
    unavailable: dict[str, str] = {}
    for path in _script_paths(directory) if directory.is_dir() else []:
        try:
            scripts[path.stem] = load_script(path, project_root=project_root)
        except ScriptFileError as exc:
            unavailable[path.stem] = str(exc)
    return scripts, unavailable


def _script_paths(directory: Path) -> list[Path]:
    return [p for p in sorted(directory.iterdir()) if p.suffix in {".yaml", ".yml", ".json"}]


def _resolve_file_refs(
    node: Any, where: tuple[str | int, ...], *, script: Path, project_root: Path
) -> Any:
    """``node`` with every ``{$file: ...}`` / ``{$script_file: ...}`` replaced by file text."""
    if isinstance(node, list):
        return [
            _resolve_file_refs(v, (*where, i), script=script, project_root=project_root)
            for i, v in enumerate(node)
        ]
    if not isinstance(node, dict):
        return node
    keys = [k for k in node if k in _FILE_REF_KEYS]
    if not keys:
        return {
            k: _resolve_file_refs(v, (*where, k), script=script, project_root=project_root)
            for k, v in node.items()
        }
    field_path = ".".join(str(p) for p in where) or "<root>"
    key = keys[0]
    ref = node[key]
    if len(node) != 1 or not isinstance(ref, str) or not ref:
        raise ConfigError(
            f"{script}: {field_path}: a file reference is a mapping with the single key "
            f"$file or $script_file and a path, got {node!r}"
        )
    base = project_root if key == "$file" else script.parent
    target = base / ref
    if key == "$file" and not target.exists() and (Path.cwd() / ref).exists():
        target = Path.cwd() / ref
    try:
        return target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = "does not exist" if isinstance(exc, FileNotFoundError) else f"cannot be read: {exc}"
        raise ScriptFileError(f"{script}: {field_path}: {key} {ref!r} ({target}) {why}") from None


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'][1:]) or '<root>'}: {err['msg']}"
        for err in exc.errors()
    )

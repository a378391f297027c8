"""Policies: who answers a request, chosen by its ``model`` name.

    mock-echo[:anything]      EchoPolicy: answers the last user message
    mock-script:<name>        the script <name> (scripted, tool_sequence or keyed)
    mock-scripted             the script named in the system prompt: "mock-script: <name>"
    mock-judge[-<variant>]    a mock LLM judge (``judge_policies``: faithful, obedient,
                              malformed:<n>, broken, noisy:<params>)

A policy is stateless: it reads the turn from the conversation (the number of assistant
messages so far), so retries, concurrency and caching cannot make it skip or repeat a turn.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from benchforge.agents.mock_llm.config import (
    KeyedScript,
    Script,
    ScriptedReply,
    ScriptedScript,
    ToolSequenceScript,
)
from benchforge.core.errors import BenchforgeError

SCRIPT_KEY_PATTERN = re.compile(r"mock-script:\s*([A-Za-z0-9_.\-]+)")


class PolicyError(BenchforgeError):
    """The request cannot be answered (unknown script, script exhausted, tool not offered);
    the server answers ``status`` with an OpenAI-style error body."""

    def __init__(self, message: str, *, status: int = 400, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class PolicyRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    headers: dict[str, str] = Field(
        default_factory=dict, description="the HTTP request's headers, names lower-cased"
    )

    @property
    def turn(self) -> int:
        """Assistant turns already in the conversation."""
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    def offered_tools(self) -> set[str]:
        names = set()
        for tool in self.tools:
            spec = tool.get("function") or tool.get("custom") or {}
            if isinstance(spec, Mapping) and "name" in spec:
                names.add(str(spec["name"]))
        return names


class PolicyToolCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str


class PolicyReply(BaseModel):
    model_config = ConfigDict(frozen=True)

    content: str | None = None
    tool_calls: list[PolicyToolCall] = Field(default_factory=list)

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


class Policy(Protocol):
    """Given the messages and tools, return text or tool calls."""

    name: str

    def reply(self, request: PolicyRequest) -> PolicyReply: ...


def message_text(message: Mapping[str, Any]) -> str:
    """Text of a message whose content is a string or a list of parts."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return str(content)


class EchoPolicy:
    """Answers with the text of the last user message."""

    name = "echo"

    def reply(self, request: PolicyRequest) -> PolicyReply:
        for message in reversed(request.messages):
            if message.get("role") == "user":
                return PolicyReply(content=message_text(message))
        return PolicyReply(content="")


class ScriptedPolicy:
    """Replays ``script.replies``: the k-th assistant turn gets reply k."""

    name = "scripted"

    def __init__(self, script_name: str, script: ScriptedScript) -> None:
        self.script_name = script_name
        self.script = script

    def reply(self, request: PolicyRequest) -> PolicyReply:
        turn = request.turn
        if turn >= len(self.script.replies):
            raise PolicyError(
                f"mock script {self.script_name!r} is exhausted: it has "
                f"{len(self.script.replies)} replies and the conversation asks for reply "
                f"{turn + 1}",
                code="mock_script_exhausted",
            )
        return _to_reply(self.script.replies[turn], self.script_name, turn)


class ToolSequencePolicy:
    """One tool call per turn from ``script.tool_calls``, then ``script.final``."""

    name = "tool_sequence"

    def __init__(self, script_name: str, script: ToolSequenceScript) -> None:
        self.script_name = script_name
        self.script = script

    def reply(self, request: PolicyRequest) -> PolicyReply:
        turn = request.turn
        if turn < len(self.script.tool_calls):
            step = ScriptedReply(tool_calls=[self.script.tool_calls[turn]])
            return _to_reply(step, self.script_name, turn)
        return PolicyReply(content=self.script.final)


class KeyedPolicy:
    """The first reply of ``script.replies`` whose keys the request matches (system prompt,
    last user message); stateless like the others, so a role can be asked again and again."""

    name = "keyed"

    def __init__(self, script_name: str, script: KeyedScript) -> None:
        self.script_name = script_name
        self.script = script

    def reply(self, request: PolicyRequest) -> PolicyReply:
        system = " ".join(
            message_text(m) for m in request.messages if m.get("role") in {"system", "developer"}
        )
        users = [message_text(m) for m in request.messages if m.get("role") == "user"]
        user = users[-1] if users else ""
        for keyed in self.script.replies:
            if (
                keyed.system in system
                and all(text in user for text in keyed.when)
                and not any(text in user for text in keyed.unless)
            ):
                return PolicyReply(content=keyed.content)
        raise PolicyError(
            f"mock script {self.script_name!r} has no reply for this request (system prompt "
            f"starts {system[:80]!r})",
            code="mock_script_no_match",
        )


def _to_reply(reply: ScriptedReply, script_name: str, turn: int) -> PolicyReply:
    calls = [
        PolicyToolCall(
            id=call.id or _call_id(script_name, turn, i),
            name=call.name,
            arguments=call.arguments_json(),
        )
        for i, call in enumerate(reply.tool_calls)
    ]
    return PolicyReply(content=reply.content, tool_calls=calls)


def _call_id(script_name: str, turn: int, index: int) -> str:
    digest = hashlib.sha256(f"{script_name}:{turn}:{index}".encode()).hexdigest()[:20]
    return f"call_{digest}"


def policy_for_script(name: str, script: Script) -> Policy:
    if isinstance(script, ScriptedScript):
        return ScriptedPolicy(name, script)
    if isinstance(script, KeyedScript):
        return KeyedPolicy(name, script)
    return ToolSequencePolicy(name, script)


class PolicyResolver:
    """Maps a request to its policy; ``custom`` policies are matched by exact model name.
    ``unavailable`` (script name -> why) answers those scripts 404 ``mock_script_unavailable``."""

    def __init__(
        self,
        scripts: Mapping[str, Script],
        *,
        custom: Mapping[str, Policy] | None = None,
        fallback_model: str | None = None,
        unavailable: Mapping[str, str] | None = None,
        judge_labels_file: Path | None = None,
    ) -> None:
        self.scripts = dict(scripts)
        self.judge_labels_file = judge_labels_file  # the noisy judges' known labels
        self.unavailable = dict(unavailable or {})
        self.custom = dict(custom or {})
        self.fallback_model = fallback_model
        self._echo = EchoPolicy()

    def model_names(self) -> list[str]:
        names = ["mock-echo", "mock-scripted", "mock-judge", "mock-judge-obedient"]
        names.append("mock-judge-broken")
        names += [f"mock-script:{name}" for name in sorted(self.scripts)]
        names += sorted(self.custom)
        return names

    def resolve(self, request: PolicyRequest) -> Policy:
        model = request.model
        if model in self.custom:
            return self.custom[model]
        if not model.startswith("mock-") and self.fallback_model is not None:
            model = self.fallback_model
        if model == "mock-echo" or model.startswith("mock-echo:"):
            return self._echo
        if model.startswith("mock-script:"):
            return self._script(model.removeprefix("mock-script:"))
        if model == "mock-scripted":
            system = " ".join(
                message_text(m)
                for m in request.messages
                if m.get("role") in {"system", "developer"}
            )
            found = SCRIPT_KEY_PATTERN.search(system)
            if found is None:
                raise PolicyError(
                    "model mock-scripted needs 'mock-script: <name>' in the system prompt"
                )
            return self._script(found.group(1))
        if model == "mock-judge" or model.startswith("mock-judge-"):
            # Imported here: the judge policies import this module (and the judges library).
            from benchforge.agents.mock_llm.judge_policies import judge_policy

            return judge_policy(model, self.judge_labels_file)
        raise PolicyError(
            f"The model '{request.model}' does not exist on the benchforge mock server "
            f"(known: {', '.join(self.model_names())})",
            status=404,
            code="model_not_found",
        )

    def _script(self, name: str) -> Policy:
        script = self.scripts.get(name)
        if script is None and name in self.unavailable:
            raise PolicyError(
                f"mock script {name!r} is unavailable here: {self.unavailable[name]}",
                status=404,
                code="mock_script_unavailable",
            )
        if script is None:
            known = ", ".join(sorted(self.scripts)) or "none"
            raise PolicyError(
                f"no mock script named {name!r} (loaded: {known})",
                status=404,
                code="model_not_found",
            )
        return policy_for_script(name, script)

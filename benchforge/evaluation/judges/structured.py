"""Structured judge replies: ask for JSON, validate it, retry with the error, never guess.

``ask_json`` sends the conversation (with the reply's JSON schema as ``response_format`` when
``JudgeSettings.json_schema``), parses the reply as JSON into a pydantic model and, when the
reply does not parse or validate, appends it and a user message quoting the problem and asks
again, up to ``JudgeSettings.max_attempts`` replies. A reply that never validates gives
``value=None`` (the caller leaves the item *unscored*, never 0). An ``LlmError`` (retries of the
client exhausted, request rejected) ends it at once: ``value=None``, ``infrastructure=True``.

The retry conversation is a pure function of the replies, so with the response cache a
re-judged output replays every attempt from the cache.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchforge.core.llm import LlmError
from benchforge.evaluation.judges.client import Judge, Message

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(?P<body>.*?)\n?```\s*$", re.DOTALL)
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")
MAX_ERROR_CHARS = 1500


class StructuredReply(BaseModel, Generic[T]):
    """The validated reply (None: none validated, or the call failed) and how it went."""

    model_config = ConfigDict(frozen=True)

    value: T | None
    attempts: int = Field(description="replies received (and answers tried)")
    error: str | None = Field(default=None, description="the last problem, when value is None")
    infrastructure: bool = Field(default=False, description="an LlmError ended it")
    raw: list[str | None] = Field(default_factory=list, description="every reply's content")


def response_format(reply_model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI ``response_format`` asking for ``reply_model``'s JSON schema (not strict:
    strict mode forbids optional fields and open objects, which the replies use)."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": _SCHEMA_NAME.sub("_", reply_model.__name__)[:64],
            "schema": reply_model.model_json_schema(),
            "strict": False,
        },
    }


def parse_json_reply(content: str | None, reply_model: type[T]) -> T:
    """``content`` (a JSON object, possibly in a ```json fence) as ``reply_model``; raises
    ``ValueError`` (``ValidationError`` is one) with a message fit to send back."""
    if content is None or not content.strip():
        raise ValueError("the reply was empty; expected one JSON object")
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected one JSON object, got {type(data).__name__}")
    return reply_model.model_validate(data)


def _describe(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        parts = [
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        ]
        text = "; ".join(parts)
    else:
        text = str(exc)
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


async def ask_json(
    judge: Judge,
    messages: Sequence[Message],
    reply_model: type[T],
    *,
    check: Callable[[T], None] | None = None,
) -> StructuredReply[T]:
    """Ask until a reply validates as ``reply_model`` (and passes ``check``, which raises
    ``ValueError`` with a message for the judge: e.g. an item id that was not asked for)."""
    conversation: list[Message] = list(messages)
    kwargs: dict[str, Any] = {}
    if judge.settings.json_schema:
        kwargs["extra_body"] = {"response_format": response_format(reply_model)}
    raw: list[str | None] = []
    error: str | None = None
    for attempt in range(1, judge.settings.max_attempts + 1):
        try:
            response = await judge.complete(conversation, **kwargs)
        except LlmError as exc:
            return StructuredReply[T](
                value=None,
                attempts=attempt - 1,
                error=f"{type(exc).__name__}: {exc}",
                infrastructure=True,
                raw=raw,
            )
        raw.append(response.content)
        try:
            value = parse_json_reply(response.content, reply_model)
            if check is not None:
                check(value)
        except ValueError as exc:
            error = _describe(exc)
            conversation = [
                *conversation,
                {"role": "assistant", "content": response.content or ""},
                {
                    "role": "user",
                    "content": (
                        f"That reply cannot be used: {error}\n"
                        "Answer again with only the JSON object the instructions ask for "
                        "(no prose, no code fence), fixing the problem above."
                    ),
                },
            ]
            continue
        return StructuredReply[T](value=value, attempts=attempt, raw=raw)
    return StructuredReply[T](value=None, attempts=len(raw), error=error, raw=raw)

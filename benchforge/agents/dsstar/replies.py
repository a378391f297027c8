"""Reading the roles' replies: code out of a reply, the verifier's verdict and the router's
decision, tolerant of the labels models actually write ("Yes", "Sufficient", "Step 3 is
wrong", "add step", markdown around them)."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_CODE_LANGUAGES = {"python", "py", "python3", ""}
_WORD = re.compile(r"[a-z]+")
_STEP = re.compile(r"\bstep\s*#?\s*(\d+)", re.IGNORECASE)


class ReplyError(ValueError):
    """A reply that says nothing the agent can act on (no code, no verdict)."""


def extract_code(reply: str | None) -> str:
    """The script in a reply: its last fenced python block (models often show a snippet
    first), else the whole reply when it has no fence at all."""
    text = reply or ""
    blocks = [
        body for language, body in _FENCE.findall(text) if language.lower() in _CODE_LANGUAGES
    ]
    if blocks:
        code = blocks[-1]
    elif "```" in text:
        raise ReplyError("the reply has no python code block")
    else:
        code = text
    if not code.strip():
        raise ReplyError("the reply holds no code")
    return code.strip() + "\n"


_YES = {"yes", "sufficient", "enough", "true", "complete", "correct", "answered", "done"}
_NO = {"no", "insufficient", "not", "false", "incomplete", "partial", "missing", "more"}


def parse_verdict(reply: str | None) -> bool:
    """The verifier's verdict: True for sufficient. The first verdict word decides ("No, not
    yet sufficient" is False; "Sufficient." is True); a reply with neither is insufficient, so
    an unreadable verifier costs a round, never a premature answer."""
    for word in _WORD.findall((reply or "").lower()):
        if word in _NO:
            return False
        if word in _YES:
            return True
    return False


class Route(BaseModel):
    """The router's decision: ``add`` a step, or the plan is wrong from step ``wrong_step``
    (1-based) on: keep the steps before it and plan again."""

    model_config = ConfigDict(frozen=True)

    action: Literal["add", "truncate"]
    wrong_step: int | None = None


def parse_route(reply: str | None, steps: int) -> Route:
    """``Step j is wrong`` (any spelling: "step 3", "Step #3", "**Step 3**") truncates when
    ``1 <= j <= steps``; "Add Step", a step number out of range, or anything else adds."""
    text = reply or ""
    lowered = text.lower()
    found = _STEP.search(text)
    if found is not None and "add step" not in lowered[: found.start()]:
        number = int(found.group(1))
        if 1 <= number <= steps and "add" not in lowered[found.start() - 8 : found.start()]:
            return Route(action="truncate", wrong_step=number)
    return Route(action="add")


def extract_json(reply: str | None) -> dict[str, Any]:
    """The first JSON object in a reply: a fenced ``json`` block, else the outermost braces."""
    text = reply or ""
    for language, body in _FENCE.findall(text):
        if language.lower() == "json":
            return _object(body)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ReplyError("the reply holds no JSON object")
    return _object(text[start : end + 1])


def _object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ReplyError(f"the reply's JSON does not parse: {exc}") from None
    if not isinstance(value, dict):
        raise ReplyError("the reply's JSON is not an object")
    return value

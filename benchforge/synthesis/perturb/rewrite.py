"""Templated sentences rewritten through the LLM client ("change as little as possible"), for
embeddings whose rule asks for it (``embed[].rewrite``; off by default).

A rewrite is kept only when every value the sentence carries still appears in it verbatim:
otherwise the template sentence stays and the record says why. A failed call (the client's
retries exhausted) keeps the template sentence too, recorded with the error: never a silent
loss. Replies are cached on disk by (model, prompt version, sentence), so a rebuild asks
nothing it asked before and writes the same texts; a failed call is not cached (the next
build asks again).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from benchforge.core.llm import LlmClient, LlmConfig, LlmError, run_blocking

PROMPT_VERSION = 1
SYSTEM_PROMPT = (
    "You rewrite one sentence from a business record so it reads like a person wrote it. "
    "Change as little as possible. Keep every fact. Keep each of these values exactly as "
    "written, character for character: {values}. Do not add facts, quotes, notes or "
    "explanations. Answer with the rewritten sentence only."
)
REWRITES_DIR = "sentence-rewrites"


class SentenceRewrite(BaseModel):
    """One distinct template sentence and what became of it."""

    sentence: str
    values: list[str]
    rows: int
    rewritten: str | None = None  # the model's reply; None when the call failed
    accepted: bool = False
    reason: str | None = None  # why the template sentence was kept


def default_cache_dir() -> Path:
    root = os.environ.get("BENCHFORGE_CACHE_DIR") or Path.home() / ".cache" / "benchforge"
    return Path(root) / REWRITES_DIR


def missing_values(rewritten: str, values: Sequence[str]) -> list[str]:
    """The values that no longer appear verbatim in ``rewritten``."""
    return [value for value in values if value not in rewritten]


class SentenceRewriter:
    """Rewrites sentences with one model through the project's LLM client.
    ``config_for(model)``: the client's config for that model (endpoint, key, retries)."""

    def __init__(
        self, config_for: Callable[[str], LlmConfig], cache_dir: Path | None = None
    ) -> None:
        self.config_for = config_for
        self.cache_dir = cache_dir or default_cache_dir()

    def rewrite(
        self, model: str, sentences: Sequence[tuple[str, list[str], int]]
    ) -> list[SentenceRewrite]:
        """``sentences``: (sentence, the values it must keep, rows carrying it)."""
        found = [
            SentenceRewrite(sentence=s, values=values, rows=rows) for s, values, rows in sentences
        ]
        replies: dict[str, str | LlmError] = {}
        asking = []
        for item in found:
            cached = self._cached(model, item.sentence)
            if cached is not None:
                replies[item.sentence] = cached
            else:
                asking.append(item)
        if asking:
            replies.update(run_blocking(self._ask(model, asking)))
        for item in found:
            reply = replies[item.sentence]
            if isinstance(reply, LlmError):
                item.reason = f"LLM call failed after {reply.attempts} attempt(s): {reply}"
                continue
            item.rewritten = reply
            lost = missing_values(reply, item.values)
            if not reply:
                item.reason = "the rewrite is empty"
            elif lost:
                item.reason = "the rewrite drops " + ", ".join(repr(v) for v in lost)
            else:
                item.accepted = True
        return found

    async def _ask(self, model: str, items: Sequence[SentenceRewrite]) -> dict[str, str | LlmError]:
        async with LlmClient(self.config_for(model)) as client:

            async def one(item: SentenceRewrite) -> tuple[str, str | LlmError]:
                values = ", ".join(json.dumps(v) for v in item.values)
                messages = [
                    {"role": "system", "content": SYSTEM_PROMPT.format(values=values)},
                    {"role": "user", "content": item.sentence},
                ]
                try:
                    reply = await client.complete(messages, temperature=0.0)
                except LlmError as err:
                    return item.sentence, err
                text = " ".join((reply.content or "").split())
                self._store(model, item.sentence, text)
                return item.sentence, text

            return dict(await asyncio.gather(*(one(item) for item in items)))

    def _path(self, model: str, sentence: str) -> Path:
        key = hashlib.sha256(f"{model}\0{PROMPT_VERSION}\0{sentence}".encode()).hexdigest()
        return self.cache_dir / f"{key}.json"

    def _cached(self, model: str, sentence: str) -> str | None:
        path = self._path(model, sentence)
        if not path.is_file():
            return None
        entry = json.loads(path.read_text(encoding="utf-8"))
        return str(entry["rewritten"])

    def _store(self, model: str, sentence: str, rewritten: str) -> None:
        path = self._path(model, sentence)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "model": model,
            "prompt_version": PROMPT_VERSION,
            "sentence": sentence,
            "rewritten": rewritten,
        }
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
        tmp.write_text(json.dumps(entry, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)

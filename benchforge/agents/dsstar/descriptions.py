"""The analyzer: a description of every lake file, from a script the model writes for it and
the sandbox runs, cached by the file's content hash so that a lake shared by many tasks (and
trials) is described once.

The cache key is the file's SHA-256, the analyzer's model and ``ANALYZER_VERSION``: the same
bytes anywhere, under any name, reuse the description; a changed file or another analyzer
model describes again. An entry is one JSON file ``<key>.json`` (the script and its output),
written whole by a rename, so concurrent trials never read half of one. A file the analyzer
could not describe is not cached (the next trial tries again)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from benchforge.agents.dsstar import prompts
from benchforge.agents.dsstar.calls import RoleModels, run_debugged
from benchforge.agents.dsstar.config import DsStarConfig
from benchforge.agents.dsstar.lake import file_digest, lake_root
from benchforge.agents.dsstar.replies import ReplyError, extract_code
from benchforge.agents.protocol import TaskEnvironment

ANALYZER_VERSION = "1"
"""Bumped when the analyzer's prompt changes what a description says."""


class FileDescription(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    text: str
    script: str | None = None
    cached: bool = False
    ok: bool = True


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "benchforge" / "ds-star"


class DescriptionCache:
    """Descriptions by file content (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def key(digest: str, model: str) -> str:
        return hashlib.sha256(f"{digest}\0{model}\0{ANALYZER_VERSION}".encode()).hexdigest()

    def get(self, key: str) -> tuple[str, str] | None:
        try:
            entry = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
            return str(entry["script"]), str(entry["description"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, script: str, description: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"script": script, "description": description})
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(payload)
        os.replace(tmp, self.folder / f"{key}.json")


async def describe_lake(
    env: TaskEnvironment, roles: RoleModels, config: DsStarConfig, files: list[str]
) -> list[FileDescription]:
    """A description of each of ``files`` (lake-relative), in their order, described
    ``analyzer_concurrency`` at a time."""
    cache = DescriptionCache(config.description_cache_dir or default_cache_dir())
    model = roles.view("analyzer").config.model
    gate = asyncio.Semaphore(config.analyzer_concurrency)

    async def one(path: str) -> FileDescription:
        async with gate:
            return await describe_file(env, roles, config, cache, model, path)

    return list(await asyncio.gather(*(one(path) for path in files)))


async def describe_file(
    env: TaskEnvironment,
    roles: RoleModels,
    config: DsStarConfig,
    cache: DescriptionCache,
    model: str,
    path: str,
) -> FileDescription:
    digest = await asyncio.to_thread(file_digest, lake_root(env) / path)
    key = cache.key(digest, model)
    hit = cache.get(key)
    if hit is not None:
        return FileDescription(path=path, script=hit[0], text=hit[1], cached=True)
    reply = await roles.ask(
        "analyzer", prompts.ANALYZER, prompts.analyzer_user(path), temperature=config.temperature
    )
    try:
        code = extract_code(reply)
    except ReplyError as exc:
        return FileDescription(path=path, text=f"(not described: {exc})", ok=False)
    run = await run_debugged(
        env,
        roles,
        code,
        role="analyzer",
        limits=config.scripts,
        attempts=config.max_debug_attempts,
        summary_chars=config.traceback_summary_chars,
        files=None,
        args=(path,),
        temperature=config.temperature,
    )
    text = run.report(config.scripts.output_chars)
    if not run.ok:
        return FileDescription(
            path=path, script=run.code, text=f"(not described)\n{text}", ok=False
        )
    with contextlib.suppress(OSError):  # a read-only cache costs speed, not the trial
        cache.put(key, run.code, text)
    return FileDescription(path=path, script=run.code, text=text)

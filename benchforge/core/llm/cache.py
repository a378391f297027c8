"""On-disk response cache: one JSON file per request, named by the sha256 of its key.

The key is the canonical JSON of everything that shapes the answer: base URL, the request
body (model, messages, tools, tool choice, temperature, max tokens, extra fields) and the
``epoch``, so repeated samples of one prompt (epochs) are distinct entries. The API key,
timeouts and retry settings are not part of it. Writes are atomic (temp file + os.replace),
so concurrent writers of one key leave one whole file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CACHE_FORMAT_VERSION = 1

log = logging.getLogger(__name__)


def cache_key_payload(base_url: str, body: dict[str, Any], epoch: int) -> dict[str, Any]:
    return {
        "format": CACHE_FORMAT_VERSION,
        "base_url": base_url.rstrip("/"),
        "epoch": epoch,
        "request": body,
    }


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(payload: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class ResponseCache:
    """A folder of ``<sha256>.json`` files, each ``{"key": ..., "response": ..., ...}``."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response body, or None. An unreadable entry is logged and ignored (the
        call is made again and overwrites it)."""
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            entry = json.loads(text)
            response = entry["response"]
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring unreadable LLM cache entry %s: %s", path, exc)
            return None
        if not isinstance(response, dict):
            log.warning("ignoring LLM cache entry %s: response is not an object", path)
            return None
        return response

    def put(self, key: str, payload: dict[str, Any], response: dict[str, Any]) -> Path:
        entry = {
            "key": payload,
            "response": response,
            "written_at": datetime.now(UTC).isoformat(),
        }
        path = self.path(key)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{key[:16]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, ensure_ascii=False, indent=1)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

"""Errors raised by the LLM client; both carry the attempt count and the last HTTP status.

They are errors, never answers: a caller records them as infrastructure failures (retried,
kept out of score denominators), it does not turn them into a 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchforge.core.errors import BenchforgeError

if TYPE_CHECKING:
    from benchforge.core.llm.records import LlmCallRecord


class LlmError(BenchforgeError):
    """A chat completion could not be obtained."""

    def __init__(
        self,
        message: str,
        *,
        attempts: int,
        last_status: int | None,
        record: LlmCallRecord | None = None,
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_status = last_status
        self.record = record


class LlmInfrastructureError(LlmError):
    """The provider failed: retries exhausted on 429 / 5xx / timeouts / connection errors, or
    the endpoint is misconfigured (401, 403, 404) or answered something unreadable."""


class LlmRequestError(LlmError):
    """The provider rejected the request itself (400, 413, 422: e.g. context too long).

    Not retried: the same request would be rejected again.
    """

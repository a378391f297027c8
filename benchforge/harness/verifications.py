"""Stored task verifications: every ``task verify`` (and the nightly's) keeps each task's
checks in the artifact store (``LAYOUT.verification``), the last one per task version, so the
catalogue page can show whether each task verifies without verifying it again. The family's
typed record is left out: the checks are what every reader understands."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from pydantic import ValidationError

from benchforge.core.artifacts import LAYOUT, ArtifactStore
from benchforge.core.records.verification import TaskVerification


def write_verifications(store: ArtifactStore, results: Iterable[TaskVerification]) -> None:
    now = datetime.now(UTC)
    for result in results:
        kept = result.model_copy(update={"verified_at": now, "record": None})
        store.put_bytes(LAYOUT.verification(result.task), kept.model_dump_json(indent=1).encode())


def read_verifications(store: ArtifactStore) -> dict[str, TaskVerification]:
    """task key (``suite/id@version``) -> its last stored verification; a file that does not
    read as one is left out (a verification is a convenience, never a reason to fail)."""
    found: dict[str, TaskVerification] = {}
    for info in store.list(f"{LAYOUT.VERIFICATIONS}/"):
        try:
            verification = TaskVerification.model_validate_json(store.get_bytes(info.key))
        except (ValidationError, ValueError):
            continue
        found[verification.task] = verification
    return found

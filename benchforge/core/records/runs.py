"""A run's record: the parameters it was started with (``run.json``) and its identity."""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.records.trials import AgentLimits


class LlmOptions(BaseModel):
    """Client settings of a run's agent models (see ``LlmConfig``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=120.0, gt=0, description="per HTTP attempt")
    max_retries: int = Field(default=5, ge=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    requests_per_minute: float | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)


MAX_LISTED = 6


class RunIdentity(BaseModel):
    """Recorded in ``run.json``; two requests are the same run when these are equal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tasks: dict[str, str]
    """task key -> digest of the task folder (a task edited without a version bump differs)"""
    agents: dict[str, str]
    """agent spelling -> hash of its configuration"""
    models: list[str]
    epochs: int
    limits: AgentLimits
    llm: LlmOptions
    datasets: dict[str, str]
    """task key -> version of the dataset its agents see"""
    heldout_datasets: dict[str, str]
    """task key -> version of the held-out dataset its trials are scored on"""

    def differences(self, asked: RunIdentity) -> list[str]:
        """Human-readable lines: what ``asked`` changes against this (recorded) identity."""
        lines: list[str] = []
        recorded = self.model_dump(mode="json")
        wanted = asked.model_dump(mode="json")
        for name in type(self).model_fields:
            before, after = recorded[name], wanted[name]
            if before == after:
                continue
            if isinstance(before, dict) and isinstance(after, dict):
                lines += _dict_changes(name, before, after)
            else:
                lines.append(f"{name}: {_short(before)} (recorded) vs {_short(after)} (asked)")
        return lines


def _dict_changes(name: str, before: dict[str, object], after: dict[str, object]) -> list[str]:
    changes = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) == after.get(key):
            continue
        was = _short(before[key]) if key in before else "absent"
        now = _short(after[key]) if key in after else "absent"
        changes.append(f"{name}[{key}]: {was} (recorded) vs {now} (asked)")
    if len(changes) > MAX_LISTED:
        changes = [*changes[:MAX_LISTED], f"{name}: ... and {len(changes) - MAX_LISTED} more"]
    return changes


def _short(value: object) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "..."


class RunSpec(BaseModel):
    """Written once as the run's spec (``runs/<run_id>/run.json``); a rerun must ask for the same
    inputs."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    suites: list[str]
    tasks_root: str
    agents: list[str]
    models: list[str]
    epochs: int = Field(ge=1)
    limits: AgentLimits
    llm_base_url: str | None = None
    mock_llm: bool = False
    datasets: dict[str, str] = Field(
        default_factory=dict, description="task key -> local dataset folder it ran on"
    )
    heldout_datasets: dict[str, str] = Field(
        default_factory=dict,
        description="task key -> the held-out dataset its trials are scored on (same spec and "
        "scale, a secret seed); absent for tasks on a custom dataset",
    )
    identity: RunIdentity | None = Field(
        default=None, description="every input that decides the results (absent in old runs)"
    )
    created_at: datetime

    def matrix(self) -> tuple[object, ...]:
        """What a rerun under the same run id must ask for again."""
        return (sorted(self.suites), self.agents, self.models, self.epochs)

"""What a ds-star trajectory says per role: calls, tokens, cost, latency, and the rounds to
sufficiency, for a report comparing agents (the paper's cost table: calls and tokens per
task, rounds on easy and hard tasks)."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from benchforge.agents.dsstar.replies import parse_verdict
from benchforge.core.records import Step


class RoleUsage(BaseModel):
    """One role's model calls in one trial. ``cost_usd`` is None when any call was unpriced."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    seconds: float = 0.0
    failed: int = 0


def usage_by_role(steps: Iterable[Step]) -> dict[str, RoleUsage]:
    """Model steps summed by ``Step.role`` (a step without one under ``"-"``)."""
    usage: dict[str, RoleUsage] = {}
    for step in steps:
        if step.kind != "model":
            continue
        role = usage.setdefault(step.role or "-", RoleUsage())
        role.calls += 1
        role.prompt_tokens += step.prompt_tokens or 0
        role.completion_tokens += step.completion_tokens or 0
        role.seconds += step.seconds
        role.failed += 0 if step.ok else 1
        if role.cost_usd is not None:
            role.cost_usd = None if step.cost_usd is None else role.cost_usd + step.cost_usd
    return usage


def rounds_to_sufficiency(steps: Iterable[Step]) -> int | None:
    """Verifier calls up to and including the first that found the plan sufficient; None when
    none did (the rounds ran out, or the trial stopped first)."""
    rounds = 0
    for step in steps:
        if step.kind == "model" and step.role == "verifier":
            rounds += 1
            if step.ok and parse_verdict(step.output):
                return rounds
    return None

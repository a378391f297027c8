"""What ``benchforge task verify`` found for one task, whatever its family.

Every verifiable family fills the same record: a list of named checks, each with what was
expected, what was observed and whether it passed. Two groups are common to all of them:
``reference`` (the family's reference solution scores full marks) and ``empty`` (the
do-nothing submission scores 0); the rest are the family's own (DE: ``mutations`` and
``reward hacks``; judged families: ``wrong anchors``, ``claims``, ``reward hacks``).

``record`` keeps the family's own typed detail (DE's score triples per mutation and hack, the
judged families' verdicts) for the code that knows that family; everything that shows or
counts verifications across families (the verify table, the CLI, the nightly) reads the checks.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

REFERENCE = "reference"
EMPTY = "empty"
HACKS = "reward hacks"


class VerificationCheck(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="e.g. 'gold', 'empty', 'mutation drop_orders_filter'")
    group: str = Field(description="reference, empty, or the family's own: mutations, ...")
    expected: str
    observed: str
    passed: bool
    detail: str = Field(default="", description="why it failed, or what it checked, short")
    score: float | None = Field(
        default=None, description="the observed primary metric (0-100), when it is a score"
    )

    @classmethod
    def of_score(
        cls, name: str, group: str, observed: float | None, expected: float
    ) -> VerificationCheck:
        """A check that a primary score (0-100) is exactly ``expected``."""
        return cls(
            name=name,
            group=group,
            expected=f"{expected:g}",
            observed="unscored" if observed is None else f"{observed:g}",
            passed=observed == expected,
            score=observed,
        )


class TaskVerification(BaseModel):
    task: str
    dataset: str = Field(default="", description="the dataset folder the checks scored on")
    checks: list[VerificationCheck] = Field(default_factory=list)
    problems: list[str] = Field(
        default_factory=list, description="every failed check, and problems found before any"
    )
    record: SerializeAsAny[BaseModel] | None = Field(
        default=None, description="the family's own typed detail of the same checks"
    )
    verified_at: datetime | None = Field(
        default=None, description="when it was stored (LAYOUT.verification): the last verify"
    )

    @property
    def ok(self) -> bool:
        return not self.problems

    def group(self, name: str) -> list[VerificationCheck]:
        return [c for c in self.checks if c.group == name]

    def groups(self) -> list[str]:
        """The groups of the checks, in the order they were made."""
        return list(dict.fromkeys(c.group for c in self.checks))

    def tally(self, group: str) -> str:
        """``passed/total`` of a group's checks; ``-`` when it has none."""
        checks = self.group(group)
        return f"{sum(c.passed for c in checks)}/{len(checks)}" if checks else "-"

    def score(self, group: str) -> float | None:
        """The primary score of a one-check group (reference, empty); None when unscored."""
        checks = self.group(group)
        return checks[0].score if len(checks) == 1 else None

    def shown(self, group: str) -> str:
        """A one-check group (reference, empty) as ``name observed``; others as their tally."""
        checks = self.group(group)
        if len(checks) == 1:
            return f"{checks[0].name} {checks[0].observed}"
        return self.tally(group)

"""What the transformation pass did: per table and column, the rule applied and its counts.
The report reads it (collisions, generalization levels, suppressed rows, scrub hits); it holds
no original value."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ColumnOutcome(BaseModel):
    rule: str
    changed: int = Field(default=0, description="Rows whose value differs from the original.")
    nulls_added: int = Field(default=0, description="Values set to NULL (suppression).")
    collisions_resolved: int = 0
    full_name_redraws: int = Field(
        default=0,
        description="People whose fake full name spelled a real one: this part was redrawn.",
    )
    generalization_level: int | None = None
    unchanged_share: float | None = Field(
        default=None,
        description="perturb: share of the non-NULL values released exactly as they were (lsd "
        "leaves values of no more than `digits` digits unchanged unless min_relative_change).",
    )
    scrub_hits: dict[str, int] = Field(
        default_factory=dict, description="Free text: replacements per recognizer."
    )


class TableOutcome(BaseModel):
    rows: int
    columns: dict[str, ColumnOutcome]
    suppressed_rows: int = Field(
        default=0, description="Rows whose quasi-identifiers were suppressed to reach k."
    )
    seconds: float = 0.0


class TransformManifest(BaseModel):
    """The anonymization pass over a warehouse; row i of every released table is the transform of
    row i of the source table (rowid order is kept)."""

    policy_sha256: str
    tables: dict[str, TableOutcome]
    deny_list_size: int = 0
    pseudonym_collisions: int = Field(
        default=0, description="Distinct originals sharing a pseudonym after resolution (0)."
    )
    seconds: float = 0.0

    @property
    def total_rows(self) -> int:
        return sum(t.rows for t in self.tables.values())

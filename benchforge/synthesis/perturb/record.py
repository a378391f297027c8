"""What a perturb run did (``perturbations.json``): every change, with the seeded choices it
made and how many rows it touched. Nothing in it depends on where the dataset or the output
lives, so the same dataset, spec and seed give a byte-identical record."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from benchforge.synthesis.perturb.rewrite import SentenceRewrite

PERTURB_RECORD_VERSION = 1


class KeyChange(BaseModel):
    """One rule applied to one key column."""

    table: str
    column: str
    kind: Literal["prefix", "zero_pad", "case", "trailing_space"]
    parameters: dict[str, Any] = Field(description="The rule's parameters, seeded choices made.")
    rows_changed: int
    example_before: str | None = None
    example_after: str | None = None


class EmbedChange(BaseModel):
    """Columns removed from a table and written into its text column."""

    table: str
    columns: list[str]
    into: str
    templates: list[str]
    rows_embedded: int
    template_counts: list[int] = Field(description="Rows written with each template, in order.")
    example_after: str | None = None
    rewrite_model: str | None = Field(
        default=None, description="The model that rewrote the sentences; None: not rewritten."
    )
    rewrite_prompt_version: int | None = None
    rewrites: list[SentenceRewrite] = Field(
        default_factory=list,
        description="Each distinct template sentence: its rewrite, kept or not and why.",
    )


class PlacedTable(BaseModel):
    table: str
    database: str
    engine: str
    as_documents: bool
    rows: int
    columns: dict[str, str] = Field(description="Column -> type as written (documents: fields).")


class PerturbRecord(BaseModel):
    version: int = PERTURB_RECORD_VERSION
    seed: int
    spec_sha256: str
    dataset_domain: str
    dataset_sha256: str = Field(description="Of the dataset's table checksums.")
    tables: list[PlacedTable]
    key_changes: list[KeyChange]
    embeds: list[EmbedChange]
    postgres_templates: dict[str, str] = Field(
        default_factory=dict, description="Logical database -> its template database's name."
    )

    def json_text(self) -> str:
        return self.model_dump_json(indent=2) + "\n"

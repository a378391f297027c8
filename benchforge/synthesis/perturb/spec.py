"""The perturb spec (``perturb.yaml``): how a dataset's tables are spread over logical
databases and engines, which join keys are rewritten per table, which columns are removed and
written into free text instead, and which tables become JSON documents.

A rule's parameter is either fixed (``prefix: "CUST-"``) or a seeded choice
(``choices: ["CUST-", "cust_"]``): the seed picks one per (table, column), and the record says
which."""

from __future__ import annotations

import re
import string
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchforge.core.engines.models import LOGICAL_NAME

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Choice(_Model):
    """A rule whose parameter is fixed or chosen by the seed from ``choices``."""

    @model_validator(mode="after")
    def _one_of_fixed_or_choices(self) -> _Choice:
        values = self.model_dump()
        if (values[self.parameter_name()] is None) == (values["choices"] is None):
            raise ValueError(f"give either {self.parameter_name()} or choices (one of the two)")
        return self

    @classmethod
    def parameter_name(cls) -> str:
        raise NotImplementedError

    def options(self) -> list[object]:
        values = self.model_dump()
        fixed = values[self.parameter_name()]
        return [fixed] if fixed is not None else list(values["choices"])


class PrefixRule(_Choice):
    """The value's leading non-digit part replaced by ``prefix`` (``CON-00000042`` ->
    ``CUST-00000042``; an integer ``42`` -> ``CUST-42``)."""

    kind: Literal["prefix"]
    prefix: str | None = None
    choices: list[str] | None = Field(default=None, min_length=1)

    @classmethod
    def parameter_name(cls) -> str:
        return "prefix"


class ZeroPadRule(_Choice):
    """The value's digits re-padded with zeros to ``width`` (1: no padding at all;
    ``CON-00000042`` -> ``CON-000042`` at width 6, ``CON-42`` at width 1)."""

    kind: Literal["zero_pad"]
    width: int | None = Field(default=None, ge=1, le=30)
    choices: list[Annotated[int, Field(ge=1, le=30)]] | None = Field(default=None, min_length=1)

    @classmethod
    def parameter_name(cls) -> str:
        return "width"


class CaseRule(_Choice):
    """The whole value written in lower or upper case."""

    kind: Literal["case"]
    to: Literal["lower", "upper"] | None = None
    choices: list[Literal["lower", "upper"]] | None = Field(default=None, min_length=1)

    @classmethod
    def parameter_name(cls) -> str:
        return "to"


class TrailingSpaceRule(_Model):
    """A seeded ``rate`` of the rows get 1 to ``max_spaces`` trailing spaces."""

    kind: Literal["trailing_space"]
    rate: float = Field(gt=0, le=1)
    max_spaces: int = Field(default=3, ge=1, le=10)


KeyRule = Annotated[
    PrefixRule | ZeroPadRule | CaseRule | TrailingSpaceRule, Field(discriminator="kind")
]


class KeyReformat(_Model):
    """The rules applied, in order, to one key column of one table (the column becomes text)."""

    table: str
    column: str
    rules: list[KeyRule] = Field(min_length=1)
    hint: str = Field(
        default="",
        description="Extra words for hints.md; the written form of the key is always given.",
    )


class SentenceRewriteOptions(_Model):
    """Each distinct template sentence rewritten by ``model`` through the LLM client, kept
    only where every embedded value still appears in it verbatim
    (:mod:`benchforge.synthesis.perturb.rewrite`)."""

    model: str = Field(default="gpt-4.1-mini", min_length=1)


class EmbedRule(_Model):
    """``columns`` removed from ``table`` and written into its text column ``into``: each row
    gets one of ``templates`` (a seeded choice per row), with ``{column}`` standing for the
    removed value, appended to its text (or the whole text where it was empty). ``rewrite``
    (off by default): the sentences rewritten through the LLM client."""

    table: str
    columns: list[str] = Field(min_length=1)
    into: str
    templates: list[str] = Field(min_length=1)
    hint: str = Field(default="", description="Extra words for hints.md.")
    rewrite: SentenceRewriteOptions | None = None

    @model_validator(mode="after")
    def _templates_name_removed_columns(self) -> EmbedRule:
        for template in self.templates:
            fields = template_fields(template)
            unknown = sorted(set(fields) - set(self.columns))
            if unknown:
                raise ValueError(
                    f"template {template!r} names {', '.join(unknown)}: only the removed "
                    f"columns ({', '.join(self.columns)}) may be named"
                )
            if not fields:
                raise ValueError(f"template {template!r} names no removed column")
        if self.into in self.columns:
            raise ValueError(f"into: {self.into!r} is one of the removed columns")
        return self


class LogicalDatabase(_Model):
    """One database the agent sees by name: its engine, the tables it holds as tables, and the
    tables it holds as JSON documents (DuckDB: a JSON column; PostgreSQL: a JSONB column)."""

    engine: Literal["duckdb", "sqlite", "postgres"]
    description: str = ""
    tables: list[str] = Field(default_factory=list)
    documents: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _holds_something(self) -> LogicalDatabase:
        if not self.tables and not self.documents:
            raise ValueError("a database holds at least one table or document collection")
        if self.documents and self.engine == "sqlite":
            raise ValueError("documents: a document store is DuckDB (JSON) or PostgreSQL (JSONB)")
        return self


class PerturbSpec(_Model):
    """How one dataset becomes a multi-database task dataset."""

    databases: dict[str, LogicalDatabase] = Field(min_length=1)
    keys: list[KeyReformat] = Field(default_factory=list)
    embed: list[EmbedRule] = Field(default_factory=list)
    hints: list[str] = Field(
        default_factory=list, description="Domain knowledge written to hints.md as given."
    )

    @field_validator("databases")
    @classmethod
    def _logical_names(cls, value: dict[str, LogicalDatabase]) -> dict[str, LogicalDatabase]:
        bad = [name for name in value if not LOGICAL_NAME.match(name)]
        if bad:
            raise ValueError(
                "database names must be letters, digits and '_', starting with a letter: "
                + ", ".join(repr(b) for b in bad)
            )
        return value

    @field_validator("databases")
    @classmethod
    def _each_table_once(cls, value: dict[str, LogicalDatabase]) -> dict[str, LogicalDatabase]:
        seen: dict[str, str] = {}
        for name, database in value.items():
            for table in [*database.tables, *database.documents]:
                if not _IDENT.match(table):
                    raise ValueError(f"databases.{name}: table name {table!r} is not a name")
                if table in seen:
                    raise ValueError(
                        f"databases.{name}: table {table!r} is placed in {seen[table]!r} already"
                    )
                seen[table] = name
        return value

    def placement(self) -> dict[str, str]:
        """Table -> the logical database holding it."""
        return {
            table: name
            for name, database in self.databases.items()
            for table in [*database.tables, *database.documents]
        }


def template_fields(template: str) -> list[str]:
    """The ``{column}`` names of a template, in order."""
    return [field for _, field, _, _ in string.Formatter().parse(template) if field]

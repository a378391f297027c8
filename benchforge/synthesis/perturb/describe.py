"""What the agent reads beside the databases: ``schema.md`` (logical databases, tables,
columns and types, nothing of the perturbations) and ``hints.md`` (domain knowledge and how
keys and removed columns are written, as DAB's descriptions with hints give them)."""

from __future__ import annotations

from benchforge.synthesis.perturb.record import EmbedChange, KeyChange, PerturbRecord
from benchforge.synthesis.perturb.spec import PerturbSpec
from benchforge.synthesis.perturb.working import DOCUMENT_COLUMN

_ENGINES = {
    "duckdb": "DuckDB",
    "sqlite": "SQLite",
    "postgres": "PostgreSQL",
}
_DOCUMENT_ACCESS = {
    "duckdb": "a JSON column; read fields with `doc->>'field'` or `json_extract_string`",
    "postgres": "a JSONB column; read fields with `doc->>'field'`",
}


def schema_markdown(
    spec: PerturbSpec, record: PerturbRecord, documents: dict[str, dict[str, str]]
) -> str:
    """``documents``: document table -> its fields and their types (before the JSON)."""
    lines = ["# Databases", ""]
    by_database: dict[str, list[str]] = {}
    for placed in record.tables:
        by_database.setdefault(placed.database, []).append(placed.table)
    placed_tables = {p.table: p for p in record.tables}
    for name, database in spec.databases.items():
        engine = _ENGINES[database.engine]
        lines += [f"## `{name}` ({engine})", ""]
        if database.description:
            lines += [database.description, ""]
        for table in by_database.get(name, []):
            placed = placed_tables[table]
            if placed.as_documents:
                lines += [
                    f"### `{table}` ({placed.rows:,} JSON documents)",
                    "",
                    f"One document per row in the column `{DOCUMENT_COLUMN}`, "
                    f"{_DOCUMENT_ACCESS[database.engine]}.",
                    "",
                    "| field | type |",
                    "|---|---|",
                    *(f"| {c} | {t.lower()} |" for c, t in documents[table].items()),
                    "",
                ]
            else:
                lines += [
                    f"### `{table}` ({placed.rows:,} rows)",
                    "",
                    "| column | type |",
                    "|---|---|",
                    *(f"| {c} | {t} |" for c, t in placed.columns.items()),
                    "",
                ]
    return "\n".join(lines)


def hints_markdown(spec: PerturbSpec, record: PerturbRecord) -> str:
    placement = spec.placement()
    lines = ["# Hints", ""]
    lines += [f"- {hint}" for hint in spec.hints]
    by_column: dict[tuple[str, str], list[KeyChange]] = {}
    for change in record.key_changes:
        by_column.setdefault((change.table, change.column), []).append(change)
    extra = {(k.table, k.column): k.hint for k in spec.keys}
    for (table, column), changes in by_column.items():
        lines.append(
            f"- {_key_hint(placement[table], table, column, changes, extra[table, column])}"
        )
    hints = {(e.table, tuple(e.columns)): e.hint for e in spec.embed}
    for embed in record.embeds:
        extra_words = hints[embed.table, tuple(embed.columns)]
        lines.append(f"- {_embed_hint(placement[embed.table], embed, extra_words)}")
    return "\n".join(lines) + "\n"


def _key_hint(database: str, table: str, column: str, changes: list[KeyChange], extra: str) -> str:
    where = f"`{column}` in `{database}.{table}`"
    words = []
    written = None
    original = changes[0].example_before
    for change in changes:
        if change.kind == "prefix":
            words.append(f"starts with `{change.parameters['prefix']}`")
        elif change.kind == "zero_pad":
            width = change.parameters["width"]
            words.append(
                "has unpadded digits" if width == 1 else f"has its digits zero-padded to {width}"
            )
        elif change.kind == "case":
            words.append(f"is written in {change.parameters['to']} case")
        else:
            words.append("sometimes carries trailing spaces")
        if change.kind != "trailing_space" and change.example_after is not None:
            written = change.example_after
    text = f"{where} " + ", ".join(words)
    if written is not None:
        text += f" (e.g. `{written.rstrip()}` for the id written `{original}` elsewhere)"
    return text + "." + (f" {extra}" if extra else "")


def _embed_hint(database: str, embed: EmbedChange, extra: str) -> str:
    columns = ", ".join(f"`{c}`" for c in embed.columns)
    return (
        f"`{database}.{embed.table}` has no column {columns}: the value is written in the "
        f'text of `{embed.into}`, in sentences such as "{embed.templates[0]}".'
        + (
            " Some sentences are reworded; the value itself is always written as it was."
            if any(r.accepted for r in embed.rewrites)
            else ""
        )
        + (f" {extra}" if extra else "")
    )

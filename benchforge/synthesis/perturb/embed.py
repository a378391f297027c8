"""Columns removed and their values written into free text instead: each row with a value
gets one templated sentence (a seeded choice per row) appended to its text column, so the
value is there to read but no longer to select."""

from __future__ import annotations

import string

import duckdb

from benchforge.core.sql import literal, quote
from benchforge.synthesis.perturb.record import EmbedChange
from benchforge.synthesis.perturb.seeding import row_draw_sql, salt
from benchforge.synthesis.perturb.spec import EmbedRule


def embed_columns(con: duckdb.DuckDBPyConnection, rule: EmbedRule, seed: int) -> EmbedChange:
    """Applies ``rule`` to the working table ``rule.table``: its columns are gone after."""
    table, into = quote(rule.table), quote(rule.into)
    has_values = " AND ".join(f"{quote(c)} IS NOT NULL" for c in rule.columns)
    pick = (
        f"({row_draw_sql(salt(seed, rule.table, *rule.columns, 'embed'))} % {len(rule.templates)})"
    )
    sentence = (
        "CASE "
        + " ".join(
            f"WHEN {pick} = {i} THEN {template_sql(t)}" for i, t in enumerate(rule.templates)
        )
        + " END"
    )
    counts = dict(
        con.execute(
            f"SELECT {pick} AS template, count(*) FROM {table} WHERE {has_values} GROUP BY 1"
        ).fetchall()
    )
    text = (
        f"CASE WHEN {into} IS NULL OR trim(CAST({into} AS VARCHAR)) = '' THEN {sentence} "
        f"ELSE CAST({into} AS VARCHAR) || ' ' || {sentence} END"
    )
    con.execute(f"ALTER TABLE {table} ALTER {into} TYPE VARCHAR")
    con.execute(f"UPDATE {table} SET {into} = {text} WHERE {has_values}")
    example = con.execute(
        f"SELECT {into} FROM {table} WHERE {has_values} ORDER BY rowid LIMIT 1"
    ).fetchone()
    for column in rule.columns:
        con.execute(f"ALTER TABLE {table} DROP COLUMN {quote(column)}")
    return EmbedChange(
        table=rule.table,
        columns=list(rule.columns),
        into=rule.into,
        templates=list(rule.templates),
        rows_embedded=sum(int(n) for n in counts.values()),
        template_counts=[int(counts.get(i, 0)) for i in range(len(rule.templates))],
        example_after=example[0] if example else None,
    )


def template_sql(template: str) -> str:
    """A template as a SQL text expression: its literal parts and its columns as text."""
    parts: list[str] = []
    for text, field, _, _ in string.Formatter().parse(template):
        if text:
            parts.append(literal(text))
        if field:
            parts.append(f"CAST({quote(field)} AS VARCHAR)")
    return "(" + " || ".join(parts) + ")"

"""Columns removed and their values written into free text instead: each row with a value
gets one templated sentence (a seeded choice per row) appended to its text column, so the
value is there to read but no longer to select. A rule with ``rewrite`` has each distinct
sentence rewritten through the LLM client first (:mod:`.rewrite`), kept only where the values
survive verbatim."""

from __future__ import annotations

import string

import duckdb

from benchforge.core.sql import literal, quote
from benchforge.synthesis.perturb.record import EmbedChange
from benchforge.synthesis.perturb.rewrite import PROMPT_VERSION, SentenceRewrite, SentenceRewriter
from benchforge.synthesis.perturb.seeding import row_draw_sql, salt
from benchforge.synthesis.perturb.spec import EmbedRule

SENTENCE = "__bf_sentence"  # a working column: each row's sentence, before it joins the text


def embed_columns(
    con: duckdb.DuckDBPyConnection,
    rule: EmbedRule,
    seed: int,
    rewriter: SentenceRewriter | None = None,
) -> EmbedChange:
    """Applies ``rule`` to the working table ``rule.table``: its columns are gone after.
    ``rewriter``: the LLM rewriter, needed when the rule asks for rewrites."""
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
    working = quote(SENTENCE)
    con.execute(f"ALTER TABLE {table} ADD COLUMN {working} VARCHAR")
    con.execute(f"UPDATE {table} SET {working} = {sentence} WHERE {has_values}")
    rewrites: list[SentenceRewrite] = []
    if rule.rewrite is not None:
        if rewriter is None:
            raise ValueError(f"embed rule on {rule.table!r} asks for rewrites: give a rewriter")
        rewrites = _rewrite_sentences(con, rule, rewriter, has_values)
    text = (
        f"CASE WHEN {into} IS NULL OR trim(CAST({into} AS VARCHAR)) = '' THEN {working} "
        f"ELSE CAST({into} AS VARCHAR) || ' ' || {working} END"
    )
    con.execute(f"ALTER TABLE {table} ALTER {into} TYPE VARCHAR")
    con.execute(f"UPDATE {table} SET {into} = {text} WHERE {has_values}")
    con.execute(f"ALTER TABLE {table} DROP COLUMN {working}")
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
        rewrite_model=rule.rewrite.model if rule.rewrite is not None else None,
        rewrite_prompt_version=PROMPT_VERSION if rule.rewrite is not None else None,
        rewrites=rewrites,
    )


def _rewrite_sentences(
    con: duckdb.DuckDBPyConnection, rule: EmbedRule, rewriter: SentenceRewriter, has_values: str
) -> list[SentenceRewrite]:
    """Each distinct sentence of ``rule.table`` rewritten; the accepted rewrites replace their
    sentence in the working column."""
    assert rule.rewrite is not None
    table, working = quote(rule.table), quote(SENTENCE)
    values_sql = ", ".join(f"CAST({quote(c)} AS VARCHAR)" for c in rule.columns)
    found: dict[str, tuple[list[str], int]] = {}
    rows = con.execute(
        f"SELECT {working}, {values_sql}, count(*) FROM {table} WHERE {has_values} "
        f"GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    for sentence, *values, count in rows:
        known, seen = found.get(sentence, ([], 0))
        found[sentence] = (known + [v for v in values if v not in known], seen + int(count))
    rewrites = rewriter.rewrite(
        rule.rewrite.model, [(s, values, n) for s, (values, n) in found.items()]
    )
    accepted = [(r.sentence, r.rewritten) for r in rewrites if r.accepted]
    if accepted:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE __bf_rewrites (sentence VARCHAR, rewritten VARCHAR)"
        )
        con.executemany("INSERT INTO __bf_rewrites VALUES (?, ?)", accepted)
        con.execute(
            f"UPDATE {table} SET {working} = r.rewritten FROM __bf_rewrites r "
            f"WHERE {table}.{working} = r.sentence"
        )
        con.execute("DROP TABLE __bf_rewrites")
    return rewrites


def template_sql(template: str) -> str:
    """A template as a SQL text expression: its literal parts and its columns as text."""
    parts: list[str] = []
    for text, field, _, _ in string.Formatter().parse(template):
        if text:
            parts.append(literal(text))
        if field:
            parts.append(f"CAST({quote(field)} AS VARCHAR)")
    return "(" + " || ".join(parts) + ")"

"""Join keys rewritten per table: a new prefix, other zero padding, another case, trailing
spaces on some rows. Each rule is one SQL expression over the column, applied in order to the
working copy of the table (the column becomes text)."""

from __future__ import annotations

from typing import Any

import duckdb

from benchforge.core.sql import literal, quote
from benchforge.synthesis.perturb.record import KeyChange
from benchforge.synthesis.perturb.seeding import choose, row_draw_sql, row_uniform_sql, salt
from benchforge.synthesis.perturb.spec import (
    CaseRule,
    KeyReformat,
    KeyRule,
    PrefixRule,
    TrailingSpaceRule,
    ZeroPadRule,
)

_LEAD = "'^[^0-9]*'"


def reformat_keys(con: duckdb.DuckDBPyConnection, key: KeyReformat, seed: int) -> list[KeyChange]:
    """Applies ``key``'s rules to the working table ``key.table``; one change per rule."""
    table, column = quote(key.table), quote(key.column)
    con.execute(f"ALTER TABLE {table} ALTER {column} TYPE VARCHAR")
    changes = []
    for index, rule in enumerate(key.rules):
        parameters = _parameters(rule, seed, key.table, key.column, index)
        expression = _expression(rule, parameters, column, salt(seed, key.table, key.column, index))
        changed = f"{column} IS NOT NULL AND {column} IS DISTINCT FROM {expression}"
        counted = con.execute(f"SELECT count(*) FROM {table} WHERE {changed}").fetchone()
        example = con.execute(
            f"SELECT {column}, {expression} FROM {table} WHERE {changed} ORDER BY rowid LIMIT 1"
        ).fetchone()
        con.execute(f"UPDATE {table} SET {column} = {expression}")
        changes.append(
            KeyChange(
                table=key.table,
                column=key.column,
                kind=rule.kind,
                parameters=parameters,
                rows_changed=int(counted[0]) if counted else 0,
                example_before=example[0] if example else None,
                example_after=example[1] if example else None,
            )
        )
    return changes


def _parameters(rule: KeyRule, seed: int, table: str, column: str, index: int) -> dict[str, Any]:
    if isinstance(rule, TrailingSpaceRule):
        return {"rate": rule.rate, "max_spaces": rule.max_spaces}
    name = rule.parameter_name()
    return {name: choose(rule.options(), seed, table, column, index, rule.kind)}


def _expression(rule: KeyRule, parameters: dict[str, Any], v: str, row_salt: str) -> str:
    if isinstance(rule, PrefixRule):
        return f"{literal(parameters['prefix'])} || regexp_replace({v}, {_LEAD}, '')"
    if isinstance(rule, ZeroPadRule):
        width = int(parameters["width"])
        lead = f"regexp_extract({v}, '^([^0-9]*)', 1)"
        digits = f"regexp_extract({v}, '^[^0-9]*0*([0-9]+)', 1)"
        rest = f"regexp_extract({v}, '^[^0-9]*[0-9]+(.*)$', 1)"
        padded = (
            f"CASE WHEN length({digits}) >= {width} THEN {digits} "
            f"ELSE lpad({digits}, {width}, '0') END"
        )
        return (
            f"CASE WHEN regexp_matches({v}, '[0-9]') THEN {lead} || {padded} || {rest} ELSE {v} END"
        )
    if isinstance(rule, CaseRule):
        return f"{parameters['to']}({v})"
    assert isinstance(rule, TrailingSpaceRule)
    spaces = f"repeat(' ', CAST(1 + {row_draw_sql(row_salt + ':n')} % {rule.max_spaces} AS BIGINT))"
    return f"CASE WHEN {row_uniform_sql(row_salt)} < {rule.rate} THEN {v} || {spaces} ELSE {v} END"

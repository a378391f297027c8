"""k-anonymity over a table's declared quasi-identifiers: Datafly-style greedy generalization,
then suppression of the rows still in too-small classes.

Why Datafly and not an optimal lattice search (ARX's Flash, Incognito): a policy declares a
handful of quasi-identifiers, each with a short hierarchy, and the release is rebuilt on every
run; one GROUP BY per step over the whole table in DuckDB keeps the plan memory-bounded and
fast, and the greedy choice (coarsen the column with the most distinct values) is what sdcMicro
and ARX users reach for when the lattice is too large. The plan is SQL, not data: the caller
selects ``select_sql`` over the same relation to write the release.

Level semantics (``generalized_expression``), level 0 being the value itself:

- ``numeric``: ``floor(x / w) * w`` with ``w = base_width * 2^(level-1)``, cast back to the
  column's type (values become their bin's lower edge);
- ``date``: month, quarter, year, then decade from level 4 on (the period's first day, in the
  column's own type: a DATE stays a DATE, a TIMESTAMP a TIMESTAMP);
- ``prefix``: the text keeps ``length - level`` characters and is padded with ``*`` back to its
  length (the result is VARCHAR, also for a numeric column such as a zip code);
- ``hierarchy``: level n looks the original value up in ``levels[n-1]``; a value not listed
  there is looked up through its level n-1 ancestor (so mappings may be written either as
  direct value -> ancestor tables or as a chain); anything unmapped becomes ``'*'``. Levels past
  ``len(levels)`` are ``'*'`` (the hierarchy's root).

Past ``max_level`` every column takes its most general value: ``'*'`` for the string-valued
hierarchies (prefix, hierarchy) and NULL for numbers and dates (a NULL is the only value that
covers every number or date without inventing a bin). :func:`plan_generalization` never goes
past ``max_level``; the branch exists so the expression is defined for every level.

NULL quasi-identifier values stay NULL at every level and form one class of their own.

The frequency floor (:func:`build_frequency_floor`) is a fixed recoding, not part of the k
search: a free-text category such as a job title has hundreds of values a few rows each, and
with the country and department beside it names one person; a value shared by fewer than
``min_count`` rows within its group becomes its family (the head noun: 'Civil engineer,
contracting' -> 'Engineer') or ``other``.
"""

from __future__ import annotations

import duckdb
from pydantic import BaseModel, Field

from benchforge.anonymize.policy.models import FrequencyFloor, Generalize, QuasiIdentifiers
from benchforge.anonymize.sqltypes import is_numeric_type
from benchforge.anonymize.transform.sql import SRC, ColumnSQL, TransformError, bind, col, is_text
from benchforge.core.errors import BenchforgeError

_DATE_PARTS = ("month", "quarter", "year", "decade")


class GeneralizationError(BenchforgeError):
    """A generalization rule cannot be applied to its column (wrong type, missing parameter)."""


class GeneralizationPlan(BaseModel):
    """What :func:`plan_generalization` decided for one table."""

    levels: dict[str, int] = Field(description="Level per quasi-identifier (0: unchanged).")
    select_sql: dict[str, str] = Field(
        description="Final SELECT expression per quasi-identifier (no alias), suppression "
        "included: NULL on every quasi-identifier of a row in a class smaller than k."
    )
    suppressed_rows: int = Field(description="Rows in classes smaller than k at the final levels.")
    min_k_after: int = Field(
        description="Smallest equivalence class among the rows not suppressed (0: none left)."
    )
    classes: int = Field(description="Equivalence classes among the rows not suppressed.")
    rows: int = 0
    within_budget: bool = Field(
        default=True,
        description="False when every column reached max_level and the share of rows to "
        "suppress still exceeds the suppression budget (they are suppressed anyway).",
    )


def quote_identifier(name: str) -> str:
    """A column name as a DuckDB identifier."""
    return '"' + name.replace('"', '""') + '"'


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _base_type(column_type: str) -> str:
    return column_type.strip().upper().split("(")[0].strip()


def _is_numeric(column_type: str) -> bool:
    return is_numeric_type(column_type)


def _is_temporal(column_type: str) -> bool:
    base = _base_type(column_type)
    return base == "DATE" or base.startswith("TIMESTAMP")


def _number_literal(value: float) -> str:
    # repr round-trips a double exactly; integers print without a trailing '.0'
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _hierarchy_ancestors(levels: list[dict[str, str]], level: int) -> dict[str, str]:
    """Every value the mappings mention, resolved to its ancestor at ``level``."""
    known: set[str] = set()
    for mapping in levels[:level]:
        known.update(mapping)
    resolved: dict[str, str] = {}
    for value in sorted(known):
        current = value
        for n in range(1, level + 1):
            mapping = levels[n - 1]
            # the value itself listed at this level wins; otherwise its ancestor one level down
            current = mapping[value] if value in mapping else mapping.get(current, "*")
        resolved[value] = current
    return resolved


def generalized_expression(column: str, rule: Generalize, level: int, column_type: str) -> str:
    """SQL for ``column`` generalized to ``level`` under ``rule`` (see the module docstring)."""
    if level < 0:
        raise GeneralizationError(f"{column}: generalization level {level} is negative")
    col = quote_identifier(column)
    if level == 0:
        return col
    kind = rule.hierarchy
    if kind == "numeric":
        if not _is_numeric(column_type):
            raise GeneralizationError(
                f"{column}: numeric generalization needs a numeric column, not {column_type}"
            )
        if rule.base_width is None:
            raise GeneralizationError(f"{column}: numeric generalization needs base_width")
        if level > rule.max_level:
            return f"CAST(NULL AS {column_type})"
        width = _number_literal(rule.base_width * 2 ** (level - 1))
        return f"CAST(floor({col} / {width}) * {width} AS {column_type})"
    if kind == "date":
        if not _is_temporal(column_type):
            raise GeneralizationError(
                f"{column}: date generalization needs a DATE or TIMESTAMP column, not {column_type}"
            )
        if level > rule.max_level:
            return f"CAST(NULL AS {column_type})"
        part = _DATE_PARTS[min(level, len(_DATE_PARTS)) - 1]
        return f"CAST(date_trunc('{part}', {col}) AS {column_type})"
    text = f"CAST({col} AS VARCHAR)"
    if kind == "prefix":
        if level > rule.max_level:
            return f"CASE WHEN {col} IS NULL THEN NULL ELSE '*' END"
        return (
            f"CASE WHEN {col} IS NULL THEN NULL ELSE "
            f"left({text}, greatest(length({text}) - {level}, 0)) "
            f"|| repeat('*', least(length({text}), {level})) END"
        )
    # hierarchy
    if not rule.levels:
        raise GeneralizationError(f"{column}: hierarchy generalization needs levels")
    if level > rule.max_level or level > len(rule.levels):
        return f"CASE WHEN {col} IS NULL THEN NULL ELSE '*' END"
    ancestors = _hierarchy_ancestors(rule.levels, level)
    branches = " ".join(
        f"WHEN {_sql_string(value)} THEN {_sql_string(ancestor)}"
        for value, ancestor in ancestors.items()
    )
    if not branches:
        return f"CASE WHEN {col} IS NULL THEN NULL ELSE '*' END"
    return f"CASE WHEN {col} IS NULL THEN NULL ELSE (CASE {text} {branches} ELSE '*' END) END"


def k_anonymity_stats(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    columns: list[str],
    k: int,
    *,
    exclude_suppressed: bool = False,
) -> tuple[int, float, int]:
    """(smallest class size, share of rows in classes smaller than k, number of classes) of
    ``relation`` grouped by ``columns`` (SQL expressions or quoted names; NULL is a value).

    ``exclude_suppressed`` leaves out rows whose every column is NULL: after suppression they
    carry no quasi-identifying information, so a release's k is measured on the other rows.
    An empty relation gives (0, 0.0, 0)."""
    return _stats(con, relation, [quote_identifier(c) for c in columns], k, exclude_suppressed)


def _stats(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    expressions: list[str],
    k: int,
    exclude_all_null: bool = False,
) -> tuple[int, float, int]:
    keys = ", ".join(expressions)
    where = ""
    if exclude_all_null:
        where = "WHERE NOT (" + " AND ".join(f"({e}) IS NULL" for e in expressions) + ")"
    row = con.execute(
        f"""
        SELECT coalesce(min(n), 0), coalesce(sum(n) FILTER (WHERE n < {int(k)}), 0),
               coalesce(sum(n), 0), count(*)
        FROM (SELECT count(*) AS n FROM {relation} {where} GROUP BY {keys})
        """
    ).fetchone()
    assert row is not None
    smallest, small_rows, total, classes = (int(v) for v in row)
    share = small_rows / total if total else 0.0
    return smallest, share, classes


def plan_generalization(
    con: duckdb.DuckDBPyConnection,
    relation: str,
    qi: QuasiIdentifiers,
    rules: dict[str, Generalize],
    column_types: dict[str, str],
) -> GeneralizationPlan:
    """Raise the generalizable quasi-identifier with the most distinct values by one level
    while the share of rows in classes smaller than ``qi.k`` exceeds ``qi.suppression_budget``
    (ties: the order of ``qi.columns``), then suppress the rows still in small classes.

    ``relation`` is a SQL relation (table or view name) holding the table; quasi-identifiers
    without a rule in ``rules`` stay at level 0. When rows are suppressed the ``select_sql``
    expressions contain a window function, and DuckDB does not keep the input order through a
    window: a SELECT using them must ``ORDER BY rowid`` (or a carried row number) to keep the
    release's rows aligned with the source."""
    missing = [c for c in qi.columns if c not in column_types]
    if missing:
        raise GeneralizationError(f"{relation}: no type for quasi-identifiers {missing}")
    levels = {c: 0 for c in qi.columns}
    movable = [c for c in qi.columns if c in rules]
    # Fail on a rule that cannot apply before running any query.
    for c in movable:
        generalized_expression(c, rules[c], 1, column_types[c])

    def expressions() -> dict[str, str]:
        return {
            c: generalized_expression(c, rules[c], levels[c], column_types[c])
            if c in rules
            else quote_identifier(c)
            for c in qi.columns
        }

    within_budget = True
    while True:
        exprs = expressions()
        _, share, _ = _stats(con, relation, list(exprs.values()), qi.k)
        if share <= qi.suppression_budget:
            break
        candidates = [c for c in movable if levels[c] < rules[c].max_level]
        if not candidates:
            within_budget = False
            break
        counts = con.execute(
            "SELECT "
            + ", ".join(f"count(DISTINCT {exprs[c]})" for c in candidates)
            + f" FROM {relation}"
        ).fetchone()
        assert counts is not None
        best = max(range(len(candidates)), key=lambda i: (int(counts[i]), -i))
        levels[candidates[best]] += 1

    exprs = expressions()
    keys = ", ".join(exprs.values())
    row = con.execute(
        f"""
        SELECT coalesce(sum(n) FILTER (WHERE n < {qi.k}), 0),
               coalesce(min(n) FILTER (WHERE n >= {qi.k}), 0),
               count(*) FILTER (WHERE n >= {qi.k}),
               coalesce(sum(n), 0)
        FROM (SELECT count(*) AS n FROM {relation} GROUP BY {keys})
        """
    ).fetchone()
    assert row is not None
    suppressed, min_k_after, classes, rows = (int(v) for v in row)
    if suppressed:
        window = f"count(*) OVER (PARTITION BY {keys}) < {qi.k}"
        select_sql = {c: f"CASE WHEN {window} THEN NULL ELSE {e} END" for c, e in exprs.items()}
    else:  # nothing to suppress: no window function, so no reordering either
        select_sql = dict(exprs)
    return GeneralizationPlan(
        levels=levels,
        select_sql=select_sql,
        suppressed_rows=suppressed,
        min_k_after=min_k_after,
        classes=classes,
        rows=rows,
        within_budget=within_budget,
    )


# ----------------------------------------------------------------- frequency floor


def head_noun_sql(value: str) -> str:
    """The head noun of a job title, capitalized: the last word (split on spaces and '/') of the
    part before the first comma, parentheses dropped; NULL when there is none."""
    before_comma = f"regexp_replace(split_part({value}, ',', 1), '\\([^)]*\\)', '', 'g')"
    word = f"regexp_extract(trim({before_comma}), '([^\\s/]+)$', 1)"
    return bind(word, "__w", "nullif(upper(left(__w, 1)) || lower(substr(__w, 2)), '')")


def _family_sql(value: str, rule: FrequencyFloor) -> str:
    listed = " ".join(
        f"WHEN {_sql_string(v)} THEN {_sql_string(f)}" for v, f in sorted(rule.families.items())
    )
    explicit = f"CASE {value} {listed} END" if listed else "NULL"
    fallback = head_noun_sql(value) if rule.family == "head_noun" else "NULL"
    return f"coalesce({explicit}, {fallback})"


def build_frequency_floor(
    con: duckdb.DuckDBPyConnection,
    work_table: str,
    source_table: str,
    column: str,
    rule: FrequencyFloor,
) -> None:
    """``work_table``: (within columns, ``__v`` original value, ``__out`` released value) for
    every distinct non-NULL value of ``column`` within its group (see :class:`FrequencyFloor`)."""
    within = [quote_identifier(c) for c in rule.within]
    groups = "".join(f"{w}, " for w in within)
    n = rule.min_count
    con.execute(
        f"""CREATE OR REPLACE TABLE {work_table} AS
            WITH counted AS (
                SELECT {groups}{quote_identifier(column)} AS __v, count(*) AS __n
                FROM {source_table} WHERE {quote_identifier(column)} IS NOT NULL GROUP BY ALL),
            families AS (
                SELECT *, CASE WHEN __n < {n} THEN {_family_sql("__v", rule)} END AS __fam
                FROM counted),
            family_counts AS (
                SELECT *, sum(CASE WHEN __n < {n} THEN __n ELSE 0 END)
                          OVER (PARTITION BY {groups}__fam) AS __fam_n
                FROM families)
            SELECT {groups}__v,
                   CASE WHEN __n >= {n} THEN __v
                        WHEN __fam IS NOT NULL AND __fam_n >= {n} THEN __fam
                        ELSE {_sql_string(rule.other)} END AS __out
            FROM family_counts"""
    )


def floor_column(
    column: str, rule: FrequencyFloor, work_table: str, alias: str, type_: str = "VARCHAR"
) -> ColumnSQL:
    """The released column, joined to the mapping :func:`build_frequency_floor` wrote."""
    if not is_text(type_):
        raise TransformError(f"{column}: frequency_floor needs a VARCHAR column, not {type_}")
    match = "".join(
        f" AND {alias}.{quote_identifier(w)} IS NOT DISTINCT FROM {col(SRC, w)}"
        for w in rule.within
    )
    join = f"LEFT JOIN {work_table} {alias} ON {alias}.__v = {col(SRC, column)}{match}"
    return ColumnSQL(
        expr=f"CASE WHEN {col(SRC, column)} IS NULL THEN NULL ELSE {alias}.__out END",
        joins=[join],
    )

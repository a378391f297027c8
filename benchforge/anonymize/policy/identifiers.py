"""Which columns of a policy are *direct identifiers*: the one definition the transform's
free-text deny-list and the report's verbatim leak count share (if they differed, a value could
be searched for without ever having been scrubbed, or scrubbed without being checked).

A column is a direct identifier when the policy tags it ``pii: direct`` (whatever its rule) or
pseudonymizes it (keys and codes: their originals must not survive anywhere). A column replaced
by ``fake`` without the tag (a first name, a city) is not: on its own it names no one, and its
values are ordinary words that free text legitimately contains; the person it belongs to is
named by a composite identifier (first + last name), which is one.
"""

from __future__ import annotations

from benchforge.anonymize.policy.models import Column, Policy

# Pure numbers with fewer digits than this identify nobody (a count, a small id) and would match
# ordinary data everywhere: neither deny-listed in free text nor searched by the leak count.
MIN_NUMERIC_IDENTIFIER_DIGITS = 6


def short_number_sql(expr: str) -> str:
    """DuckDB SQL: ``expr`` (VARCHAR) is a pure number (sign, digits, separators) of fewer than
    :data:`MIN_NUMERIC_IDENTIFIER_DIGITS` digits. A CASE, not an AND: DuckDB evaluates both sides
    of an AND under NOT on every row, and the digit count's regexp_replace is the costly one
    (most values are no number at all)."""
    return (
        f"CASE WHEN regexp_full_match({expr}, '[+-]?[0-9][0-9.,\\s]*') "
        f"THEN length(regexp_replace({expr}, '[^0-9]', '', 'g')) < {MIN_NUMERIC_IDENTIFIER_DIGITS} "
        "ELSE false END"
    )


def is_direct_identifier(column: Column) -> bool:
    return column.pii == "direct" or column.rule.rule == "pseudonymize"


def direct_identifier_columns(policy: Policy) -> list[tuple[str, str]]:
    """(table, column) of every direct identifier column, in policy order."""
    return [
        (tname, cname)
        for tname, table in policy.tables.items()
        for cname, col in table.columns.items()
        if is_direct_identifier(col)
    ]

"""Data swapping within strata: a column's values exchanged among the rows that share the
``within`` columns.

Each stratum's rows are put in an order keyed by the secret (a keyed uniform of the row's noise
key) and each row takes the value of the next row in that order, the last row the first's: a
cyclic shift. So every stratum keeps its multiset of values exactly (the column's distribution
and its joint distribution with the ``within`` columns do not move), while which row holds which
value follows the secret, not the source. A row keeps its own value only when its successor had
the same one (or it is alone in its stratum): the re-identification search measures the share
that matches its original like any other kept column's.

Columns whose swap names the same ``group`` take their values from the same other row, so values
that belong together (a country and its time zone) stay together.
"""

from __future__ import annotations

import duckdb

from benchforge.anonymize.transform.sql import RID, SRC, ColumnSQL, qi, row_key_sql, uniform_sql

ORDER = "__swap_u"
SOURCE_RID = "__swap_rid"


def build_swap(
    con: duckdb.DuckDBPyConnection,
    work_table: str,
    source_table: str,
    columns: list[str],
    within: list[str],
    *,
    primary_key: list[str],
    all_columns: list[str],
    salt: str,
) -> None:
    """``work_table``: (source rowid, the swapped ``columns``) for every row of
    ``source_table``."""
    key = row_key_sql("t", primary_key, all_columns)
    partition = f"PARTITION BY {', '.join(qi(c) for c in within)} " if within else ""
    window = (
        f"({partition}ORDER BY {ORDER}, {SOURCE_RID} "
        "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"
    )
    taken = ", ".join(
        f"CASE WHEN row_number() OVER w = count(*) OVER w THEN first_value({qi(c)}) OVER w "
        f"ELSE lead({qi(c)}) OVER w END AS {qi(c)}"
        for c in columns
    )
    needed = ", ".join(qi(c) for c in dict.fromkeys([*within, *columns]))
    con.execute(
        f"""CREATE OR REPLACE TABLE {work_table} AS
            WITH ordered AS (
                SELECT rowid AS {SOURCE_RID}, {needed}, {uniform_sql(salt, key)} AS {ORDER}
                FROM {source_table} t)
            SELECT {SOURCE_RID}, {taken} FROM ordered WINDOW w AS {window}"""
    )


def swap_column(column: str, work_table: str, alias: str) -> ColumnSQL:
    """The released column, joined to the rows :func:`build_swap` wrote."""
    join = f"LEFT JOIN {work_table} {alias} ON {alias}.{SOURCE_RID} = {SRC}.{RID}"
    return ColumnSQL(expr=f"{alias}.{qi(column)}", joins=[join])

"""Verbatim leaks: original direct-identifier values that appear anywhere in the release.

Every replacement rule can fail silently — a column the policy forgot, a name re-typed into a
comment, an email pasted into a case description, a company name inside a filing title — and
the only check that catches all of them is to look for the original values themselves. The
identifier set is built from the *source*: the distinct trimmed values of every direct
identifier column (:mod:`benchforge.anonymize.policy.identifiers`: tagged ``pii: direct`` or
pseudonymized; the same set the transform's free-text deny-list replaces), plus the composite
identifiers (``first_name || ' ' || last_name``). Values shorter than ``MIN_IDENTIFIER_LENGTH``
characters and pure numbers of fewer than six digits are left out: they identify nobody and
would match ordinary data everywhere. Comparison is case-insensitive.

Three searches run in DuckDB over the whole release, with no value leaving the database:

1. *exact*: every column of every released table is unpivoted to distinct
   ``lower(trim(value::VARCHAR))`` and joined with the identifier set;
2. *free text* (VARCHAR columns whose average length exceeds 30 characters): values are split
   on whitespace into tokens (punctuation stripped at both ends, lower-cased) and every word
   n-gram of 1..4 words starting with the first word of some identifier is joined with the
   identifiers' own token keys; emails are also extracted with a pattern, so one glued to other
   characters (``mailto:x@y.com``) is still found. Identifiers of more than 4 words are only
   found by the exact search;
3. *unsegmented scripts* (Han, kana, Hangul, Thai — no spaces between words): identifiers
   written in those scripts are searched as substrings of every VARCHAR value containing such
   characters (blocked on their first two characters, then verified), whatever the column's
   average length, so ``<company name>2021年第1季度统计报表`` is caught;
4. *composite*: each composite identifier of the policy (first + last name) is put together
   again from its released columns, row by row, and joined with the identifier set: a fake
   first name and a fake last name that together spell a real person's full name are a leak
   even though neither column holds an original identifier.

A single fake name equal to some real one of its column (a fake first name 'Anna' when a real
person is called Anna) names no one: it is counted per column (``single_name_collisions``) and
noted, not a leak.

A match counts whatever its cause, including a replacement that happens to equal some original
value (a leak is a leak; a policy that keeps a categorical column sharing words with
identifiers has to be changed, and the notes name the worst columns). A finding counts
*distinct identifier values* per (released table, column, identifier source, free text or
not); a value belonging to several sources (a key and the foreign keys that copy it) is
attributed to one: a single-column primary key first, otherwise the first in policy order.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import duckdb
from pydantic import BaseModel, Field

from benchforge.anonymize.policy.identifiers import (
    is_direct_identifier,
    short_number_sql,
)
from benchforge.anonymize.policy.models import Policy
from benchforge.anonymize.report.kanon import catalog_columns, quote, require_columns, table_ref
from benchforge.anonymize.transform.text import (  # the deny-list's floors and scripts
    MIN_UNSEGMENTED_IDENTIFIER_LENGTH,
    long_enough_sql,
)

FREE_TEXT_MIN_AVG_LENGTH = 30
MAX_NGRAM_WORDS = 4

_PUNCT_EDGES = r"^[[:punct:]]+|[[:punct:]]+$"
_EMAIL = r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}"
_UNSEGMENTED = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}]"
# Runs of unsegmented text between spaces and clause punctuation: substring search runs inside
# each run (short), never over a whole document (substr on UTF-8 is linear in the offset).
# The \x{...} are the CJK full stop, full-width period, exclamation and question marks,
# semicolon, comma and the enumeration comma.
_RUN = r"[^\s\x{3002}\x{FF0E}.\x{FF01}!\x{FF1F}?\x{FF1B};\x{FF0C},\x{3001}]+"


class LeakFinding(BaseModel):
    """Original identifier values of one source found in one released column (no value is
    stored, only how many distinct ones)."""

    table: str
    column: str
    identifier: str = Field(description="Source: 'table.column' or 'table.[first+last]'.")
    count: int = Field(description="Distinct original identifier values found.")
    in_free_text: bool = Field(description="Found inside longer text, not as a whole value.")


class LeakScan(BaseModel):
    identifiers_checked: int = Field(description="Distinct original identifier values.")
    leaked_identifiers: int = Field(description="Distinct ones found anywhere in the release.")
    findings: list[LeakFinding]
    free_text_columns: list[str] = Field(description="'table.column' searched as free text.")
    single_name_collisions: dict[str, int] = Field(
        default_factory=dict,
        description="'table.column' of a composite identifier's faked part -> distinct released "
        "values equal to some original value of that column (a real first name; not a leak).",
    )
    notes: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class IdentifierSource:
    """One place original identifiers come from: a SQL expression over ``src.raw.<table>``
    giving the canonical (trimmed) value, or NULL."""

    label: str
    table: str
    columns: tuple[str, ...]
    expr: str
    priority: int


def identifier_sources(policy: Policy) -> list[IdentifierSource]:
    """The policy's direct identifiers, in attribution order (see the module docstring)."""
    found: list[tuple[int, int, IdentifierSource]] = []
    order = 0
    for tname, table in policy.tables.items():
        pk = table.primary_key
        for cname, col in table.columns.items():
            if is_direct_identifier(col):
                first = 0 if pk == [cname] else 1
                expr = f"trim(CAST({quote(cname)} AS VARCHAR))"
                source = IdentifierSource(f"{tname}.{cname}", tname, (cname,), expr, 0)
                found.append((first, order, source))
                order += 1
        for ident in table.identifiers:
            parts = [f"trim(CAST({quote(c)} AS VARCHAR))" for c in ident.columns]
            any_null = " OR ".join(f"{quote(c)} IS NULL" for c in ident.columns)
            sep = ident.separator.replace("'", "''")
            joined = f" || '{sep}' || ".join(parts)
            expr = f"CASE WHEN {any_null} THEN NULL ELSE {joined} END"
            label = f"{tname}.[{'+'.join(ident.columns)}]"
            source = IdentifierSource(label, tname, tuple(ident.columns), expr, 0)
            found.append((1, order, source))
            order += 1
            if len(parts) > 1:
                # Chinese and Japanese write a name family name first, with no space
                family_first = f"concat({', '.join(reversed(parts))})"
                expr = (
                    f"CASE WHEN regexp_matches({family_first}, '{_UNSEGMENTED}') "
                    f"THEN {family_first} END"
                )
                source = IdentifierSource(label, tname, tuple(ident.columns), expr, 0)
                found.append((1, order, source))
                order += 1
    found.sort(key=lambda item: (item[0], item[1]))
    return [
        IdentifierSource(src.label, src.table, src.columns, src.expr, rank)
        for rank, (_, _, src) in enumerate(found)
    ]


def _string_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class _Scratch:
    """Temporary tables of one scan, dropped at the end (names are unique per scan, so two scans
    on one connection do not collide)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        suffix = uuid.uuid4().hex[:12]
        self.ident = f"_bf_leak_ident_{suffix}"
        self.words = f"_bf_leak_words_{suffix}"
        self.unseg = f"_bf_leak_unseg_{suffix}"
        self.hits = f"_bf_leak_hits_{suffix}"

    def drop(self) -> None:
        for name in (self.ident, self.words, self.unseg, self.hits):
            self.con.execute(f"DROP TABLE IF EXISTS temp.main.{name}")


VOCABULARY_MAX_DISTINCT = 200


def _drop_vocabulary(con: duckdb.DuckDBPyConnection, policy: Policy, s: _Scratch) -> int:
    """Removes identifier values that are also category labels of a kept, low-cardinality text
    column of the source (at most ``VOCABULARY_MAX_DISTINCT`` distinct values): a lead whose
    company is literally named 'Sales' does not make every department 'Sales' a leak. A label
    names a category shared by many rows, so it identifies nobody; returns how many were
    dropped (reported in the notes)."""
    labels: list[str] = []
    for tname, table in policy.tables.items():
        types = catalog_columns(con, "src", tname)
        for cname, col in table.columns.items():
            if col.rule.rule != "keep" or col.pii == "direct" or types.get(cname) != "VARCHAR":
                continue
            ref = f"{table_ref('src', tname)}"
            n = con.execute(f"SELECT count(DISTINCT {quote(cname)}) FROM {ref}").fetchone()
            if n is not None and int(n[0]) <= VOCABULARY_MAX_DISTINCT:
                labels.append(
                    f"SELECT DISTINCT lower(trim({quote(cname)})) AS lv FROM {ref} "
                    f"WHERE {quote(cname)} IS NOT NULL"
                )
    if not labels:
        return 0
    before = con.execute(f"SELECT count(*) FROM {s.ident}").fetchone()
    con.execute(f"DELETE FROM {s.ident} WHERE lv IN ({' UNION '.join(labels)})")
    after = con.execute(f"SELECT count(*) FROM {s.ident}").fetchone()
    assert before is not None and after is not None
    return int(before[0]) - int(after[0])


def _build_identifier_tables(
    con: duckdb.DuckDBPyConnection, sources: list[IdentifierSource], s: _Scratch
) -> None:
    selects = [
        f"SELECT {_string_literal(src.label)} AS source, {src.priority} AS priority, "
        f"{src.expr} AS v FROM {table_ref('src', src.table)}"
        for src in sources
    ]
    union = (
        "\nUNION ALL\n".join(selects)
        if selects
        else ("SELECT NULL::VARCHAR AS source, 0 AS priority, NULL::VARCHAR AS v WHERE false")
    )
    con.execute(
        f"""
        CREATE TEMP TABLE {s.ident} AS
        WITH raw AS ({union})
        SELECT lower(v) AS lv, arg_min(source, priority) AS source
        FROM raw
        WHERE v IS NOT NULL
          AND {long_enough_sql("v")}
          AND NOT ({short_number_sql("v")})
        GROUP BY lower(v)
        """
    )
    con.execute(
        f"""
        CREATE TEMP TABLE {s.words} AS
        SELECT lv, source, array_to_string(tk, ' ') AS key, tk[1] AS first, len(tk) AS n
        FROM (
            SELECT lv, source, list_filter(
                list_transform(string_split_regex(lv, '\\s+'),
                               lambda t: regexp_replace(t, '{_PUNCT_EDGES}', '', 'g')),
                lambda t: t <> '') AS tk
            FROM {s.ident}
        )
        WHERE len(tk) BETWEEN 1 AND {MAX_NGRAM_WORDS}
        """
    )
    con.execute(
        f"""
        CREATE TEMP TABLE {s.unseg} AS
        SELECT lv, source, key, substr(key, 1, 2) AS head, length(key) AS len
        FROM (SELECT lv, source, regexp_replace(lv, '\\s+', '', 'g') AS key FROM {s.ident}
              WHERE regexp_matches(lv, '{_UNSEGMENTED}'))
        """
    )
    con.execute(
        f"CREATE TEMP TABLE {s.hits} (tbl VARCHAR, col VARCHAR, lv VARCHAR, source VARCHAR, "
        "free BOOLEAN)"
    )


def _unpivot(ref: str, columns: list[str], cast: bool) -> str:
    """Distinct (column, value) pairs of the given columns (UNPIVOT drops NULLs)."""
    cols = ", ".join(
        f"CAST({quote(c)} AS VARCHAR) AS {quote(c)}" if cast else quote(c) for c in columns
    )
    return (
        f"SELECT DISTINCT __bf_col AS col, __bf_val AS val FROM "
        f"(UNPIVOT (SELECT {cols} FROM {ref}) ON COLUMNS(*) INTO NAME __bf_col VALUE __bf_val)"
    )


def _scan_exact(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[str], s: _Scratch
) -> None:
    con.execute(
        f"""
        INSERT INTO {s.hits}
        SELECT DISTINCT ?, u.col, i.lv, i.source, false
        FROM (SELECT DISTINCT col, lower(trim(val)) AS lv
              FROM ({_unpivot(table_ref("rel", table), columns, cast=True)})) u
        JOIN {s.ident} i ON u.lv = i.lv
        """,
        [table],
    )


def _scan_free_text(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[str], s: _Scratch
) -> None:
    pairs = _unpivot(table_ref("rel", table), columns, cast=False)
    values = f"SELECT DISTINCT col, lower(val) AS v FROM ({pairs})"
    con.execute(
        f"""
        INSERT INTO {s.hits}
        WITH u AS ({values}),
        toks AS (
            SELECT col, list_filter(
                list_transform(string_split_regex(v, '\\s+'),
                               lambda t: regexp_replace(t, '{_PUNCT_EDGES}', '', 'g')),
                lambda t: t <> '') AS tk
            FROM u
        ),
        pos AS (SELECT col, tk, unnest(range(1, len(tk) + 1)) AS i FROM toks),
        starts AS (SELECT col, tk, i FROM pos WHERE tk[i] IN (SELECT first FROM {s.words})),
        grams AS (
            SELECT col, array_to_string(tk[i:i + r.n - 1], ' ') AS key, r.n AS n,
                   len(tk) AS total
            FROM starts, range(1, {MAX_NGRAM_WORDS + 1}) AS r(n)
            WHERE i + r.n - 1 <= len(tk)
        )
        SELECT DISTINCT ?, g.col, w.lv, w.source, true
        FROM grams g JOIN {s.words} w ON g.key = w.key AND g.n = w.n
        WHERE g.total > g.n
        UNION
        SELECT DISTINCT ?, m.col, i.lv, i.source, true
        FROM (SELECT col, v, unnest(regexp_extract_all(v, '{_EMAIL}')) AS e
              FROM u WHERE v LIKE '%@%') m
        JOIN {s.ident} i ON m.e = i.lv
        WHERE trim(m.v) <> m.e
        """,
        [table, table],
    )


def _scan_unsegmented(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[str], s: _Scratch
) -> None:
    pairs = _unpivot(table_ref("rel", table), columns, cast=False)
    values = (
        f"SELECT DISTINCT col, lower(val) AS v FROM ({pairs}) "
        f"WHERE regexp_matches(val, '{_UNSEGMENTED}')"
    )
    con.execute(
        f"""
        INSERT INTO {s.hits}
        WITH u AS ({values}),
        split AS (SELECT col, trim(v) AS tv, regexp_extract_all(v, '{_RUN}') AS rs FROM u),
        runs AS (
            SELECT col, len(rs) = 1 AND rs[1] = tv AS whole, unnest(rs) AS r FROM split
        ),
        pos AS (
            SELECT col, whole, r, unnest(range(1, length(r))) AS i
            FROM runs
            WHERE length(r) >= {MIN_UNSEGMENTED_IDENTIFIER_LENGTH}
              AND regexp_matches(r, '{_UNSEGMENTED}')
        ),
        cand AS (
            SELECT p.col, p.whole, p.r, p.i, c.lv, c.key, c.source, c.len
            FROM pos p JOIN {s.unseg} c ON substr(p.r, p.i, 2) = c.head
        )
        SELECT DISTINCT ?, col, lv, source, true
        FROM cand
        WHERE substr(r, i, len) = key AND NOT (whole AND i = 1 AND len = length(r) AND key = lv)
        """,
        [table],
    )


def _scan_composites(
    con: duckdb.DuckDBPyConnection, sources: list[IdentifierSource], released: set[str], s: _Scratch
) -> None:
    """Composite identifiers put together from their released columns (see the module
    docstring, search 4)."""
    for src in sources:
        if len(src.columns) < 2 or src.table not in released:
            continue
        if not set(src.columns) <= set(catalog_columns(con, "rel", src.table)):
            continue
        con.execute(
            f"""
            INSERT INTO {s.hits}
            SELECT DISTINCT ?, ?, i.lv, i.source, false
            FROM (SELECT DISTINCT lower({src.expr}) AS lv FROM {table_ref("rel", src.table)}) r
            JOIN {s.ident} i ON r.lv = i.lv
            """,
            [src.table, f"[{'+'.join(src.columns)}]"],
        )


def _single_name_collisions(
    con: duckdb.DuckDBPyConnection, policy: Policy, released: set[str]
) -> dict[str, int]:
    """Per faked column of a composite identifier: distinct released values that are also an
    original value of the same column."""
    out: dict[str, int] = {}
    for tname, table in policy.tables.items():
        if tname not in released:
            continue
        rel_columns = catalog_columns(con, "rel", tname)
        parts = {c for ident in table.identifiers for c in ident.columns}
        for cname in sorted(parts, key=list(table.columns).index):
            if table.columns[cname].rule.rule != "fake" or cname not in rel_columns:
                continue
            value = f"lower(trim(CAST({quote(cname)} AS VARCHAR)))"
            row = con.execute(
                f"SELECT count(*) FROM (SELECT DISTINCT {value} AS v "
                f"FROM {table_ref('rel', tname)} WHERE {quote(cname)} IS NOT NULL "
                f"INTERSECT SELECT DISTINCT {value} FROM {table_ref('src', tname)})"
            ).fetchone()
            out[f"{tname}.{cname}"] = int(row[0]) if row else 0
    return out


def _free_text_columns(
    con: duckdb.DuckDBPyConnection, table: str, varchar_cols: list[str]
) -> list[str]:
    if not varchar_cols:
        return []
    avgs = ", ".join(f"avg(length({quote(c)}))" for c in varchar_cols)
    row = con.execute(f"SELECT {avgs} FROM {table_ref('rel', table)}").fetchone()
    assert row is not None
    return [
        c
        for c, avg in zip(varchar_cols, row, strict=True)
        if avg is not None and float(avg) > FREE_TEXT_MIN_AVG_LENGTH
    ]


def _released_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT DISTINCT table_name FROM duckdb_tables() "
        "WHERE database_name = 'rel' AND schema_name = 'raw' ORDER BY table_name"
    ).fetchall()
    return [str(r[0]) for r in rows]


def scan_leaks(con: duckdb.DuckDBPyConnection, policy: Policy) -> LeakScan:
    """Search the whole release (``rel.raw.*``) for the policy's original identifiers
    (``src.raw.*``); see the module docstring."""
    sources = identifier_sources(policy)
    for src in sources:
        require_columns(con, "src", src.table, list(src.columns))
    s = _Scratch(con)
    try:
        _build_identifier_tables(con, sources, s)
        vocabulary = _drop_vocabulary(con, policy, s)
        row = con.execute(
            f"SELECT count(*), (SELECT count(*) FROM {s.unseg}) FROM {s.ident}"
        ).fetchone()
        assert row is not None
        checked, unsegmented = int(row[0]), int(row[1])
        free_cols: list[str] = []
        released = set(_released_tables(con))
        if checked:
            _scan_composites(con, sources, released, s)
            for table in sorted(released):
                cols = catalog_columns(con, "rel", table)
                if not cols:
                    continue
                _scan_exact(con, table, list(cols), s)
                varchar = [c for c, t in cols.items() if t == "VARCHAR"]
                free = _free_text_columns(con, table, varchar)
                if free:
                    _scan_free_text(con, table, free, s)
                    free_cols.extend(f"{table}.{c}" for c in free)
                if unsegmented and varchar:
                    _scan_unsegmented(con, table, varchar, s)
        rows = con.execute(
            f"SELECT tbl, col, source, free, count(DISTINCT lv) AS n FROM {s.hits} "
            "GROUP BY ALL ORDER BY n DESC, tbl, col, source, free"
        ).fetchall()
        leaked_row = con.execute(f"SELECT count(DISTINCT lv) FROM {s.hits}").fetchone()
        top = con.execute(
            f"SELECT tbl, col, count(DISTINCT lv) AS n FROM {s.hits} "
            "GROUP BY ALL ORDER BY n DESC, tbl, col LIMIT 3"
        ).fetchall()
        single_names = _single_name_collisions(con, policy, released)
    finally:
        s.drop()
    assert leaked_row is not None
    findings = [
        LeakFinding(table=t, column=c, identifier=src, count=int(n), in_free_text=bool(free))
        for t, c, src, free, n in rows
    ]
    notes: list[str] = []
    if top:
        worst = ", ".join(f"{t}.{c} ({int(n)})" for t, c, n in top)
        notes.append(f"verbatim identifier leaks, worst columns (distinct identifiers): {worst}")
    if vocabulary:
        notes.append(
            f"{vocabulary} identifier value(s) not searched: they are also category labels of "
            "kept columns in the source (a department 'Sales', a lead company 'Sales')"
        )
    if any(single_names.values()):
        counts = ", ".join(f"{c} ({n})" for c, n in single_names.items() if n)
        notes.append(
            f"single fake names equal to some real one of their column (not leaks: no full name "
            f"is real): {counts}"
        )
    if not sources:
        notes.append("the policy names no direct identifier: the leak count checked nothing")
    return LeakScan(
        identifiers_checked=checked,
        leaked_identifiers=int(leaked_row[0]),
        findings=findings,
        free_text_columns=free_cols,
        single_name_collisions=single_names,
        notes=notes,
    )

"""Keyed pseudonyms for identifier columns, consistent across tables.

Every column with the same ``pseudonymize`` rule and type class is one *key space*: one mapping
table (canonical original -> pseudonym) over the union of the distinct values of all its
columns, so a foreign key and the primary key it references map identically and joins survive.
The pseudonym of a canonical value ``c`` is derived from HMAC-SHA256(k, c), k a sub-key of the
secret:

- ``preserve`` keeps the shape: a prefix verbatim (``ACC-``), then every ASCII digit becomes a
  keyed digit, every ASCII letter a keyed letter of the same case, ASCII punctuation and spaces
  stay, any other character becomes a keyed upper-case letter. Integer columns stay integers
  with the same number of digits (no leading zero) and sign, within the column type's range.
- ``hex`` writes the prefix and ``length`` upper-case hex digits of the HMAC.

Collisions. In a short code space (a 6-digit key) two originals sometimes land on one pseudonym,
and a pseudonym can equal some *other* original (which a verbatim leak scan would then report).
Both are resolved in SQL, over the pending values only. A value's *shape* is its prefix and the
classes of its other characters (sign and digit count for integers).

1. A shape at least half full of originals with at most :data:`ENUMERATE_LIMIT` codes (a
   sequential key uses every code of its digit count) is permuted outright: its codes and its
   values are each ordered by a keyed hash and paired in that order (drawing would mostly hit
   taken codes). Such values are not counted as resolved collisions.
2. Every other value draws: a value keeps its candidate when no settled value has it, it is no
   original of the space (nor, case-insensitively, any original direct identifier of the
   warehouse: the leak scan's set), and it is the smallest canonical among the pending values
   wanting it; the others draw again from HMAC(k, c || 0x1E || attempt). In the first round
   (every value at once) these conditions are checked on 64-bit hashes of the strings, and
   exactly only for the few candidates whose hash matches (same outcome, half the time).
3. After :data:`PROBE_ATTEMPTS` draws, pending values of shapes with at most
   :data:`ENUMERATE_LIMIT` codes get the free codes (not taken; not an original either when
   enough remain) in keyed order; larger shapes keep drawing, dropping the "no original"
   condition after :data:`AVOID_ORIGINALS_ATTEMPTS`; after :data:`MAX_ATTEMPTS` the pass fails.

Case handling (``case_insensitive``): the canonical is ``upper(trim(v))``; the released value
puts back the original's surrounding spaces and, when the original's trimmed text is all
lower-case, lower-cases the pseudonym. Drifted keys stay drifted and still normalize to the same
pseudonym as the clean key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from benchforge.anonymize.policy.models import Policy, Pseudonymize
from benchforge.anonymize.transform.sql import (
    SRC,
    ColumnSQL,
    TransformError,
    canonical_sql,
    col,
    hex_int_sql,
    hmac_hex,
    hmac_sql,
    integer_max,
    is_integer,
    is_text,
    qi,
    ql,
)

PROBE_ATTEMPTS = 16
AVOID_ORIGINALS_ATTEMPTS = 50
MAX_ATTEMPTS = 200
ENUMERATE_LIMIT = 20_000_000
DENSE = -1  # `attempt` of a value of a permuted dense shape (not counted as a collision)
ENUMERATED = -2  # `attempt` of a value given a free code after drawing failed
_RS = "chr(30)"  # separates a value from its attempt number in the HMAC message
_US = "chr(31)"  # separates a message from its block number


@dataclass
class KeySpace:
    """One mapping table shared by every column with the same rule and type class."""

    table: str  # fully qualified work table holding (canon, pseudo, attempt, done)
    rule: Pseudonymize
    integer: bool
    int_max: int  # largest value every member column can hold (integer spaces)
    members: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class SpaceStats:
    values: int
    resolved: int  # canonicals that did not keep their first candidate
    collisions: int  # canonicals still sharing a pseudonym (0 unless something is wrong)


def plan_key_spaces(policy: Policy, types: dict[str, dict[str, str]], work: str) -> list[KeySpace]:
    """Group the pseudonymized columns into key spaces (same rule, same type class)."""
    spaces: dict[tuple[str, bool], KeySpace] = {}
    for table, column, spec in policy.columns_with("pseudonymize"):
        rule = spec.rule
        assert isinstance(rule, Pseudonymize)
        type_ = types[table][column]
        integer = is_integer(type_)
        if type_ in ("HUGEINT", "UHUGEINT"):
            raise TransformError(f"{table}.{column}: pseudonymize supports integers up to 64 bits")
        if not (integer or is_text(type_)):
            raise TransformError(
                f"{table}.{column}: pseudonymize needs a VARCHAR or integer column, not {type_}"
            )
        if integer and rule.format == "hex":
            raise TransformError(
                f"{table}.{column}: format hex cannot be written into an integer column"
            )
        sig = (rule.model_dump_json(), integer)
        if sig not in spaces:
            spaces[sig] = KeySpace(
                table=f"{work}.ps_{len(spaces)}",
                rule=rule,
                integer=integer,
                int_max=integer_max(type_) if integer else 0,
            )
        space = spaces[sig]
        space.members.append((table, column))
        if integer:
            space.int_max = min(space.int_max, integer_max(type_))
    return list(spaces.values())


def canonical(space: KeySpace, expr: str) -> str:
    """The canonical text a member column's value is looked up by in the mapping table."""
    if space.integer:
        return f"CAST({expr} AS VARCHAR)"
    return canonical_sql(expr, space.rule.case_insensitive)


# ---------------------------------------------------------------- candidates (SQL)


def _message(canon: str, attempt: str) -> str:
    return f"CASE WHEN {attempt} = 0 THEN {canon} ELSE {canon} || {_RS} || {attempt}::VARCHAR END"


def _prefix_len(rule: Pseudonymize, canon: str) -> str:
    if rule.keep_prefix == "auto":
        return f"length(regexp_extract({canon}, '^[A-Za-z]+[-_]'))"
    return f"least({int(rule.keep_prefix)}, length({canon}))"


def _char_class(ch: str) -> str:
    """'9' digit, 'a' lower-case ASCII letter, 'A' upper-case or non-ASCII letter, else the
    character itself (kept verbatim)."""
    return (
        f"CASE WHEN {ch} BETWEEN '0' AND '9' THEN '9' WHEN {ch} BETWEEN 'a' AND 'z' THEN 'a' "
        f"WHEN {ch} BETWEEN 'A' AND 'Z' OR ord({ch}) >= 128 THEN 'A' ELSE {ch} END"
    )


def _a(digest: str) -> str:
    """The first 60 bits of a hex digest (BIGINT)."""
    return hex_int_sql(digest, 1, 15)


def _b(digest: str) -> str:
    """The next 60 bits of a hex digest (BIGINT)."""
    return hex_int_sql(digest, 16, 15)


def _big(digest: str) -> str:
    """120 bits of a hex digest as a HUGEINT (for integers of 19 digits and more)."""
    return f"({_a(digest)}::HUGEINT * 1152921504606846976 + {_b(digest)})"


def _candidates(space: KeySpace, key: bytes, relation: str, carry: tuple[str, ...] = ()) -> str:
    """A query over ``relation`` (columns ``canon``, ``attempt`` and the ``carry`` columns)
    returning (``canon``, ``cand``, the ``carry`` columns). The HMAC is computed once per row in
    an inner projection.

    With A and B the first and next 60 bits of the HMAC (15 hex digits each): text
    ``preserve`` writes a rest of 1 to 15 digits (the common ``ACC-00000124``) as A mod
    10^length, zero-padded, a rest of 16 to 30 digits as A mod 10^(length - 15) then B mod
    10^15, each zero-padded; any other rest is mapped character by character, one HMAC byte per
    character (further HMAC blocks past 32 characters). Integers of d <= 18 digits become
    lo + A mod (hi - lo + 1) with lo = 10^(d-1) (0 for one digit) and hi the largest d-digit
    value the column holds; longer ones use the 120-bit A * 2^60 + B. 64-bit arithmetic keeps
    this fast (HUGEINT division costs ~5x more)."""
    canon = ", ".join(("canon", *carry))  # canon and the carried columns, at every level
    inner = (
        f"SELECT {canon}, msg, {hmac_sql(key, 'msg')} AS h FROM "
        f"(SELECT {canon}, {_message('canon', 'attempt')} AS msg FROM {relation})"
    )
    if space.integer:
        small_max = min(space.int_max, 2**63 - 1)
        small = (
            "CASE WHEN d = 1 THEN 0 ELSE (10 ** (d - 1))::BIGINT END + "
            f"{_a('h')} % (least((10 ** d)::BIGINT - 1, {small_max}) "
            "- CASE WHEN d = 1 THEN 0 ELSE (10 ** (d - 1))::BIGINT END + 1)"
        )
        lo = "('1' || repeat('0', d - 1))::HUGEINT"
        hi = f"least(repeat('9', d)::HUGEINT, {space.int_max}::HUGEINT)"
        return (
            f"SELECT {canon}, sign || CASE WHEN d <= 18 THEN "
            f"({small})::VARCHAR ELSE ({lo} + {_big('h')} % ({hi} - {lo} + 1))::VARCHAR END "
            f"AS cand FROM (SELECT {canon}, h, {_integer_bounds()} FROM ({inner}))"
        )
    rule = space.rule
    plen = _prefix_len(rule, "canon")
    if rule.format == "hex":
        return (
            f"SELECT {canon}, CASE WHEN canon = '' THEN '' ELSE left(canon, {plen}) || "
            f"upper(substr(h, 1, {rule.length})) END AS cand FROM ({inner})"
        )
    block = hmac_sql(key, f"msg || {_US} || b::VARCHAR")
    byte = "('0x' || substr(stream, 2 * i - 1, 2))::INTEGER"  # i: 1-based character index
    char = (
        f"CASE {_char_class('c')} WHEN '9' THEN chr(48 + {byte} % 10) "
        f"WHEN 'a' THEN chr(97 + {byte} % 26) WHEN 'A' THEN chr(65 + {byte} % 26) ELSE c END"
    )
    stream = (
        f"h || CASE WHEN length(rest) > 32 THEN array_to_string("
        f"list_transform(range(1, ceil(length(rest) / 32)::BIGINT), lambda b: {block}), '') "
        "ELSE '' END"
    )
    return (
        f"SELECT {canon}, prefix || CASE WHEN regexp_full_match(rest, '[0-9]{{1,15}}') THEN "
        f"lpad(({_a('h')} % (10 ** length(rest))::BIGINT)::VARCHAR, length(rest)::INTEGER, '0') "
        "WHEN regexp_full_match(rest, '[0-9]{16,30}') THEN "
        f"lpad(({_a('h')} % (10 ** (length(rest) - 15))::BIGINT)::VARCHAR, "
        "length(rest)::INTEGER - 15, '0') "
        f"|| lpad(({_b('h')} % 1000000000000000)::VARCHAR, 15, '0') "
        f"ELSE array_to_string(list_transform(string_split(rest, ''), lambda c, i: {char}), '') "
        f"END AS cand FROM (SELECT {canon}, h, msg, prefix, rest, {stream} AS stream FROM "
        f"(SELECT {canon}, h, msg, left(canon, {plen}) AS prefix, "
        f"substr(canon, {plen} + 1) AS rest FROM ({inner})))"
    )


def _integer_bounds() -> str:
    """SELECT list over an integer ``canon``: its digit count ``d`` and ``sign``."""
    return "length(ltrim(canon, '-')) AS d, CASE WHEN canon LIKE '-%' THEN '-' ELSE '' END AS sign"


def _shape(space: KeySpace) -> str:
    """SELECT list over ``canon`` ending in ``shape``: the class of values a pseudonym of this
    value can take (prefix and character classes; sign and digit count for integers)."""
    if space.integer:
        return f"{_integer_bounds()}, sign || d::VARCHAR AS shape"
    rule = space.rule
    if rule.format == "hex":
        return f"{_prefix_len(rule, 'canon')} AS plen, left(canon, plen) || '#hex' AS shape"
    return (
        f"{_prefix_len(rule, 'canon')} AS plen, substr(canon, plen + 1) AS rest, "
        "left(canon, plen) || chr(31) || CASE WHEN regexp_full_match(rest, '[0-9]+') "
        "THEN repeat('9', length(rest)) ELSE array_to_string("
        f"list_transform(string_split(rest, ''), lambda c: {_char_class('c')}), '') END AS shape"
    )


def _fixed_point(space: KeySpace) -> str:
    """Values with nothing to replace (empty, punctuation only, or a bare prefix) map to
    themselves: there is no other value of their shape. Over :func:`_shape`'s columns (its
    ``rest``: the value after the prefix)."""
    if space.integer:
        return "false"
    if space.rule.format == "hex":
        return "canon = ''"
    return "canon = '' OR NOT regexp_matches(rest, '[0-9A-Za-z]|[^\\x00-\\x7F]')"


# ---------------------------------------------------------------- building a key space


def build_key_space(
    con: duckdb.DuckDBPyConnection,
    space: KeySpace,
    key: bytes,
    source: str = "src",
    avoid: str | None = None,
) -> SpaceStats:
    """Create the space's mapping table over the distinct canonical values of all its member
    columns and resolve collisions (see the module docstring). ``avoid`` names a table of
    lower-cased original identifiers of the whole warehouse (column ``lv``) that a pseudonym
    must not equal either, like the space's own originals."""
    unions = (
        "SELECT DISTINCT canon FROM ("
        + " UNION ALL ".join(
            f"SELECT {canonical(space, qi(c))} AS canon FROM {source}.raw.{qi(t)}"
            for t, c in space.members
        )
        + ")"
    )
    t = space.table
    values = f"{t}_values"
    con.execute(
        f"CREATE OR REPLACE TABLE {values} AS SELECT canon, {_fixed_point(space)} AS fixed, "
        f"shape FROM (SELECT canon, {_shape(space)} FROM ({unions}) WHERE canon IS NOT NULL)"
    )
    # A shape at least half full (a sequential key) is permuted outright (step 2 first):
    # drawing would mostly hit taken codes.
    dense = [
        shape
        for shape, n in con.execute(
            f"SELECT shape, count(*) FROM {values} WHERE NOT fixed GROUP BY shape ORDER BY shape"
        ).fetchall()
        if _is_dense(space, shape, n)
    ]
    dense_sql = "false" if not dense else "shape IN (" + ", ".join(ql(d) for d in dense) + ")"
    # round 0 of step 2 for every other value, in one statement over every row (fixed and
    # dense values carry a NULL candidate: no join back to the values is needed)
    first = _candidates(
        space,
        key,
        # a NULL attempt makes a NULL message: no HMAC for a value that draws no candidate
        f"(SELECT canon, CASE WHEN fixed OR {dense_sql} THEN NULL ELSE 0 END AS attempt, fixed, "
        f"{dense_sql} AS dense FROM {values})",
        carry=("fixed", "dense"),
    )
    # A candidate is kept outright when its 64-bit hash is no other candidate's, no
    # original's and (lower-cased) no avoided identifier's: then the candidate itself is none
    # of them. The few others (collisions, clashes, hash coincidences) are the *suspects*,
    # left pending with their candidate and checked exactly by the first round of
    # _draw_again. Comparing hashes instead of strings halves this statement at crm scale 5.
    avoided = "false" if avoid is None else f"hash(lower(cand)) IN (SELECT hash(lv) FROM {avoid})"
    con.execute(
        f"""CREATE OR REPLACE TABLE {t} AS
            WITH c AS (SELECT canon, fixed, CASE WHEN fixed OR dense THEN NULL ELSE cand END AS cand
                       FROM ({first})),
                 h AS (SELECT canon, fixed, cand, hash(cand) AS hc FROM c),
                 shared AS (SELECT hc FROM h WHERE cand IS NOT NULL GROUP BY hc
                            HAVING count(*) > 1)
            SELECT canon, CASE WHEN fixed THEN canon ELSE cand END AS pseudo, 0 AS attempt,
                   fixed OR (cand IS NOT NULL  -- hash(NULL) is a number
                             AND coalesce(NOT (hc IN (SELECT hc FROM shared)
                                               OR hc IN (SELECT hash(canon) FROM {values})
                                               OR {avoided}), false)) AS done
            FROM h"""
    )
    con.execute(f"DROP TABLE {values}")
    suspects = _suspects(con, t)
    if dense:
        if suspects:  # settled first: the permuted shapes take no code a suspect keeps
            _check_suspects(con, space, avoid)
            suspects = False
        _enumerate_shapes(con, space, key, min_fill=0.5, marker=DENSE, avoid=avoid)
    _draw_again(con, space, key, avoid, check_first=suspects)
    if _pending(con, t):
        members = ", ".join(f"{a}.{b}" for a, b in space.members)
        raise TransformError(
            f"pseudonymize ({members}): collisions still unresolved after {MAX_ATTEMPTS} draws; "
            "the value shape leaves too few codes, use format: hex"
        )
    row = con.execute(
        f"""SELECT count(*), count(*) FILTER (WHERE attempt > 0 OR attempt = {ENUMERATED}),
                   (SELECT count(*) FROM (SELECT hash(pseudo) AS h FROM {t}
                    GROUP BY h HAVING count(*) > 1))
            FROM {t}"""
    ).fetchone()
    assert row is not None
    collisions = 0
    if row[2]:  # some pseudonyms share a 64-bit hash: count the ones that are equal
        exact = con.execute(
            f"SELECT coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM {t} "
            "GROUP BY pseudo HAVING count(*) > 1)"
        ).fetchone()
        collisions = int(exact[0]) if exact else 0
    return SpaceStats(values=int(row[0]), resolved=int(row[1]), collisions=collisions)


def _suspects(con: duckdb.DuckDBPyConnection, t: str) -> bool:
    """Whether round 0 left values pending with a candidate (the hash prefilter's suspects)."""
    row = con.execute(
        f"SELECT count(*) FROM {t} WHERE NOT done AND pseudo IS NOT NULL AND attempt = 0"
    ).fetchone()
    return bool(row and row[0])


def _check_suspects(con: duckdb.DuckDBPyConnection, space: KeySpace, avoid: str | None) -> None:
    """Round 0's exact check of the suspects (:func:`_accept` on their candidates), written
    back before a step that must see them settled."""
    t = space.table
    pend = f"{t}_pending"
    con.execute(f"CREATE OR REPLACE TABLE {pend} AS SELECT * FROM {t} WHERE NOT done")
    _accept(con, t, pend, avoid)
    _write_back(con, t, pend)
    con.execute(f"DROP TABLE {pend}")


def _draw_again(
    con: duckdb.DuckDBPyConnection,
    space: KeySpace,
    key: bytes,
    avoid: str | None,
    check_first: bool = False,
) -> None:
    """Steps 2 and 3 of the module docstring for the values still pending after round 0;
    with ``check_first`` the pending values first get round 0's exact check of the
    candidate they hold (the suspects of the hash prefilter).

    The rounds work on a copy of the pending rows (a few per thousand), written back once at the
    end: updating the whole mapping table every round cost a scan of every key per statement,
    and the checks against settled values and originals probe the big tables with the pending
    candidates (an inner join builds on its smaller side) instead of building a hash table over
    every key."""
    t = space.table
    pend = f"{t}_pending"
    con.execute(f"CREATE OR REPLACE TABLE {pend} AS SELECT * FROM {t} WHERE NOT done")
    candidate = _candidates(space, key, f"(SELECT canon, attempt FROM {pend} WHERE NOT done)")
    if check_first:
        _accept(con, t, pend, avoid)
    enumerated = False
    for _ in range(MAX_ATTEMPTS):
        if _pending(con, pend) == 0:
            break
        if not enumerated and _attempt(con, pend) >= PROBE_ATTEMPTS:
            _write_back(con, t, pend)
            _enumerate_shapes(con, space, key, min_fill=0.0, marker=ENUMERATED, avoid=avoid)
            con.execute(f"CREATE OR REPLACE TABLE {pend} AS SELECT * FROM {t} WHERE NOT done")
            enumerated = True
            continue
        con.execute(f"UPDATE {pend} SET attempt = attempt + 1 WHERE NOT done")
        con.execute(
            f"UPDATE {pend} SET pseudo = c.cand FROM ({candidate}) c WHERE {pend}.canon = c.canon"
        )
        _accept(con, t, pend, avoid)
    _write_back(con, t, pend)
    con.execute(f"DROP TABLE {pend}")


def _write_back(con: duckdb.DuckDBPyConnection, t: str, pend: str) -> None:
    con.execute(
        f"UPDATE {t} SET pseudo = p.pseudo, attempt = p.attempt, done = p.done "
        f"FROM {pend} p WHERE {t}.canon = p.canon"
    )


def _pending(con: duckdb.DuckDBPyConnection, t: str) -> int:
    row = con.execute(f"SELECT count(*) FROM {t} WHERE NOT done").fetchone()
    return int(row[0]) if row else 0


def _attempt(con: duckdb.DuckDBPyConnection, t: str) -> int:
    row = con.execute(f"SELECT coalesce(max(attempt), 0) FROM {t} WHERE NOT done").fetchone()
    return int(row[0]) if row else 0


def _not_avoided(candidate: str, avoid: str | None) -> str:
    if avoid is None:
        return "true"
    return f"lower({candidate}) NOT IN (SELECT lv FROM {avoid})"


def _accept(con: duckdb.DuckDBPyConnection, t: str, pend: str, avoid: str | None) -> None:
    """Mark the pending values (``pend``, a copy of ``t``'s unsettled rows) whose candidate is
    free (see step 2 of the module docstring): no settled value has it (settled before the
    rounds, in ``t``, or in an earlier round, in ``pend``), it is no original of the space and
    not avoided, and it is the smallest canonical wanting it."""
    wanted = f"(SELECT pseudo FROM {pend} WHERE NOT done)"
    settled = (
        f"(SELECT a.pseudo FROM {t} a SEMI JOIN {wanted} w ON a.pseudo = w.pseudo WHERE a.done)"
    )
    originals = f"(SELECT o.canon FROM {t} o SEMI JOIN {wanted} w ON o.canon = w.pseudo)"
    avoided = (
        "false"
        if avoid is None
        else f"lower(p.pseudo) IN (SELECT i.lv FROM {avoid} i "
        f"SEMI JOIN {wanted} w ON i.lv = lower(w.pseudo))"
    )
    con.execute(
        f"""UPDATE {pend} SET done = true WHERE canon IN (
            SELECT canon FROM (
                SELECT p.canon, row_number() OVER (PARTITION BY p.pseudo ORDER BY p.canon) AS rn
                FROM {pend} p
                WHERE NOT p.done
                  AND p.pseudo NOT IN {settled}
                  AND NOT EXISTS (SELECT 1 FROM {pend} a WHERE a.done AND a.pseudo = p.pseudo)
                  AND (p.attempt >= {AVOID_ORIGINALS_ATTEMPTS}
                       OR (p.pseudo NOT IN {originals} AND NOT ({avoided})))
            ) WHERE rn = 1)"""
    )


def _is_dense(space: KeySpace, shape: str, count: int) -> bool:
    if not space.integer and space.rule.format == "hex":
        return False
    capacity, _ = _shape_capacity(space, shape)
    return capacity <= ENUMERATE_LIMIT and count >= 0.5 * capacity


def _shape_capacity(space: KeySpace, shape: str) -> tuple[int, str]:
    """How many codes a shape holds, and the SQL decoding code index ``idx`` into a code."""
    if space.integer:
        digits = int(shape.lstrip("-"))
        sign = "-" if shape.startswith("-") else ""
        lo = 0 if digits == 1 else 10 ** (digits - 1)
        hi = min(10**digits - 1, space.int_max)
        return hi - lo + 1, f"{ql(sign)} || ({lo}::HUGEINT + idx)::VARCHAR"
    prefix, pattern = shape.split("\x1f", 1)
    radix = {"9": 10, "a": 26, "A": 26}
    capacity = 1
    for c in pattern:
        capacity *= radix.get(c, 1)
    parts: list[str] = [ql(prefix)]
    weight = 1
    for c in reversed(pattern):
        if c in radix:
            base = {"9": 48, "a": 97, "A": 65}[c]
            parts.append(f"chr({base} + ((idx // {weight}) % {radix[c]})::INTEGER)")
            weight *= radix[c]
        else:
            parts.append(ql(c))
    body = list(reversed(parts[1:])) or ["''"]
    return capacity, " || ".join([parts[0], *body])


def _enumerate_shapes(
    con: duckdb.DuckDBPyConnection,
    space: KeySpace,
    key: bytes,
    min_fill: float,
    marker: int,
    avoid: str | None = None,
) -> None:
    """Hand the free codes of each pending shape with at most :data:`ENUMERATE_LIMIT` codes and
    at least ``min_fill`` of them pending to its pending values: codes and values are each
    ordered by a keyed hash and paired in that order (a keyed permutation for a full shape)."""
    t = space.table
    if not space.integer and space.rule.format == "hex":
        return
    shapes = con.execute(
        f"SELECT shape, count(*) FROM (SELECT canon, {_shape(space)} FROM {t} WHERE NOT done) "
        "GROUP BY shape ORDER BY shape"
    ).fetchall()
    value_salt = ql(hmac_hex(key, "enumerate|value")[:32])
    code_salt = ql(hmac_hex(key, "enumerate|code")[:32])
    for shape, pending in shapes:
        capacity, decode = _shape_capacity(space, shape)
        if capacity > ENUMERATE_LIMIT or pending < min_fill * capacity:
            continue
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE _anon_codes AS SELECT code FROM "
            f"(SELECT {decode} AS code FROM range({capacity}) r(idx)) c "
            f"WHERE NOT EXISTS (SELECT 1 FROM {t} u WHERE u.done AND u.pseudo = c.code)"
        )
        fresh = f"code NOT IN (SELECT canon FROM {t}) AND {_not_avoided('code', avoid)}"
        free_new = con.execute(f"SELECT count(*) FROM _anon_codes WHERE {fresh}").fetchone()
        if free_new is not None and free_new[0] >= pending:
            con.execute(f"DELETE FROM _anon_codes WHERE NOT ({fresh})")
        con.execute(
            f"""UPDATE {t} SET pseudo = f.code, done = true, attempt = {marker}
                FROM (SELECT canon, row_number() OVER (ORDER BY hash({value_salt} || canon), canon)
                             AS j
                      FROM (SELECT canon, {_shape(space)} FROM {t} WHERE NOT done)
                      WHERE shape = {ql(shape)}) p
                JOIN (SELECT code, row_number() OVER (ORDER BY hash({code_salt} || code), code)
                             AS j FROM _anon_codes) f ON f.j = p.j
                WHERE {t}.canon = p.canon"""
        )
    con.execute("DROP TABLE IF EXISTS _anon_codes")


def resolved_in_column(
    con: duckdb.DuckDBPyConnection, space: KeySpace, table: str, column: str, source: str = "src"
) -> int:
    """Distinct values of one member column that did not keep their first candidate."""
    row = con.execute(
        f"SELECT count(*) FROM {space.table} m "
        f"WHERE (m.attempt > 0 OR m.attempt = {ENUMERATED}) AND m.canon IN "
        f"(SELECT {canonical(space, qi(column))} FROM {source}.raw.{qi(table)})"
    ).fetchone()
    return int(row[0]) if row else 0


def resolved_in_map(con: duckdb.DuckDBPyConnection, map_table: str) -> dict[int, int]:
    """:func:`resolved_in_column` of each column of a table from its :func:`value_map_sql`
    (``__ci`` -> count): the map already pairs the column's originals with their space
    entries, so no column is read again."""
    rows = con.execute(
        f"SELECT __ci, count(DISTINCT resolved) FROM {map_table} GROUP BY __ci"
    ).fetchall()
    return {int(ci): int(n) for ci, n in rows}


def pseudonym_column(space: KeySpace, column: str, type_: str, alias: str) -> ColumnSQL:
    """The released value of a member column: the mapped pseudonym with the original's surface
    form (spaces, all-lower case) re-applied; NULL stays NULL. The reference form: the pass
    joins a per-table :func:`value_map_sql` instead (:func:`mapped_column`), which computes the
    same value once per distinct original rather than once per row."""
    v = col(SRC, column)
    join = f"LEFT JOIN {space.table} {alias} ON {alias}.canon = {canonical(space, v)}"
    p = f"{alias}.pseudo"
    if space.integer:
        return ColumnSQL(expr=f"CAST({p} AS {type_})", joins=[join])
    return ColumnSQL(expr=_surface(space, v, p), joins=[join])


def _surface(space: KeySpace, v: str, p: str) -> str:
    """The released text of the original ``v`` whose canonical maps to the pseudonym ``p``."""
    if space.integer or not space.rule.case_insensitive:
        return p
    trimmed = f"trim({v})"
    lower = f"({trimmed} = lower({trimmed}) AND {trimmed} <> upper({trimmed}))"
    lead = f"left({v}, length({v}) - length(ltrim({v})))"
    trail = f"right({v}, length({v}) - length(rtrim({v})))"
    cased = f"CASE WHEN {lower} THEN lower({p}) ELSE {p} END"
    # an unpadded value (nearly all) skips cutting and re-joining its empty padding
    return (
        f"CASE WHEN {v} IS NULL THEN NULL WHEN {v} = {trimmed} THEN {cased} "
        f"ELSE {lead} || {cased} || {trail} END"
    )


def value_map_sql(
    space: KeySpace, table: str, columns: list[tuple[int, str]], source: str = "src"
) -> str:
    """A query (``__ci``, ``v``, ``out``, ``resolved``): for each member column of ``table``
    (numbered by ``__ci``), its distinct non-NULL originals ``v`` with their released text
    ``out`` (what :func:`pseudonym_column` gives for a row holding ``v``; VARCHAR, integer
    spaces too) and, when its canonical did not keep its first candidate, that canonical.

    The release joins a column to it on the original value itself: canonicalizing and
    re-applying the surface form run once per distinct original, not once per row, and the
    join builds over the originals this table holds, not every key of the warehouse."""
    needed = " UNION ALL ".join(
        f"SELECT {i} AS __ci, {qi(c)} AS v FROM {source}.raw.{qi(table)}" for i, c in columns
    )
    surface = _surface(space, "d.v", "m.pseudo")
    if not space.integer and space.rule.case_insensitive:
        # an original already in canonical form (unpadded upper case: most keys) needs no
        # case or padding check: the pseudonym as it is
        surface = f"CASE WHEN d.v = m.canon THEN m.pseudo ELSE {surface} END"
    return (
        f"SELECT d.__ci, d.v, {surface} AS out, "
        f"CASE WHEN m.attempt > 0 OR m.attempt = {ENUMERATED} THEN m.canon END AS resolved "
        f"FROM (SELECT DISTINCT __ci, v FROM ({needed}) WHERE v IS NOT NULL) d "
        f"JOIN {space.table} m ON m.canon = {canonical(space, 'd.v')}"
    )


def mapped_column(space: KeySpace, column: str, type_: str, values: str, alias: str) -> ColumnSQL:
    """The released value of a member column through ``values``, the column's rows of a
    :func:`value_map_sql` (equal to :func:`pseudonym_column`); NULL stays NULL."""
    out = f"{alias}.out"
    return ColumnSQL(
        expr=f"CAST({out} AS {type_})" if space.integer else out,
        joins=[f"LEFT JOIN {values} {alias} ON {alias}.v = {col(SRC, column)}"],
    )

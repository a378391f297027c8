"""Realistic replacements from seeded Faker pools, consistent across tables and runs.

A pool is a pure function of (provider, locale, faker seed): entry i is drawn by
``Faker(locale, use_weighting=False)`` (~5x faster than weighted) re-seeded with
``seed_instance(seed * 2**32 + i)``. An original maps to ``pool[HMAC(k, canonical) mod
pool_size]``, k a sub-key of the secret: the same original gets the same replacement in every
table and every run with the same secret and seed, a different secret gives a different mapping.
Seeding each entry on its own lets the pass draw only the entries some value maps to (a 20k pool
for 2k distinct names costs 2k Faker calls), cached in-process, and loaded into DuckDB as
``(idx, value)``. No date provider is offered, so today's date never changes a pool.

- ``email``: the local part is the pool entry's local part plus ``.`` and six keyed hex
  characters, so two originals sharing a pool entry still get different addresses (almost
  always), under the pool entry's ``example.*`` domain;
- ``unique: true``: where distinct originals still end on one replacement, all but the smallest
  canonical get ``-`` and four keyed hex characters appended (to the local part for emails),
  drawn again until no two originals share a value;
- a replacement the leak scan would count as an original direct identifier of the warehouse
  is drawn again from HMAC(k, canonical || 0x1E || n), up to :data:`MAX_REDRAWS` times: one
  equal to it (case-insensitively: a fake first name "Martin" when some original company is
  "Martin"), and one written in an unsegmented script (Chinese, Japanese, ...) that contains
  it without its spaces, as the scan searches such values (:func:`clashing_sql`: a fake
  欧阳淑华 holds a real 阳淑华);
- the canonical is ``upper(trim(v))`` (``case_insensitive``), so drifted spellings of one value
  get one replacement; the original's case and padding are not re-applied (a replacement is a
  new value, not a re-spelling). NULL stays NULL, the empty string stays empty.

Columns with the same ``fake`` rule share one mapping table (their key space), so a name that
appears in two tables is replaced identically.

Full names: first and last names are drawn independently, so a fake first + last name can spell
a real person's full name (a composite identifier of the policy). After the tables are built,
:func:`redraw_full_names` finds the rows whose released composite equals an original
identifier and replaces one faked part (the last non-unique, non-email one: the surname of a
first + last name) by pool entry HMAC(k, parts || 0x1E || n) mod pool_size, n = 1, 2, ..., keyed
by the original parts: the same person gets the same fake full name in every row, and the
redrawn part is itself no original identifier.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import importlib.metadata
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
from faker import Faker

from benchforge.anonymize.policy.models import Fake, Policy
from benchforge.anonymize.transform.sql import (
    SRC,
    ColumnSQL,
    TransformError,
    canonical_sql,
    col,
    hex_int_sql,
    hmac_sql,
    is_text,
    qi,
    ql,
)
from benchforge.anonymize.transform.text import (
    UNSEGMENTED_RANGES,
    UNSEGMENTED_SQL,
    unsegmented_sql,
)

_UNSEGMENTED = re.compile(f"[{UNSEGMENTED_RANGES}]")
MAX_ROUNDS = 50
MAX_REDRAWS = 8


@dataclass
class FakeSpace:
    table: str  # work table (canon, fake, attempt, done)
    pool_table: str  # work table (idx, value)
    rule: Fake
    members: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class FakeStats:
    values: int
    resolved: int  # canonicals that got a suffix (unique only)
    collisions: int  # canonicals sharing a replacement (unique only; 0)


@functools.lru_cache(maxsize=64)
def _generator(provider: str, locale: str) -> tuple[Faker, dict[tuple[int, int], str]]:
    return Faker(locale, use_weighting=False), {}


def _cache_file(provider: str, locale: str, seed: int) -> Path:
    """Pool entries are a pure function of (provider, locale, seed, index, Faker version), so
    they are kept on disk between runs (``$BENCHFORGE_CACHE_DIR`` or ``~/.cache/benchforge``,
    like the synthesizer's pools): drawing them is the one-off cost of a pool, not of a run."""
    root = os.environ.get("BENCHFORGE_CACHE_DIR") or Path.home() / ".cache" / "benchforge"
    version = importlib.metadata.version("faker")
    return Path(root) / "anonymize-pools" / f"faker-{version}" / f"{provider}-{locale}-{seed}.json"


_loaded: set[tuple[str, str, int]] = set()


def pool_entries(provider: str, locale: str, seed: int, indices: list[int]) -> list[str]:
    """Pool entries ``indices`` of the (provider, locale, seed) pool: from the in-process cache,
    else the disk cache, else drawn (entry i from a Faker seeded with seed * 2**32 + i)."""
    faker, cache = _generator(provider, locale)
    path = _cache_file(provider, locale, seed)
    if (provider, locale, seed) not in _loaded:
        _loaded.add((provider, locale, seed))
        try:
            stored = json.loads(path.read_text())
            cache.update({(seed, int(i)): str(v) for i, v in stored.items()})
        except (OSError, ValueError, AttributeError):
            pass  # no cache yet, or a damaged one: drawn again and rewritten
    make = getattr(faker, provider)
    out: list[str] = []
    drawn = False
    for i in indices:
        value = cache.get((seed, i))
        if value is None:
            faker.seed_instance(seed * 2**32 + i)
            value = cache[(seed, i)] = str(make())
            drawn = True
        out.append(value)
    if drawn:
        _store(path, {str(i): v for (s, i), v in cache.items() if s == seed})
    return out


def _store(path: Path, entries: dict[str, str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(entries))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: the pool is drawn again next time, nothing else changes


def plan_fake_spaces(
    policy: Policy, types: dict[str, dict[str, str]], work: str
) -> list[FakeSpace]:
    spaces: dict[str, FakeSpace] = {}
    for table, column, spec in policy.columns_with("fake"):
        rule = spec.rule
        assert isinstance(rule, Fake)
        if not is_text(types[table][column]):
            raise TransformError(
                f"{table}.{column}: fake writes text, the column is {types[table][column]}"
            )
        sig = rule.model_dump_json()
        if sig not in spaces:
            n = len(spaces)
            spaces[sig] = FakeSpace(
                table=f"{work}.fk_{n}", pool_table=f"{work}.pool_{n}", rule=rule
            )
        spaces[sig].members.append((table, column))
    return list(spaces.values())


def canonical(space: FakeSpace, expr: str) -> str:
    return canonical_sql(expr, space.rule.case_insensitive)


def _with_suffix(value: str, token: str, email: bool) -> str:
    if email:
        return f"regexp_replace({value}, '@', '-' || {token} || '@')"
    return f"{value} || '-' || {token}"


def build_fake_space(
    con: duckdb.DuckDBPyConnection,
    space: FakeSpace,
    key: bytes,
    seed: int,
    source: str = "src",
    avoid: str | None = None,
    keys: str | None = None,
) -> FakeStats:
    """Draw the pool entries the member columns need and create the mapping table over their
    distinct canonical values. ``avoid`` names a table of lower-cased original identifiers
    (column ``lv``): a replacement equal to one of them is drawn again (see the module
    docstring); ``unique`` then resolves shared replacements. ``keys``: the
    :func:`unsegmented_keys` table of ``avoid`` when the caller built it already."""
    rule = space.rule
    unions = (
        "SELECT DISTINCT canon FROM ("
        + " UNION ALL ".join(
            f"SELECT {canonical(space, qi(c))} AS canon FROM {source}.raw.{qi(t)}"
            for t, c in space.members
        )
        + ")"
    )
    email = rule.provider == "email"
    # the email token comes from the first digest, whatever entry is drawn
    pick = "p.value"
    if email:
        pick = (
            "split_part(p.value, '@', 1) || '.' || substr(v.h, 16, 6) || '@' || "
            "split_part(p.value, '@', 2)"
        )
    drawn = f"{space.table}_idx"
    con.execute(
        f"""CREATE OR REPLACE TABLE {drawn} AS
            SELECT canon, h, 0 AS draw, {hex_int_sql("h", 1, 15)} % {rule.pool_size} AS idx
            FROM (SELECT canon, {hmac_sql(key, "canon")} AS h FROM ({unions})
                  WHERE canon IS NOT NULL)"""
    )
    con.execute(f"CREATE OR REPLACE TABLE {space.pool_table} (idx BIGINT, value VARCHAR)")
    redraw = hmac_sql(key, "canon || chr(30) || (draw + 1)::VARCHAR")
    if avoid is not None and keys is None:
        keys = unsegmented_keys(con, avoid)
    for _ in range(MAX_REDRAWS + 1):
        _load_entries(con, space, seed, drawn)
        if avoid is None:
            break
        candidates = (
            f"SELECT v.canon, {pick} AS value FROM {drawn} v JOIN {space.pool_table} p "
            "USING (idx) WHERE v.canon <> ''"
        )
        assert keys is not None
        clashing = f"SELECT canon FROM ({clashing_sql(candidates, avoid, keys)})"
        pending = con.execute(f"SELECT count(*) FROM ({clashing})").fetchone()
        if not pending or not pending[0] or _max_draw(con, drawn) >= MAX_REDRAWS:
            break
        con.execute(
            f"UPDATE {drawn} SET idx = {hex_int_sql(redraw, 1, 15)} % {rule.pool_size}, "
            f"draw = draw + 1 WHERE canon IN ({clashing})"
        )
    t = space.table
    con.execute(
        f"""CREATE OR REPLACE TABLE {t} AS
            SELECT v.canon, CASE WHEN v.canon = '' THEN '' ELSE {pick} END AS fake,
                   0 AS attempt, v.draw, NOT {str(rule.unique).lower()} OR v.canon = '' AS done
            FROM {drawn} v JOIN {space.pool_table} p USING (idx)"""
    )
    if rule.unique:
        _make_unique(con, t, key, email, space)
    row = con.execute(
        f"""SELECT count(*), count(*) FILTER (WHERE attempt > 0 OR draw > 0),
                   (SELECT coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM {t}
                    GROUP BY fake HAVING count(*) > 1))
            FROM {t}"""
    ).fetchone()
    assert row is not None
    return FakeStats(
        values=int(row[0]),
        resolved=int(row[1]),
        collisions=int(row[2]) if rule.unique else 0,
    )


def unsegmented_keys(con: duckdb.DuckDBPyConnection, avoid: str) -> str:
    """``<avoid>_unsegmented(key, head, len)``: the identifiers of ``avoid`` (column ``lv``)
    written in an unsegmented script, without their whitespace, as the leak scan searches them
    inside released values (:mod:`benchforge.anonymize.report.leaks`, search 3)."""
    table = f"{avoid}_unsegmented"
    con.execute(
        f"""CREATE OR REPLACE TABLE {table} AS
            SELECT DISTINCT key, substr(key, 1, 2) AS head, length(key) AS len
            FROM (SELECT regexp_replace(lv, '\\s+', '', 'g') AS key FROM {avoid}
                  WHERE {unsegmented_sql("lv")})
            WHERE length(key) >= 2"""
    )
    return table


def clashing_sql(candidates: str, avoid: str, keys: str) -> str:
    """The rows of ``candidates`` (a query with a VARCHAR column ``value``) whose value the leak
    scan would count as an original identifier: equal to one of ``avoid`` (``lv``,
    case-insensitively, trimmed), or, holding a character of an unsegmented script, containing
    one of ``keys`` (:func:`unsegmented_keys`) anywhere. The scan only searches runs between
    spaces and punctuation, so this finds everything it finds (and a little more)."""
    return f"""
        SELECT c.* FROM ({candidates}) c
        WHERE lower(trim(c.value)) IN (SELECT lv FROM {avoid})
        UNION
        SELECT c.* FROM ({candidates}) c
        WHERE {unsegmented_sql("c.value")} AND EXISTS (
            SELECT 1 FROM (SELECT unnest(range(1, length(c.value))) AS i) pos
            JOIN {keys} k ON substr(lower(c.value), pos.i, 2) = k.head
            WHERE substr(lower(c.value), pos.i, k.len) = k.key)"""


def _max_draw(con: duckdb.DuckDBPyConnection, drawn: str) -> int:
    row = con.execute(f"SELECT coalesce(max(draw), 0) FROM {drawn}").fetchone()
    return int(row[0]) if row else 0


def _load_entries(con: duckdb.DuckDBPyConnection, space: FakeSpace, seed: int, drawn: str) -> None:
    """Add the pool entries the drawn indexes need and the pool table lacks."""
    rule = space.rule
    indices = [
        int(r[0])
        for r in con.execute(
            f"SELECT DISTINCT idx FROM {drawn} WHERE idx NOT IN "
            f"(SELECT idx FROM {space.pool_table}) ORDER BY 1"
        ).fetchall()
    ]
    if not indices:
        return
    try:
        values = pool_entries(rule.provider, rule.locale, seed, indices)
    except AttributeError as exc:  # a locale without this provider
        raise TransformError(f"fake: no provider {rule.provider!r} for {rule.locale}") from exc
    arrow = pa.table({"idx": pa.array(indices, pa.int64()), "value": pa.array(values, pa.string())})
    con.register("_anon_pool", arrow)
    con.execute(f"INSERT INTO {space.pool_table} SELECT idx, value FROM _anon_pool")
    con.unregister("_anon_pool")


def _make_unique(
    con: duckdb.DuckDBPyConnection, t: str, key: bytes, email: bool, space: FakeSpace
) -> None:
    """Rounds like the pseudonyms': a pending value keeps its candidate when no settled value
    has it and it is the smallest canonical wanting it; the others get a fresh keyed suffix on
    their round-0 replacement."""
    con.execute(f"ALTER TABLE {t} ADD COLUMN base VARCHAR")
    con.execute(f"UPDATE {t} SET base = fake")
    for _ in range(MAX_ROUNDS):
        con.execute(
            f"""UPDATE {t} SET done = true WHERE canon IN (
                SELECT canon FROM (
                    SELECT p.canon, row_number() OVER (PARTITION BY p.fake ORDER BY p.canon) AS rn
                    FROM {t} p WHERE NOT p.done
                      AND NOT EXISTS (SELECT 1 FROM {t} a WHERE a.done AND a.fake = p.fake)
                ) WHERE rn = 1)"""
        )
        left = con.execute(f"SELECT count(*) FROM {t} WHERE NOT done").fetchone()
        if left is None or left[0] == 0:
            return
        con.execute(f"UPDATE {t} SET attempt = attempt + 1 WHERE NOT done")
        message = "canon || chr(30) || attempt::VARCHAR"
        token = f"substr({hmac_sql(key, message)}, 1, 4)"
        con.execute(f"UPDATE {t} SET fake = {_with_suffix('base', token, email)} WHERE NOT done")
    members = ", ".join(f"{a}.{b}" for a, b in space.members)
    raise TransformError(f"fake unique ({members}): replacements still shared after suffixes")


def fake_column(space: FakeSpace, column: str, alias: str) -> ColumnSQL:
    """The released value of a member column (the reference form: the pass joins a per-table
    :func:`value_map_sql` instead, through :func:`mapped_column`)."""
    v = col(SRC, column)
    join = f"LEFT JOIN {space.table} {alias} ON {alias}.canon = {canonical(space, v)}"
    return ColumnSQL(expr=f"{alias}.fake", joins=[join])


def value_map_sql(
    space: FakeSpace, table: str, columns: list[tuple[int, str]], source: str = "src"
) -> str:
    """A query (``__ci``, ``v``, ``out``): for each member column of ``table`` (numbered by
    ``__ci``), its distinct non-NULL originals with their fakes, so the release joins a column
    on the original value itself (no canonical computed per row)."""
    needed = " UNION ALL ".join(
        f"SELECT {i} AS __ci, {qi(c)} AS v FROM {source}.raw.{qi(table)}" for i, c in columns
    )
    return (
        f"SELECT d.__ci, d.v, m.fake AS out "
        f"FROM (SELECT DISTINCT __ci, v FROM ({needed}) WHERE v IS NOT NULL) d "
        f"JOIN {space.table} m ON m.canon = {canonical(space, 'd.v')}"
    )


def mapped_column(column: str, values: str, alias: str) -> ColumnSQL:
    """The released value of a member column through ``values``, the column's rows of a
    :func:`value_map_sql` (equal to :func:`fake_column`)."""
    return ColumnSQL(
        expr=f"{alias}.out",
        joins=[f"LEFT JOIN {values} {alias} ON {alias}.v = {col(SRC, column)}"],
    )


def resolved_in_column(
    con: duckdb.DuckDBPyConnection, space: FakeSpace, table: str, column: str, source: str = "src"
) -> int:
    """Distinct values of one member column that did not keep their first pick (drawn again or
    given a suffix)."""
    row = con.execute(
        f"SELECT count(*) FROM {space.table} m WHERE (m.attempt > 0 OR m.draw > 0) AND m.canon IN "
        f"(SELECT {canonical(space, qi(column))} FROM {source}.raw.{qi(table)})"
    ).fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class FullName:
    """One composite identifier of a released table, and the faked part redrawn when the
    whole equals an original identifier."""

    table: str
    columns: tuple[str, ...]
    separator: str
    redraw: str
    space: FakeSpace


def redraw_part(columns: list[str], spaces: dict[str, FakeSpace]) -> str | None:
    """The part of a composite identifier a full-name collision redraws: the last faked,
    non-unique, non-email column (``unique`` would need its suffix rounds again, an email its
    token), or None."""
    for column in reversed(columns):
        space = spaces.get(column)
        if space and not space.rule.unique and space.rule.provider != "email":
            return column
    return None


def redraw_full_names(
    con: duckdb.DuckDBPyConnection,
    name: FullName,
    key: bytes,
    seed: int,
    avoid: str,
    source: str = "src",
    release: str = "rel",
    keys: str | None = None,
    spellable: str | None = None,
) -> int:
    """Redraw ``name.redraw`` on every row of ``release.raw.<table>`` whose composite equals an
    original identifier (``avoid``, column ``lv``); returns how many distinct people (original
    parts) were redrawn. Raises when a person still collides after :data:`MAX_REDRAWS`.
    ``keys``: the :func:`unsegmented_keys` table of ``avoid`` when the caller built it;
    ``spellable``: the :func:`spellable_identifiers` of ``avoid`` for the name's separator
    when the caller built it (the composites are looked up there, a far smaller table)."""
    t = qi(name.table)
    parts = ", ".join(f"upper(trim(CAST(s.{qi(c)} AS VARCHAR)))" for c in name.columns)
    composite = _composite_sql(name)
    not_null = " AND ".join(f"r.{qi(c)} IS NOT NULL" for c in name.columns)
    family_first = (
        f"concat({', '.join(f'trim(CAST(r.{qi(c)} AS VARCHAR))' for c in reversed(name.columns))})"
    )
    released_parts = ", ".join(f"r.{qi(c)}" for c in name.columns)
    # The released names that spell an identifier, found over the release alone (a parallel
    # scan; almost always none); only their rows are then paired with their originals (a
    # positional join runs on one thread).
    spellable = spellable or spellable_identifiers(con, avoid, name.separator)
    clashing = con.execute(
        f"SELECT DISTINCT [{released_parts}] FROM {release}.raw.{t} r "
        f"WHERE {not_null} AND (lower({composite}) IN (SELECT lv FROM {spellable}) "
        f"OR (regexp_matches({family_first}, '{UNSEGMENTED_SQL}') "
        f"AND lower({family_first}) IN (SELECT lv FROM {spellable})))"
    ).fetchall()
    rows: list[tuple[list[str], list[str]]] = []
    if clashing:
        con.register("_anon_clashing", pa.table({"parts": pa.array([r[0] for r in clashing])}))
        try:
            rows = con.execute(
                f"SELECT DISTINCT [{parts}], [{released_parts}] "
                f"FROM {source}.raw.{t} s POSITIONAL JOIN {release}.raw.{t} r "
                f"WHERE [{released_parts}] IN (SELECT parts FROM _anon_clashing) ORDER BY 1"
            ).fetchall()
        finally:
            con.unregister("_anon_clashing")
    pending = {tuple(originals): list(released) for originals, released in rows}
    chosen: dict[tuple[str, ...], str] = {}
    position = name.columns.index(name.redraw)
    if pending and keys is None:
        keys = unsegmented_keys(con, avoid)
    for draw in range(1, MAX_REDRAWS + 1):
        if not pending:
            break
        candidates = {
            person: _redraw_entry(name.space, key, seed, person, draw) for person in pending
        }
        spellings = {
            person: _spellings(
                [*released[:position], candidates[person], *released[position + 1 :]],
                name.separator,
            )
            for person, released in pending.items()
        }
        values = [v for spelled in spellings.values() for v in spelled]
        assert keys is not None
        taken = _in_identifiers(con, avoid, keys, [*values, *candidates.values()])
        for person in list(pending):
            if any(v in taken for v in spellings[person]):
                continue
            if candidates[person] in taken:
                continue
            chosen[person] = candidates[person]
            del pending[person]
    if pending:
        raise TransformError(
            f"{name.table}: {len(pending)} fake full name(s) still equal a real one after "
            f"{MAX_REDRAWS} redraws of {name.redraw}: raise its pool_size"
        )
    if chosen:
        _apply_redraws(con, name, chosen, source, release)
    return len(chosen)


def spellable_identifiers(con: duckdb.DuckDBPyConnection, avoid: str, separator: str) -> str:
    """The identifiers of ``avoid`` a full name joined by ``separator`` can spell, as the
    leak scan spells composites: with the separator inside, or (family name first, unspaced)
    in an unsegmented script. A work table beside ``avoid``."""
    table = f"{avoid}_spellable_{hashlib.sha256(separator.encode()).hexdigest()[:8]}"
    con.execute(
        f"CREATE OR REPLACE TABLE {table} AS SELECT lv FROM {avoid} "
        f"WHERE contains(lv, lower({ql(separator)})) OR {unsegmented_sql('lv')}"
    )
    return table


def _composite_sql(name: FullName) -> str:
    pieces = [f"trim(CAST(r.{qi(c)} AS VARCHAR))" for c in name.columns]
    return f" || '{name.separator.replace(chr(39), chr(39) * 2)}' || ".join(pieces)


def _redraw_entry(
    space: FakeSpace, key: bytes, seed: int, person: tuple[str, ...], draw: int
) -> str:
    message = "\x1f".join(person) + f"\x1e{draw}"
    digest = hmac.new(key, message.encode(), hashlib.sha256).hexdigest()
    index = int(digest[:15], 16) % space.rule.pool_size
    return pool_entries(space.rule.provider, space.rule.locale, seed, [index])[0]


def _spellings(parts: list[str], separator: str) -> list[str]:
    """A composite as the leak scan puts it together: joined by its separator, and, in an
    unsegmented script, family name first without a separator."""
    stripped = [p.strip() for p in parts]
    out = [separator.join(stripped)]
    family_first = "".join(reversed(stripped))
    if _UNSEGMENTED.search(family_first):
        out.append(family_first)
    return out


def _in_identifiers(
    con: duckdb.DuckDBPyConnection, avoid: str, keys: str, values: list[str]
) -> set[str]:
    """The given values the leak scan would count as an original identifier
    (:func:`clashing_sql`)."""
    con.register("_anon_names", pa.table({"value": pa.array(sorted(set(values)), pa.string())}))
    try:
        rows = con.execute(
            f"SELECT value FROM ({clashing_sql('SELECT value FROM _anon_names', avoid, keys)})"
        ).fetchall()
    finally:
        con.unregister("_anon_names")
    return {str(r[0]) for r in rows}


def _apply_redraws(
    con: duckdb.DuckDBPyConnection,
    name: FullName,
    chosen: dict[tuple[str, ...], str],
    source: str,
    release: str,
) -> None:
    people = list(chosen)
    keys = {
        f"k{i}": pa.array([p[i] for p in people], pa.string()) for i in range(len(name.columns))
    }
    con.register("_anon_redraws", pa.table({**keys, "v": pa.array(list(chosen.values()))}))
    t = qi(name.table)
    match = " AND ".join(
        f"o.k{i} = upper(trim(CAST(s.{qi(c)} AS VARCHAR)))" for i, c in enumerate(name.columns)
    )
    try:
        con.execute(
            f"UPDATE {release}.raw.{t} SET {qi(name.redraw)} = m.v FROM ("
            f"SELECT r.rowid AS rid, o.v FROM {source}.raw.{t} s POSITIONAL JOIN "
            f"{release}.raw.{t} r JOIN _anon_redraws o ON {match}) m "
            f"WHERE {release}.raw.{t}.rowid = m.rid"
        )
    finally:
        con.unregister("_anon_redraws")

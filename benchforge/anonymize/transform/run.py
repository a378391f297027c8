"""The transformation pass: a source warehouse and a policy in, a release warehouse out.

One DuckDB connection with the source attached READ_ONLY as ``src``, the release as ``rel`` and
an in-memory scratch database (mapping tables, helper tables) as ``work``; every table
stays in ``raw`` with the same columns, types, row count and row order (row i of a released
table is the transform of row i of the source). Memory is bounded by DuckDB (``memory_limit``,
spilling to a temp folder beside the release); no table is fetched into Python except the
free-text columns, streamed in Arrow batches, and the deny-list of original identifiers (one
entry per distinct identifier, which the free-text automaton needs in memory anyway).

The order matters:

1. key spaces: pseudonym and fake mapping tables over the union of the distinct values of every
   column sharing a rule, so foreign keys and the keys they reference map identically; no
   replacement may equal an original direct identifier of the warehouse (the leak scan's set);
2. each table in one INSERT ... SELECT composing every column's expression (joins to the
   mappings, keyed noise, date offsets), derive columns recomputed over the released values in
   the same statement; then a fake full name (composite identifier) that spells an original
   identifier has one part redrawn;
3. generalization of quasi-identifiers to the policy's k (rows still in small classes lose them);
4. free-text scrubbing, with a deny-list of every replaced identifier of the *whole* release;
5. ``aggregate_of`` tables, from their finished detail tables;
6. the policy's row checks on the release: a check that fails on a row where it held in the
   source stops the pass (the release is removed, nothing is published).

Then one comparison query per table counts what changed, for the manifest.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from benchforge.anonymize.policy.identifiers import (
    is_direct_identifier,
    short_number_sql,
)
from benchforge.anonymize.policy.models import (
    Derive,
    Fake,
    FrequencyFloor,
    Generalize,
    Perturb,
    Policy,
    Pseudonymize,
    Scrub,
    ShiftDates,
    Swap,
)
from benchforge.anonymize.transform import dates, fake, numeric, pseudonym
from benchforge.anonymize.transform.aggregate import aggregate_select
from benchforge.anonymize.transform.derive import wrap_derived
from benchforge.anonymize.transform.generalize import (
    GeneralizationError,
    build_frequency_floor,
    floor_column,
    plan_generalization,
)
from benchforge.anonymize.transform.models import ColumnOutcome, TableOutcome, TransformManifest
from benchforge.anonymize.transform.sql import (
    KEY,
    RID,
    SRC,
    ColumnSQL,
    TransformError,
    derive_key,
    is_integer,
    is_numeric,
    is_temporal,
    is_text,
    noise_salt,
    qi,
    ql,
    row_key_sql,
    with_lets,
)
from benchforge.anonymize.transform.swap import build_swap, swap_column
from benchforge.anonymize.transform.text import (
    UNSEGMENTED_SQL,
    DenyAutomaton,
    Scrubber,
    long_enough_sql,
    unsegmented_spellings,
    unsegmented_sql,
)
from benchforge.core.progress import ProgressEvent, RowsGenerated

WORK = "work.main"
IDENTIFIERS = f"{WORK}.identifiers"
# A pure number of fewer digits identifies nobody (the report's leak scan uses the same floor)
HOME = "memory.main"
SCRUB_BATCH_ROWS = 65_536
DENY_QUERY_THREADS = 2
ProgressFn = Callable[[ProgressEvent], None]


def anonymize_warehouse(
    source_db: Path,
    dest_db: Path,
    policy: Policy,
    secret: bytes,
    *,
    on_progress: ProgressFn | None = None,
    memory_limit: str = "640MB",  # crm scale 5: 44-51 s, peak RSS ~1.3 GB (2026-12-01)
    threads: int | None = None,
) -> TransformManifest:
    """Write the release of ``source_db`` to ``dest_db`` (which must not exist) under
    ``policy``, keyed by ``secret``; on any failure ``dest_db`` is removed."""
    started = time.perf_counter()
    source_db, dest_db = Path(source_db).resolve(), Path(dest_db).resolve()
    if not source_db.is_file():
        raise TransformError(f"no source warehouse at {source_db}")
    if dest_db == source_db:
        raise TransformError("the release cannot overwrite its source warehouse")
    if dest_db.exists():
        raise TransformError(f"{dest_db} exists; the pass writes a new warehouse")
    if not secret:
        raise TransformError("the anonymization secret is empty")
    dest_db.parent.mkdir(parents=True, exist_ok=True)
    scratch = dest_db.parent / f".{dest_db.name}.anon-work"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    try:
        with duckdb.connect() as con:
            con.execute(f"SET memory_limit = {ql(memory_limit)}")
            con.execute(f"SET temp_directory = {ql(str(scratch / 'spill'))}")
            # memory a statement freed goes back to the system (the allocator otherwise keeps
            # it for reuse, outside memory_limit, and the process grows with the warehouse)
            con.execute("SET allocator_background_threads = true")
            con.execute("SET allocator_flush_threshold = '64MB'")
            # every statement that writes the release orders its rows (ORDER BY the source
            # rowid), which DuckDB keeps regardless; the rest (mapping and helper tables) need
            # no order, and keeping one costs buffered memory
            con.execute("SET preserve_insertion_order = false")
            if threads:
                con.execute(f"SET threads = {int(threads)}")
            con.execute(f"ATTACH {ql(str(source_db))} AS src (READ_ONLY)")
            con.execute(f"ATTACH {ql(str(dest_db))} AS rel")
            # work tables in memory, spilled to temp_directory past memory_limit: a file
            # database compresses and writes every mapping table (crm scale 5: 71 s -> 59 s,
            # same peak RSS)
            con.execute("ATTACH ':memory:' AS work")
            con.execute("CREATE SCHEMA rel.raw")
            manifest = _Pass(con, policy, secret, on_progress).run()
            con.execute("DETACH work")
            con.execute("CHECKPOINT rel")
            con.execute("DETACH rel")
    except BaseException:
        for leftover in (dest_db, dest_db.with_name(dest_db.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    manifest.seconds = time.perf_counter() - started
    return manifest


def warehouse_types(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, dict[str, str]]:
    """table -> column -> DuckDB type of ``catalog.raw``, columns in table order."""
    out: dict[str, dict[str, str]] = {}
    for table, column, type_ in con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = ? AND schema_name = 'raw' ORDER BY table_name, column_index",
        [catalog],
    ).fetchall():
        out.setdefault(table, {})[column] = type_
    return out


@dataclass(frozen=True)
class _IdentifierSource:
    """One spelling of original direct identifiers: the leak scan's, and what the deny-list
    maps to the released spelling."""

    table: str
    original: str  # over the source row ``s``
    released: str | None  # over the released row ``r``; None: not replaced (not deny-listed)
    src_where: str  # the source row holds one (over ``s``)
    both_where: str | None = None  # both rows hold one (over ``s`` and ``r``); else src_where

    @property
    def where(self) -> str:
        return self.both_where or self.src_where


class _Pass:
    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        policy: Policy,
        secret: bytes,
        on_progress: ProgressFn | None,
    ):
        self.con = con
        self.policy = policy
        self.secret = secret
        self.on_progress = on_progress
        self.types = warehouse_types(con, "src")
        self.seconds: dict[str, float] = dict.fromkeys(self.types, 0.0)
        self.outcomes: dict[str, dict[str, ColumnOutcome]] = {}
        self.suppressed: dict[str, int] = {}
        self.rows: dict[str, int] = {}
        self.collisions = 0
        self.deny_size = 0
        self.ps_spaces: dict[tuple[str, str], pseudonym.KeySpace] = {}
        self.fake_spaces: dict[tuple[str, str], fake.FakeSpace] = {}
        self._work_tables: list[str] = []  # every name _work_table handed out, in order
        self.unsegmented = ""  # the identifiers' unsegmented_keys table, built with them
        self.spellable: dict[str, str] = {}  # separator -> fake.spellable_identifiers table
        self.offsets: dict[str, str] = {}  # shift_dates rule -> its entity offsets table
        self.identifier_masks = 0  # UBIGINT bit-set columns of the identifier set (m0, ...)

    # ------------------------------------------------------------------ driver

    def run(self) -> TransformManifest:
        _validate(self.policy, self.types)
        numeric.install_macros(self.con)
        for table, spec in self.policy.tables.items():
            self.outcomes[table] = {
                c: ColumnOutcome(rule=col.rule.rule) for c, col in spec.columns.items()
            }
        self._build_identifier_set()
        self._build_spaces()
        for table in self.types:
            self._timed(table, self._build_table, table)
        for table in self.types:
            self._timed(table, self._redraw_full_names, table)
        for table in self.types:
            self._timed(table, self._generalize, table)
        # A table's checks and change counts run as soon as it is final, on a second
        # connection, while this one scrubs free text (mostly Python on one core) and rebuilds
        # aggregates: the count is one thread per table (a positional join), so the two fill
        # the machine's two cores (crm scale 5: ~2 s of the pass).
        aggregated = {t for t, spec in self.policy.tables.items() if spec.aggregate_of}
        scrubbed = {t for t, _, _ in self._scrub_columns()}
        with ThreadPoolExecutor(max_workers=1) as finisher:
            finishing: list[Future[None]] = []

            def finish(table: str) -> None:
                if table not in aggregated:
                    finishing.append(finisher.submit(self._finish, table))

            try:
                for table in self.types:
                    if table not in scrubbed:
                        finish(table)
                self._scrub_all(on_table_done=finish)
                for table in self.types:
                    if table in aggregated:
                        self._timed(table, self._aggregate, table)
                        finishing.append(finisher.submit(self._finish, table))
            except BaseException:
                for queued in finishing:
                    queued.cancel()
                raise
            for done in finishing:
                done.result()  # a failed check stops the pass here
        return TransformManifest(
            policy_sha256=hashlib.sha256(self.policy.model_dump_json().encode()).hexdigest(),
            tables={
                t: TableOutcome(
                    rows=self.rows[t],
                    columns=self.outcomes[t],
                    suppressed_rows=self.suppressed.get(t, 0),
                    seconds=self.seconds[t],
                )
                for t in self.types
            },
            deny_list_size=self.deny_size,
            pseudonym_collisions=self.collisions,
        )

    def _timed(self, table: str, step: Callable[[str], None], arg: str) -> None:
        started = time.perf_counter()
        step(arg)
        self.seconds[table] += time.perf_counter() - started

    def _work_table(self, stem: str) -> str:
        self._work_tables.append(f"{WORK}.{stem}_{len(self._work_tables) + 1}")
        return self._work_tables[-1]

    def _drop_work_tables(self, since: int) -> None:
        """Drop the work tables named since ``since`` names were handed out (one table's value
        maps, noise and swap tables), except the shared date offsets: nothing reads them after
        that table's INSERT, and kept they only fill the memory limit and spill (crm scale 5:
        the temp folder peaked at 680 MB with them, 512 MB without)."""
        shared = set(self.offsets.values())
        for name in self._work_tables[since:]:
            if name not in shared:
                self.con.execute(f"DROP TABLE IF EXISTS {name}")

    # ------------------------------------------------------------------ 1. key spaces

    def _identifier_sources(self) -> list[_IdentifierSource]:
        """Every spelling of an original direct identifier, in policy order: each direct
        identifier column, then each composite identifier (and, of several parts, its family
        name first, unspaced, as the leak scan spells it in an unsegmented script)."""
        sources: list[_IdentifierSource] = []
        for table, spec in self.policy.tables.items():
            for column, col in spec.columns.items():
                if not is_direct_identifier(col):
                    continue
                c = f"CAST({{}}.{qi(column)} AS VARCHAR)"
                original, released = f"trim({c.format('s')})", f"trim({c.format('r')})"
                if col.rule.rule == "suppress":
                    released = "'<REDACTED>'"
                where = f"s.{qi(column)} IS NOT NULL"
                replaced = col.rule.rule in ("pseudonymize", "fake", "suppress")
                sources.append(
                    _IdentifierSource(table, original, released if replaced else None, where)
                )
            for ident in spec.identifiers:
                sep = ql(ident.separator)
                cols = [qi(c) for c in ident.columns]
                original = f"concat_ws({sep}, {', '.join(f'trim(s.{c}::VARCHAR)' for c in cols)})"
                released = f"concat_ws({sep}, {', '.join(f'trim(r.{c}::VARCHAR)' for c in cols)})"
                src_where = " AND ".join(f"s.{c} IS NOT NULL" for c in cols)
                both = " AND ".join(f"s.{c} IS NOT NULL AND r.{c} IS NOT NULL" for c in cols)
                sources.append(_IdentifierSource(table, original, released, src_where, both))
                if len(cols) > 1:
                    first, first_released = _family_name_first(cols, ident.separator)
                    sources.append(_IdentifierSource(table, first, first_released, src_where, both))
        return sources

    def _build_identifier_set(self) -> None:
        """``work.identifiers(lv, m0, ...)``: the lower-cased original direct identifiers (the
        leak scan's set, :func:`benchforge.anonymize.policy.identifiers.is_direct_identifier`
        plus composite identifiers, also family name first in an unsegmented script), which no
        pseudonym or fake may equal (nor, in an unsegmented script, contain:
        :func:`~benchforge.anonymize.transform.fake.clashing_sql`).

        When free text is scrubbed with a deny-list, ``m0, m1, ...`` (UBIGINT bit sets, 64
        entries each) say which deny-list entries (:meth:`_deny_entries`, numbered) spell each
        identifier: the deny-list later finds the entries worth reading from here instead of
        reading every identifier column again."""
        sources = self._identifier_sources()
        entries = self._deny_entries(sources)
        entry_of = {id(e): i for i, e in enumerate(entries)}
        masks = (len(entries) + 63) // 64 if self._deny_listing() else 0
        selects = []
        for source in sources:
            i = entry_of.get(id(source))
            bits = [
                f"{1 << (i % 64) if i is not None and i // 64 == m else 0}::UBIGINT AS m{m}"
                for m in range(masks)
            ]
            selects.append(
                f"SELECT {', '.join([f'{source.original} AS v', *bits])} "
                f"FROM src.raw.{qi(source.table)} s WHERE {source.src_where}"
            )
        empty = ", ".join(["NULL::VARCHAR AS v", *(f"0::UBIGINT AS m{m}" for m in range(masks))])
        union = " UNION ALL ".join(selects) or f"SELECT {empty} WHERE false"
        aggregates = "".join(f", bit_or(m{m}) AS m{m}" for m in range(masks))
        # One aggregate over the filtered rows: both filters are cheap per row (a length, and a
        # CASE whose regular expressions run on number-like values only), cheaper than a first
        # aggregate of distinct spellings to filter.
        self.con.execute(
            f"""CREATE OR REPLACE TABLE {IDENTIFIERS} AS
                SELECT lower(v) AS lv{aggregates} FROM ({union})
                WHERE v IS NOT NULL AND {long_enough_sql("v")} AND NOT ({short_number_sql("v")})
                GROUP BY lv"""
        )
        self.identifier_masks = masks
        self.unsegmented = fake.unsegmented_keys(self.con, IDENTIFIERS)

    def _deny_listing(self) -> bool:
        return any(rule.deny_list for _, _, rule in self._scrub_columns())

    @staticmethod
    def _deny_entries(sources: list[_IdentifierSource]) -> list[_IdentifierSource]:
        """The identifier spellings the deny-list maps to a replacement (the replaced ones)."""
        return [source for source in sources if source.released is not None]

    def _build_spaces(self) -> None:
        ps_key = derive_key(self.secret, "pseudonymize")
        for space in pseudonym.plan_key_spaces(self.policy, self.types, WORK):
            stats = pseudonym.build_key_space(self.con, space, ps_key, avoid=IDENTIFIERS)
            self.collisions += stats.collisions
            for t, c in space.members:
                self.ps_spaces[(t, c)] = space  # resolved counts: from the tables' value maps
        fake_key = derive_key(self.secret, "fake")
        for fspace in fake.plan_fake_spaces(self.policy, self.types, WORK):
            fstats = fake.build_fake_space(
                self.con,
                fspace,
                fake_key,
                self.policy.faker_seed,
                avoid=IDENTIFIERS,
                keys=self.unsegmented,
            )
            self.collisions += fstats.collisions
            for t, c in fspace.members:
                self.fake_spaces[(t, c)] = fspace
                self.outcomes[t][c].collisions_resolved = fake.resolved_in_column(
                    self.con, fspace, t, c
                )

    # ------------------------------------------------------------------ 2. tables

    def _column_maps(self, table: str) -> dict[str, str]:
        """pseudonymized or faked column -> its rows of a per-table value map (original ->
        released text, :func:`~benchforge.anonymize.transform.pseudonym.value_map_sql`), one
        work table per key space of ``table`` (its columns tell theirs apart by ``__ci``).

        A column's join then builds its hash table over the originals this table holds, not
        over the whole space, and matches the original value itself: the canonical form and
        the surface form (padding, case) are computed once per distinct original, not per row."""
        by_space: dict[str, list[tuple[int, str]]] = {}
        spaces: dict[str, pseudonym.KeySpace | fake.FakeSpace] = {}
        for i, column in enumerate(self.types[table]):
            space = self.ps_spaces.get((table, column)) or self.fake_spaces.get((table, column))
            if space is not None:
                by_space.setdefault(space.table, []).append((i, column))
                spaces[space.table] = space
        maps: dict[str, str] = {}
        for space_table, members in by_space.items():
            space = spaces[space_table]
            work_table = self._work_table("map")
            values = (
                pseudonym.value_map_sql(space, table, members)
                if isinstance(space, pseudonym.KeySpace)
                else fake.value_map_sql(space, table, members)
            )
            self.con.execute(f"CREATE OR REPLACE TABLE {work_table} AS {values}")
            for i, column in members:
                maps[column] = f"(SELECT v, out FROM {work_table} WHERE __ci = {i})"
            if isinstance(space, pseudonym.KeySpace):
                resolved = pseudonym.resolved_in_map(self.con, work_table)
                for i, column in members:
                    self.outcomes[table][column].collisions_resolved = resolved.get(i, 0)
        return maps

    def _column_sql(
        self,
        table: str,
        column: str,
        index: int,
        offsets: dict[str, str],
        maps: dict[str, str],
    ) -> ColumnSQL:
        spec = self.policy.tables[table]
        rule = spec.columns[column].rule
        type_ = self.types[table][column]
        alias = f"j{index}"
        if isinstance(rule, Pseudonymize):
            space = self.ps_spaces[(table, column)]
            return pseudonym.mapped_column(space, column, type_, maps[column], alias)
        if isinstance(rule, Fake):
            return fake.mapped_column(column, maps[column], alias)
        if isinstance(rule, Perturb):
            stream = rule.stream or f"{table}|{column}"
            return numeric.perturb_column(
                self.con,
                table=table,
                column=column,
                type_=type_,
                rule=rule,
                salt=noise_salt(self.secret, "perturb|" + stream),
                key_columns=rule.key or spec.primary_key,
                all_columns=list(self.types[table]),
                source_table=f"src.raw.{qi(table)}",
                work_table=self._work_table("perturb"),
                alias=alias,
                source_key_columns=spec.primary_key,
            )
        if isinstance(rule, ShiftDates):
            work_table = self._offsets(rule)
            return dates.shift_column(
                column,
                type_,
                rule,
                work_table,
                alias="o" + work_table.rsplit("_", 1)[1],
                salt=noise_salt(self.secret, f"shift_dates|{table}|{rule.entity}"),
            )
        if isinstance(rule, Swap):
            group = rule.group or column
            if f"swap|{group}" not in offsets:
                offsets[f"swap|{group}"] = self._work_table("swap")
                build_swap(
                    self.con,
                    offsets[f"swap|{group}"],
                    f"src.raw.{qi(table)}",
                    spec.swap_group(column),
                    rule.within,
                    primary_key=spec.primary_key,
                    all_columns=list(self.types[table]),
                    salt=noise_salt(self.secret, f"swap|{table}|{group}"),
                )
            work_table = offsets[f"swap|{group}"]
            return swap_column(column, work_table, "w" + work_table.rsplit("_", 1)[1])
        if isinstance(rule, FrequencyFloor):
            work_table = self._work_table("floor")
            build_frequency_floor(self.con, work_table, f"src.raw.{qi(table)}", column, rule)
            return floor_column(column, rule, work_table, alias, type_)
        if rule.rule == "suppress":
            return ColumnSQL(expr=f"CAST(NULL AS {type_})")
        # keep; derive, generalize and scrub start from the source value and are applied later
        return ColumnSQL(expr=f"{SRC}.{qi(column)}")

    def _offsets(self, rule: ShiftDates) -> str:
        """The entity offsets of one shift_dates rule, built once over every table it shifts
        (:func:`~benchforge.anonymize.transform.dates.build_offsets`)."""
        sig = rule.model_dump_json()
        if sig not in self.offsets:
            self.offsets[sig] = self._work_table("offsets")
            tables = sorted(
                {t for t, _, spec in self.policy.columns_with("shift_dates") if spec.rule == rule}
            )
            dates.build_offsets(
                self.con,
                self.offsets[sig],
                [f"src.raw.{qi(t)}" for t in tables],
                rule.entity,
                rule,
                derive_key(self.secret, "shift_dates"),
            )
        return self.offsets[sig]

    def _build_table(self, table: str) -> None:
        since = len(self._work_tables)
        self._write_table(table)
        # on a failure the pass stops and the in-memory work database goes with it
        self._drop_work_tables(since)

    def _write_table(self, table: str) -> None:
        spec = self.policy.tables[table]
        columns = self.types[table]
        offsets: dict[str, str] = {}
        maps = self._column_maps(table)
        items: list[str] = []
        early: list[str] = []
        joins: dict[str, None] = {}
        sqls = [
            self._column_sql(table, column, i, offsets, maps) for i, column in enumerate(columns)
        ]
        for i, (column, sql) in enumerate(zip(columns, sqls, strict=True)):
            if sql.joins or sql.expr == f"{SRC}.{qi(column)}":
                items.append(f"{sql.expr} AS {qi(column)}")
                joins.update(dict.fromkeys(sql.joins))
            else:
                # computed over the source rows before the joins: DuckDB evaluates a lambda
                # (numeric noise binds its values with them) ~3x slower over a join's output
                early.append(f"{sql.expr} AS __anon_early_{i}")
                items.append(f"{SRC}.__anon_early_{i} AS {qi(column)}")
        key = row_key_sql("t", spec.primary_key, list(columns))
        source = f"(SELECT *, rowid AS {RID}, {key} AS {KEY} FROM src.raw.{qi(table)} t) {SRC}"
        source = with_lets(source, sqls)
        if early:
            source = f"(SELECT {SRC}.*, {', '.join(early)} FROM {source}) {SRC}"
        inner = f"SELECT {', '.join(items)}, {SRC}.{RID} AS {RID} FROM {source} {' '.join(joins)}"
        derived = [
            (c, columns[c], col.rule.sql)
            for c, col in spec.columns.items()
            if isinstance(col.rule, Derive)
        ]
        select = (
            f"SELECT {', '.join(qi(c) for c in columns)} FROM ({wrap_derived(inner, derived)}) "
            f"ORDER BY {RID}"
        )
        self.con.execute(f"CREATE TABLE rel.raw.{qi(table)} ({_ddl(columns)})")
        try:
            self.con.execute(f"INSERT INTO rel.raw.{qi(table)} {select}")
        except duckdb.Error as exc:
            raise TransformError(f"{table}: building the release failed: {exc}") from exc
        counts = self.con.execute(
            f"SELECT (SELECT count(*) FROM src.raw.{qi(table)}), "
            f"(SELECT count(*) FROM rel.raw.{qi(table)})"
        ).fetchone()
        assert counts is not None
        if counts[0] != counts[1]:  # a mapping with a repeated key would multiply rows
            raise TransformError(f"{table}: {counts[1]} released rows for {counts[0]} source rows")
        self.rows[table] = int(counts[1])
        if self.on_progress is not None:
            self.on_progress(
                RowsGenerated(table=table, rows=self.rows[table], total_rows=self.rows[table])
            )

    def _replace_table(self, table: str, select: str) -> None:
        """Rebuild ``rel.raw.<table>`` from ``select`` (every column, in order, rows in order)."""
        new = f"rel.raw.{qi('__anon_new_' + table)}"
        self.con.execute(f"CREATE TABLE {new} ({_ddl(self.types[table])})")
        try:
            self.con.execute(f"INSERT INTO {new} {select}")
        except duckdb.Error as exc:
            raise TransformError(f"{table}: rebuilding the release failed: {exc}") from exc
        self.con.execute(f"DROP TABLE rel.raw.{qi(table)}")
        self.con.execute(f"ALTER TABLE {new} RENAME TO {qi(table)}")

    def _redraw_full_names(self, table: str) -> None:
        """No composite identifier (first + last name) of the release may spell an original
        identifier (:func:`~benchforge.anonymize.transform.fake.redraw_full_names`)."""
        key = derive_key(self.secret, "fake")
        spaces = {c: s for (t, c), s in self.fake_spaces.items() if t == table}
        for ident in self.policy.tables[table].identifiers if table in self.policy.tables else []:
            part = fake.redraw_part(ident.columns, spaces)
            if part is None:
                continue
            name = fake.FullName(table, tuple(ident.columns), ident.separator, part, spaces[part])
            if ident.separator not in self.spellable:
                self.spellable[ident.separator] = fake.spellable_identifiers(
                    self.con, IDENTIFIERS, ident.separator
                )
            redrawn = fake.redraw_full_names(
                self.con,
                name,
                key,
                self.policy.faker_seed,
                IDENTIFIERS,
                keys=self.unsegmented,
                spellable=self.spellable[ident.separator],
            )
            self.outcomes[table][part].full_name_redraws += redrawn

    # ------------------------------------------------------------------ 3. generalization

    def _generalize(self, table: str) -> None:
        spec = self.policy.tables[table]
        rules = {c: col.rule for c, col in spec.columns.items() if isinstance(col.rule, Generalize)}
        if not rules:
            return
        qi_spec = self.policy.quasi_identifiers[table]
        columns = self.types[table]
        try:
            plan = plan_generalization(
                self.con, f"rel.raw.{qi(table)}", qi_spec, rules, dict(columns)
            )
        except (GeneralizationError, duckdb.Error) as exc:
            raise TransformError(f"{table}: generalization failed: {exc}") from exc
        exprs = [
            f"CAST({plan.select_sql[c]} AS {t}) AS {qi(c)}" if c in plan.select_sql else qi(c)
            for c, t in columns.items()
        ]
        self._replace_table(
            table, f"SELECT {', '.join(exprs)} FROM rel.raw.{qi(table)} ORDER BY rowid"
        )
        for c, level in plan.levels.items():
            if c in self.outcomes[table]:
                self.outcomes[table][c].generalization_level = level
        self.suppressed[table] = plan.suppressed_rows

    # ------------------------------------------------------------------ 4. free text

    def _deny_list(self) -> dict[str, str]:
        """Original identifier -> its replacement, over the whole release: every direct
        identifier column (:func:`~benchforge.anonymize.policy.identifiers.is_direct_identifier`,
        the leak scan's definition) that is pseudonymized or faked maps to its released value, a
        suppressed one to ``<REDACTED>``; composite identifiers map to their joined released
        parts. Pure numbers of fewer than six digits are left out, like in the leak scan."""
        deny: dict[str, str] = {}
        vocabulary = self._text_vocabulary()
        # Only identifiers whose first alphanumeric run occurs as a word of some scrubbed text
        # can ever match there (outside unsegmented scripts the scrubber matches on word
        # boundaries, so a match's first run is a whole run of the text): the rest never reach
        # Python. Identifiers in an unsegmented script match anywhere.
        may_match = (
            f"{long_enough_sql('o')} "
            f"AND NOT ({short_number_sql('o')}) "
            f"AND (regexp_extract(lower(o), '[a-z0-9]+') IN (SELECT tok FROM {vocabulary}) "
            f"OR {unsegmented_sql('o')})"
        )
        entries = self._deny_entries(self._identifier_sources())
        if not entries:
            return deny
        # Every original here is a spelling of the identifier set (lower-cased, filtered like
        # above), so the identifiers that may match, found once over that distinct set, are a
        # cheap necessary condition; the set's bit sets name the entries with any such
        # original (most key columns have none); only those read the release beside their
        # source (a positional join, one thread).
        hot = f"{WORK}.deny_candidates"
        masks = "".join(f", m{m}" for m in range(self.identifier_masks))
        self.con.execute(
            f"CREATE OR REPLACE TABLE {hot} AS SELECT lv{masks} FROM {IDENTIFIERS} "
            f"WHERE regexp_extract(lv, '[a-z0-9]+') IN (SELECT tok FROM {vocabulary}) "
            f"OR {unsegmented_sql('lv')}"
        )
        found: set[int] = set()
        if self.identifier_masks:
            row = self.con.execute(
                "SELECT "
                + ", ".join(f"coalesce(bit_or(m{m}), 0)" for m in range(self.identifier_masks))
                + f" FROM {hot}"
            ).fetchone()
            assert row is not None
            found = {
                64 * m + bit for m, bits in enumerate(row) for bit in range(64) if bits >> bit & 1
            }

        def pairs(entry: _IdentifierSource) -> list[tuple[str, str]]:
            con = self.con.cursor()
            try:
                return con.execute(
                    f"SELECT DISTINCT {entry.original} AS o, {entry.released} "
                    f"FROM src.raw.{qi(entry.table)} s "
                    f"POSITIONAL JOIN rel.raw.{qi(entry.table)} r WHERE {entry.where} "
                    f"AND lower(o) IN (SELECT lv FROM {hot}) AND {may_match} ORDER BY 1, 2"
                ).fetchall()
            finally:
                con.close()

        # a positional join runs on one thread: two at a time fill two cores; merged in entry
        # order, so the first entry to list an original still gives its replacement
        with ThreadPoolExecutor(max_workers=DENY_QUERY_THREADS) as pool:
            listed = pool.map(pairs, [e for i, e in enumerate(entries) if i in found])
            for rows in listed:
                for o, r in rows:
                    deny.setdefault(o, r)
                    for spelling, replacement in unsegmented_spellings(o, r):
                        deny.setdefault(spelling, replacement)
        return deny

    def _text_vocabulary(self) -> str:
        """``work.vocabulary(tok)``: every maximal ASCII alphanumeric run (lower-cased) of every
        column the policy scrubs, as the texts stand before scrubbing."""
        # distinct texts first: templated notes repeat (crm scale 5: 1.4 s -> 0.2 s)
        selects = [
            f"SELECT DISTINCT {qi(c)} AS x FROM rel.raw.{qi(t)} WHERE {qi(c)} IS NOT NULL"
            for t, spec in self.policy.tables.items()
            for c, col in spec.columns.items()
            if isinstance(col.rule, Scrub) and col.rule.deny_list
        ]
        table = f"{WORK}.vocabulary"
        union = " UNION ".join(selects) or "SELECT NULL::VARCHAR AS x WHERE false"
        self.con.execute(
            f"CREATE OR REPLACE TABLE {table} AS SELECT tok FROM ("
            f"SELECT DISTINCT unnest(regexp_split_to_array(lower(x), '[^a-z0-9]+')) AS tok "
            f"FROM ({union})) WHERE tok <> ''"
        )
        return table

    def _scrub_columns(self) -> list[tuple[str, str, Scrub]]:
        return [
            (t, c, col.rule)
            for t, spec in self.policy.tables.items()
            for c, col in spec.columns.items()
            if isinstance(col.rule, Scrub)
        ]

    def _scrub_all(self, on_table_done: Callable[[str], None]) -> None:
        """Scrub every ``scrub`` column; ``on_table_done(table)`` once a table's last one is."""
        scrub_columns = self._scrub_columns()
        if not scrub_columns:
            return
        left = Counter(t for t, _, _ in scrub_columns)
        deny = DenyAutomaton(
            self._deny_list() if any(r.deny_list for _, _, r in scrub_columns) else {}
        )
        scrubbers: dict[str, Scrubber] = {}
        for table, column, rule in scrub_columns:
            if not is_text(self.types[table][column]):
                raise TransformError(f"{table}.{column}: scrub needs a VARCHAR column")
            sig = rule.model_dump_json()
            if sig not in scrubbers:
                scrubbers[sig] = Scrubber(rule, deny)  # the rule says if it uses the deny-list
                self.deny_size = max(self.deny_size, scrubbers[sig].deny_list_size)
            started = time.perf_counter()
            hits = self._scrub_column(table, column, scrubbers[sig])
            self.outcomes[table][column].scrub_hits = dict(sorted(hits.items()))
            self.seconds[table] += time.perf_counter() - started
            left[table] -= 1
            if not left[table]:
                on_table_done(table)

    def _scrub_column(self, table: str, column: str, scrubber: Scrubber) -> Counter[str]:
        """Scrub each distinct text of the column once (a text's scrubbing depends on the text
        alone; generated and templated notes repeat a lot: crm's 384 k task descriptions are
        8 k texts), streamed in Arrow batches with how many rows hold it, and write the changed
        ones back with one UPDATE matching the old text (row order untouched)."""
        staged = f"{WORK}.scrubbed"
        self.con.execute(f"CREATE OR REPLACE TABLE {staged} (old VARCHAR, new VARCHAR)")
        hits: Counter[str] = Counter()
        # a second cursor streams the texts while this one writes the staged values
        cursor = self.con.cursor()
        try:
            result = cursor.execute(
                f"SELECT {qi(column)} AS v, count(*) AS n FROM rel.raw.{qi(table)} "
                f"WHERE {qi(column)} IS NOT NULL GROUP BY {qi(column)}"
            )
            reader = (
                result.to_arrow_reader(SCRUB_BATCH_ROWS)  # DuckDB >= 1.4
                if hasattr(result, "to_arrow_reader")
                else result.fetch_record_batch(SCRUB_BATCH_ROWS)
            )
            for batch in reader:
                old = batch.column(0)
                rows = batch.column(1).to_numpy(zero_copy_only=False)
                new, found = scrubber.scrub(old, weights=rows)
                hits.update(found)
                changed = pc.fill_null(pc.not_equal(old, new), True)
                out = pa.table({"old": old.filter(changed), "new": new.filter(changed)})
                if out.num_rows:
                    self.con.register("_anon_scrubbed", out)
                    self.con.execute(f"INSERT INTO {staged} SELECT old, new FROM _anon_scrubbed")
                    self.con.unregister("_anon_scrubbed")
        finally:
            cursor.close()
        self.con.execute(
            f"UPDATE rel.raw.{qi(table)} SET {qi(column)} = u.new FROM {staged} u "
            f"WHERE rel.raw.{qi(table)}.{qi(column)} = u.old"
        )
        return hits

    # ------------------------------------------------------------------ 5. aggregates

    def _aggregate(self, table: str) -> None:
        agg = self.policy.tables[table].aggregate_of
        assert agg is not None
        select = aggregate_select(self.con, table, agg, self.types[table], WORK, HOME)
        self._replace_table(table, select)

    # ------------------------------------------------------------------ 6. checks, counts

    def _finish(self, table: str) -> None:
        """The checks and change counts of a final table, on a connection of its own (this
        runs beside the main connection's work)."""
        started = time.perf_counter()
        con = self.con.cursor()
        try:
            self._check(table, con)
            self._count_changes(table, con)
        finally:
            con.close()
        self.seconds[table] += time.perf_counter() - started

    def _check(self, table: str, con: duckdb.DuckDBPyConnection) -> None:
        t = qi(table)
        for check in self.policy.tables[table].checks:
            try:
                row = con.execute(
                    f"SELECT count(*) FROM (SELECT rowid AS __anon_i FROM rel.raw.{t} "
                    f"WHERE NOT ({check})) r WHERE r.__anon_i NOT IN (SELECT __anon_i FROM "
                    f"(SELECT row_number() OVER (ORDER BY rowid) - 1 AS __anon_i, * "
                    f"FROM src.raw.{t}) WHERE NOT ({check}))"
                ).fetchone()
            except duckdb.Error as exc:
                raise TransformError(f"{table}: check {check!r} cannot run: {exc}") from exc
            broken = int(row[0]) if row else 0
            if broken:
                raise TransformError(
                    f"{table}: check {check!r} fails on {broken} released rows where it holds "
                    "in the source"
                )

    def _count_changes(self, table: str, con: duckdb.DuckDBPyConnection) -> None:
        columns = list(self.types[table])
        parts = []
        for c in columns:
            q = qi(c)
            parts.append(f"count(*) FILTER (WHERE s.{q} IS DISTINCT FROM r.{q})")
            parts.append(f"count(*) FILTER (WHERE s.{q} IS NOT NULL AND r.{q} IS NULL)")
            parts.append(f"count(*) FILTER (WHERE s.{q} IS NOT NULL)")
        row = con.execute(
            f"SELECT {', '.join(parts)} FROM src.raw.{qi(table)} s "
            f"POSITIONAL JOIN rel.raw.{qi(table)} r"
        ).fetchone()
        assert row is not None
        for i, c in enumerate(columns):
            outcome = self.outcomes[table][c]
            changed, nulls_added, non_null = (int(v) for v in row[3 * i : 3 * i + 3])
            outcome.changed = changed
            outcome.nulls_added = nulls_added
            if outcome.rule == "perturb" and non_null:
                # short values plain lsd cannot move are released exactly: say how many
                outcome.unchanged_share = (non_null - changed) / non_null


def _family_name_first(cols: list[str], separator: str) -> tuple[str, str]:
    """A composite identifier in an unsegmented script as Chinese and Japanese write a name:
    the parts in reverse order (family name first), with no separator; the original and its
    replacement, over ``s`` and ``r``. NULL for originals in other scripts (never deny-listed)."""

    def joined(alias: str) -> str:
        return f"concat({', '.join(f'trim({alias}.{c}::VARCHAR)' for c in reversed(cols))})"

    original = (
        f"CASE WHEN regexp_matches({joined('s')}, '{UNSEGMENTED_SQL}') THEN {joined('s')} END"
    )
    as_released = f"concat_ws({ql(separator)}, {', '.join(f'trim(r.{c}::VARCHAR)' for c in cols)})"
    released = (
        f"CASE WHEN regexp_matches({joined('r')}, '{UNSEGMENTED_SQL}') THEN {joined('r')} "
        f"ELSE {as_released} END"
    )
    return original, released


def _ddl(columns: dict[str, str]) -> str:
    return ", ".join(f"{qi(c)} {t}" for c, t in columns.items())


def _validate(policy: Policy, types: dict[str, dict[str, str]]) -> None:
    """Fail before writing anything on what the pass cannot do (the policy check covers more;
    this is what the transform itself relies on)."""
    problems: list[str] = []
    for table in sorted(set(types) - set(policy.tables)):
        problems.append(f"{table}: table in the warehouse but not in the policy")
    for table in sorted(set(policy.tables) - set(types)):
        problems.append(f"{table}: table in the policy but not in the warehouse")
    for table, spec in policy.tables.items():
        if table not in types:
            continue
        cols = types[table]
        for c in sorted(set(cols) - set(spec.columns)):
            problems.append(f"{table}.{c}: column without a rule")
        for c in sorted(set(spec.columns) - set(cols)):
            problems.append(f"{table}.{c}: no such column in the warehouse")
        for c in spec.primary_key:
            if c not in cols:
                problems.append(f"{table}: primary key column {c} does not exist")
        for column, col in spec.columns.items():
            if column not in cols:
                continue
            problems.extend(_rule_problems(policy, table, column, col.rule, cols))
        for fk, ref in spec.foreign_keys.items():
            problems.extend(_fk_problems(policy, types, table, fk, ref))
        if spec.aggregate_of is not None:
            for c in spec.aggregate_of.columns:
                if c in spec.columns and spec.columns[c].rule.rule != "keep":
                    problems.append(
                        f"{table}.{c}: an aggregate_of column must be 'keep' (the aggregate "
                        "pass recomputes it)"
                    )
    if problems:
        raise TransformError("the policy cannot be applied:\n  " + "\n  ".join(problems))


def _rule_problems(
    policy: Policy, table: str, column: str, rule: object, cols: dict[str, str]
) -> list[str]:
    type_ = cols[column]
    where = f"{table}.{column}"
    out: list[str] = []
    if isinstance(rule, Perturb):
        if not (is_numeric(type_) or (is_text(type_) and rule.method == "lsd")):
            out.append(f"{where}: perturb {rule.method} cannot apply to {type_}")
        for c in [*rule.group_by, *rule.key]:
            if c not in cols:
                out.append(f"{where}: perturb refers to missing column {c}")
    elif isinstance(rule, ShiftDates):
        if not is_temporal(type_):
            out.append(f"{where}: shift_dates needs a DATE or TIMESTAMP column, not {type_}")
        if rule.entity not in cols:
            out.append(f"{where}: shift_dates entity {rule.entity} does not exist")
        if rule.whole_weeks and 0 < rule.max_days < 7:
            out.append(f"{where}: whole_weeks with max_days < 7 leaves no offset")
    elif isinstance(rule, FrequencyFloor):
        if not is_text(type_):
            out.append(f"{where}: frequency_floor needs a VARCHAR column, not {type_}")
        for c in rule.within:
            if c not in cols:
                out.append(f"{where}: frequency_floor refers to missing column {c}")
    elif isinstance(rule, Swap):
        for c in rule.within:
            if c not in cols:
                out.append(f"{where}: swap refers to missing column {c}")
        members = policy.tables[table].swap_group(column)
        for c in members:
            if c in rule.within:
                out.append(f"{where}: swap moves {c} within itself")
            other = policy.tables[table].columns[c].rule
            if isinstance(other, Swap) and other.within != rule.within:
                out.append(
                    f"{where}: swap group {rule.group} needs one within for all its columns "
                    f"({c} has {other.within})"
                )
    elif isinstance(rule, Generalize):
        spec = policy.quasi_identifiers.get(table)
        if spec is None or column not in spec.columns:
            out.append(f"{where}: generalize needs the column among the table's quasi_identifiers")
    elif isinstance(rule, Scrub | Fake) and not is_text(type_):
        out.append(f"{where}: {rule.rule} needs a VARCHAR column, not {type_}")
    elif isinstance(rule, Pseudonymize) and not (is_text(type_) or is_integer(type_)):
        out.append(f"{where}: pseudonymize needs a VARCHAR or integer column, not {type_}")
    return out


def _fk_problems(
    policy: Policy, types: dict[str, dict[str, str]], table: str, fk: str, ref: str
) -> list[str]:
    """A foreign key and the key it references must be replaced by the same rule, or joins
    break in the release."""
    ref_table, _, ref_col = ref.partition(".")
    if fk not in types[table]:
        return [f"{table}.{fk}: foreign key column does not exist"]
    if ref_table not in types or ref_col not in types[ref_table] or ref_table not in policy.tables:
        return [f"{table}.{fk}: references {ref}, which does not exist"]
    mine = policy.tables[table].columns[fk].rule
    theirs = policy.tables[ref_table].columns[ref_col].rule
    replacing = ("pseudonymize", "fake")
    if mine.rule not in replacing and theirs.rule not in replacing:
        return []
    same_class = is_integer(types[table][fk]) == is_integer(types[ref_table][ref_col])
    if mine != theirs or not same_class:
        return [
            f"{table}.{fk}: references {ref} but their rules differ ({mine.rule} vs "
            f"{theirs.rule}, or a different format / type): the join would break"
        ]
    return []

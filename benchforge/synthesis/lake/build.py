"""``build_lake``: a dataset written as a data lake — the spec's exports split into files of
mixed formats, its prose reports, and seeded distractors — under ``<out>/lake/``, with the
record of every file's provenance in ``<out>/lake_record.json`` (beside the lake, not in it:
an agent is given the lake folder only). The dataset itself is not touched.

Every file's rows are given by the query in its record, over the dataset's ``raw`` schema;
row draws are ``hash(salt || rowid)``, so that query gives the same rows on the dataset as on
the working copy the lake was written from."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb

from benchforge.core.records import DatasetRecord
from benchforge.core.sql import literal, quote
from benchforge.synthesis.engine.generate import WAREHOUSE
from benchforge.synthesis.lake.loader import LakeSpecError, check_against_dataset
from benchforge.synthesis.lake.parts import WHOLE, Part, describe_split, split_parts
from benchforge.synthesis.lake.record import LakeFile, LakeRecord, SheetBlock
from benchforge.synthesis.lake.spec import (
    CsvOptions,
    Export,
    LakeSpec,
    Report,
    Split,
    TableFormat,
    Workbook,
    sentence_fields,
)
from benchforge.synthesis.lake.working import (
    column_types,
    dataset_column_types,
    open_lake_copy,
    read_dataset_record,
    resolve_spec,
)
from benchforge.synthesis.lake.writers import (
    render_sentence,
    write_csv,
    write_json,
    write_parquet,
    write_report,
    write_xlsx,
)
from benchforge.synthesis.perturb.seeding import choose, salt

T = TypeVar("T")

LAKE_DIR = "lake"
RECORD_FILE = "lake_record.json"

_EXTENSIONS: dict[TableFormat, str] = {
    "csv": ".csv",
    "json": ".json",
    "jsonl": ".jsonl",
    "parquet": ".parquet",
}
_PROSE_EXTENSIONS = {"markdown": ".md", "text": ".txt"}
_NUMERIC = ("DOUBLE", "FLOAT", "REAL", "INTEGER", "BIGINT", "SMALLINT", "HUGEINT")
_NEAR_DUPLICATE_NAMES = ("{stem}_v2", "{stem}_revised", "{stem}_final", "{stem} (1)")
_STALE_NAMES = (
    "backup/{stem}",
    "{folder}old/{stem}",
    "{folder}{stem}_old",
    "{folder}copy of {stem}",
)
_UNRELATED_FOLDERS = ("misc", "shared", "archive", "tmp")


def build_lake(
    dataset_dir: Path | str, spec: LakeSpec | Path | str, out_dir: Path | str, seed: int
) -> LakeRecord:
    """Writes the lake of ``dataset_dir`` to ``out_dir/lake`` and its record beside it.
    ``spec``: a spec or its YAML file (named in errors)."""
    spec, source = resolve_spec(spec)
    dataset_dir = Path(dataset_dir)
    dataset = read_dataset_record(dataset_dir)
    warehouse = dataset_dir / WAREHOUSE
    check_against_dataset(spec, dataset_column_types(warehouse), source)
    with open_lake_copy(warehouse) as con:
        return write_lake(con, spec, Path(out_dir), seed, dataset, source, obscured=False)


def write_lake(
    con: duckdb.DuckDBPyConnection,
    spec: LakeSpec,
    out_dir: Path,
    seed: int,
    dataset: DatasetRecord,
    source: Path | str,
    *,
    obscured: bool,
) -> LakeRecord:
    """The lake of the ``raw`` tables on ``con`` (a working copy), written to ``out_dir``."""
    check_expressions(con, spec, source)
    _check_replaceable(out_dir)
    staging = out_dir / f".{LAKE_DIR}.partial"  # renamed into place once every file is written
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    writer = _LakeWriter(con, spec, staging, seed, source)
    try:
        for i, export in enumerate(spec.exports):
            writer.export(i, export)
        for i, report in enumerate(spec.reports):
            writer.report(i, report)
        for i, workbook in enumerate(spec.workbooks):
            writer.workbook(i, workbook)
        writer.distractors()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    spec_sha = hashlib.sha256(spec.model_dump_json().encode()).hexdigest()
    dataset_sha = hashlib.sha256(
        json.dumps(dataset.table_checksums, sort_keys=True).encode()
    ).hexdigest()
    record = LakeRecord(
        seed=seed,
        spec_sha256=spec_sha,
        dataset_domain=dataset.domain,
        dataset_sha256=dataset_sha,
        obscured=obscured,
        files=sorted(writer.files, key=lambda f: f.path),
    )
    if (out_dir / LAKE_DIR).exists():
        (out_dir / RECORD_FILE).unlink()
        shutil.rmtree(out_dir / LAKE_DIR)
    staging.rename(out_dir / LAKE_DIR)
    (out_dir / RECORD_FILE).write_text(record.json_text(), encoding="utf-8")
    return record


def check_expressions(con: duckdb.DuckDBPyConnection, spec: LakeSpec, source: Path | str) -> None:
    """Raises :class:`LakeSpecError` naming each ``where`` DuckDB refuses and each report
    sentence whose format does not fit its columns' values, before anything is written."""
    problems: list[tuple[str, str]] = []
    items = [("exports", i, e.table, e.where) for i, e in enumerate(spec.exports)]
    items += [("reports", i, r.table, r.where) for i, r in enumerate(spec.reports)]
    items += [("workbooks", i, w.table, w.where) for i, w in enumerate(spec.workbooks)]
    for kind, i, table, where in items:
        if where is None:
            continue
        try:
            con.execute(f"SELECT count(*) FROM raw.{quote(table)} AS t WHERE {where}").fetchall()
        except duckdb.Error as err:
            problems.append((f"{kind}.{i}.where", " ".join(str(err).split())))
    for i, report in enumerate(spec.reports):
        if any(p[0] == f"reports.{i}.where" for p in problems):
            continue
        columns = list(dict.fromkeys(sentence_fields(report.sentence)))
        result = con.execute(_query(report.table, columns, report.where or "TRUE"))
        for row in result.fetchmany(report.max_rows):
            try:
                render_sentence(report.sentence, dict(zip(columns, row, strict=True)))
            except (ValueError, TypeError) as err:
                problems.append((f"reports.{i}.sentence", f"{err} (a value: {row!r})"))
                break
    if problems:
        raise LakeSpecError(source, problems)


def _check_replaceable(out_dir: Path) -> None:
    """A lake folder is replaced only when it is a lake written before (its record is there)."""
    lake = out_dir / LAKE_DIR
    if lake.exists() and not (out_dir / RECORD_FILE).exists():
        raise FileExistsError(f"{lake} exists and is not a lake written before: not replaced")


class _LakeWriter:
    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        spec: LakeSpec,
        lake: Path,
        seed: int,
        source: Path | str,
    ) -> None:
        self.con = con
        self.spec = spec
        self.lake = lake
        self.seed = seed
        self.source = source
        self.types = column_types(con)
        self.files: list[LakeFile] = []

    # -- exports and reports ------------------------------------------------------------

    def export(self, index: int, export: Export) -> None:
        split_index = choose(range(len(export.splits)), self.seed, "split", "export", index)
        split = export.splits[split_index]
        fmt: TableFormat = choose(export.formats, self.seed, "format", "export", index)
        delimiter, encodings = self._csv_choices(export.csv, "export", index)
        note = choose(export.csv.notes or [""], self.seed, "note", "export", index)
        columns = export.columns or list(self.types[export.table])
        at = f"exports.{index}.splits.{split_index}"
        for part in self._split_parts(export.table, split, export.where, at):
            stem = export.name.format(table=export.table, part=part.label or WHOLE)
            path = _join(export.folder, stem + _EXTENSIONS[fmt])
            row_filter = _and(export.where, part.predicate)
            self._write_table(
                path,
                LakeFileBase(
                    role="export",
                    table=export.table,
                    columns=columns,
                    row_filter=row_filter,
                    part=part.label,
                    split=describe_split(split),
                ),
                fmt,
                delimiter,
                encodings,
                note.format(table=export.table, part=part.label or WHOLE, rows="{rows}"),
            )

    def report(self, index: int, report: Report) -> None:
        split_index = choose(range(len(report.splits)), self.seed, "split", "report", index)
        split = report.splits[split_index]
        fmt = choose(report.formats, self.seed, "format", "report", index)
        columns = list(dict.fromkeys(sentence_fields(report.sentence)))
        at = f"reports.{index}.splits.{split_index}"
        for part in self._split_parts(report.table, split, report.where, at):
            stem = report.name.format(table=report.table, part=part.label or WHOLE)
            path = _join(report.folder, stem + _PROSE_EXTENSIONS[fmt])
            row_filter = _and(report.where, part.predicate)
            query = _query(report.table, columns, row_filter, limit=report.max_rows)
            target = self._target(path)
            rows = write_report(
                self.con,
                query,
                target,
                markdown=fmt == "markdown",
                title=report.title if part.label is None else f"{report.title}: {part.label}",
                intro=report.intro,
                sentence=report.sentence,
            )
            self.files.append(
                LakeFile(
                    path=path,
                    role="report",
                    table=report.table,
                    columns=columns,
                    row_filter=row_filter,
                    rows=rows,
                    query=query,
                    part=part.label,
                    split=describe_split(split),
                    format=fmt,
                    encoding="utf-8",
                    sentence=report.sentence,
                    sha256=_sha256(target),
                )
            )

    def workbook(self, index: int, workbook: Workbook) -> None:
        split_index = choose(range(len(workbook.splits)), self.seed, "split", "workbook", index)
        split = workbook.splits[split_index]
        columns = workbook.columns or list(self.types[workbook.table])
        at = f"workbooks.{index}.splits.{split_index}"
        parts = self._split_parts(workbook.table, split, workbook.where, at)
        filters = [_and(workbook.where, part.predicate) for part in parts]
        queries = [_query(workbook.table, columns, f) for f in filters]
        notes = [
            workbook.note.format(table=workbook.table, part=part.label or WHOLE, rows="{rows}")
            for part in parts
        ]
        path = _join(workbook.folder, workbook.name.format(table=workbook.table) + ".xlsx")
        target = self._target(path)
        total = self.con.execute(
            f"SELECT count(*) FROM raw.{quote(workbook.table)} AS t WHERE {_and(workbook.where)}"
        ).fetchone()
        preamble = [
            line.format(table=workbook.table, rows=f"{total[0] if total else 0:,}")
            for line in workbook.preamble
        ]
        written = write_xlsx(
            self.con,
            list(zip(notes, queries, strict=True)),
            target,
            sheet=workbook.sheet,
            preamble=preamble,
        )
        blocks = [
            SheetBlock(
                sheet=workbook.sheet,
                part=part.label,
                row_filter=row_filter,
                note_row=w.note_row,
                header_row=w.header_row,
                rows=w.rows,
                query=query,
            )
            for part, row_filter, query, w in zip(parts, filters, queries, written, strict=True)
        ]
        self.files.append(
            LakeFile(
                path=path,
                role="workbook",
                table=workbook.table,
                columns=columns,
                row_filter=" OR ".join(f"({f})" for f in filters) or "FALSE",
                rows=sum(w.rows for w in written),
                query=" UNION ALL ".join(f"({q})" for q in queries),
                split=describe_split(split),
                format="xlsx",
                blocks=blocks,
                sha256=_sha256(target),
            )
        )

    def _split_parts(self, table: str, split: Split, where: str | None, at: str) -> list[Part]:
        return split_parts(
            self.con,
            table,
            split,
            where,
            max_parts=self.spec.max_files,
            at=at,
            source=self.source,
        )

    # -- distractors ----------------------------------------------------------------------

    def distractors(self) -> None:
        gold = [f for f in self.files if f.role == "export" and f.rows > 0]
        plan = self.spec.distractors
        for k, base in enumerate(_seeded_order(gold, self.seed, "near")[: plan.near_duplicates]):
            self._near_duplicate(k, base)
        for k, base in enumerate(_seeded_order(gold, self.seed, "stale")[: plan.stale_copies]):
            self._stale_copy(k, base)
        pairs = _adjacent_periods(gold)
        for base, following in _seeded_order(pairs, self.seed, "overlap")[
            : plan.overlapping_periods
        ]:
            self._overlapping_period(base, following)
        named = {e.table for e in self.spec.exports} | {r.table for r in self.spec.reports}
        candidates = plan.unrelated_tables or [t for t in self.types if t not in named]
        for k, table in enumerate(_seeded_order(candidates, self.seed, "unrelated")):
            if k == plan.unrelated:
                break
            self._unrelated(k, table)

    def _near_duplicate(self, k: int, base: LakeFile) -> None:
        numeric = [c for c in base.columns if self.types[base.table][c] in _NUMERIC]
        changed: dict[str, str] = {}
        for column in _seeded_order(numeric, self.seed, "near", k, "columns")[:2]:
            draw = _row_uniform(salt(self.seed, "near", k, column))
            scaled = f"t.{quote(column)} * (0.9 + 0.2 * {draw})"
            if self.types[base.table][column] in ("DOUBLE", "FLOAT", "REAL"):
                changed[column] = f"round({scaled}, 2)"
            else:
                kind = self.types[base.table][column]
                changed[column] = f"CAST(round({scaled}) AS {kind})"
        row_filter = base.row_filter
        if not changed:  # nothing numeric to revise: a re-export missing a few rows
            row_filter = _and(base.row_filter, _row_share(salt(self.seed, "near", k), 95))
        folder, stem, ext = _split_path(base.path)
        name = choose(_NEAR_DUPLICATE_NAMES, self.seed, "near", k, "name").format(stem=stem)
        self._write_distractor(
            "near_duplicate", base, _join(folder, name + ext), row_filter, changed
        )

    def _stale_copy(self, k: int, base: LakeFile) -> None:
        keep = choose(range(50, 91), self.seed, "stale", k, "share")
        row_filter = _and(base.row_filter, _row_share(salt(self.seed, "stale", k), keep))
        folder, stem, ext = _split_path(base.path)
        pattern = choose(_STALE_NAMES, self.seed, "stale", k, "name")
        path = pattern.format(folder=f"{folder}/" if folder else "", stem=stem) + ext
        self._write_distractor("stale_copy", base, path, row_filter, {})

    def _overlapping_period(self, base: LakeFile, following: LakeFile) -> None:
        row_filter = f"({base.row_filter}) OR ({following.row_filter})"
        folder, stem, ext = _split_path(base.path)
        path = _join(folder, f"{stem}_to_{following.part}{ext}")
        self._write_distractor("overlapping_period", base, path, row_filter, {})

    def _unrelated(self, k: int, table: str) -> None:
        fmt: TableFormat = choose(list(_EXTENSIONS), self.seed, "unrelated", k, "format")
        folder = choose(_UNRELATED_FOLDERS, self.seed, "unrelated", k, "folder")
        delimiter, encodings = self._csv_choices(CsvOptions(), "unrelated", k)
        path = self._unique(_join(folder, f"{table}{_EXTENSIONS[fmt]}"))
        self._write_table(
            path,
            LakeFileBase(
                role="distractor",
                distractor="unrelated",
                table=table,
                columns=list(self.types[table]),
                row_filter=f"t.rowid < {self.spec.distractors.unrelated_max_rows}",
            ),
            fmt,
            delimiter,
            encodings,
        )

    def _write_distractor(
        self,
        kind: str,
        base: LakeFile,
        path: str,
        row_filter: str,
        changed: dict[str, str],
    ) -> None:
        fmt = next(f for f in _EXTENSIONS if f == base.format)  # a copy of a table file
        self._write_table(
            self._unique(path),
            LakeFileBase(
                role="distractor",
                distractor=kind,
                of_file=base.path,
                table=base.table,
                columns=base.columns,
                row_filter=row_filter,
                changed=changed,
                part=base.part,
                split=base.split,
            ),
            fmt,
            base.delimiter or ",",
            [base.encoding or "utf-8"],
        )

    # -- writing ---------------------------------------------------------------------------

    def _write_table(
        self,
        path: str,
        base: LakeFileBase,
        fmt: TableFormat,
        delimiter: str,
        encodings: Sequence[str],
        note: str = "",
    ) -> None:
        query = _query(base.table, base.columns, base.row_filter, changed=base.changed)
        target = self._target(path)
        encoding: str | None = None
        if fmt == "csv":
            rows, encoding = write_csv(self.con, query, target, delimiter, encodings, note)
        elif fmt == "parquet":
            rows = write_parquet(self.con, query, target)
        else:
            rows = write_json(self.con, query, target, lines=fmt == "jsonl")
            encoding = "utf-8"
        self.files.append(
            LakeFile(
                path=path,
                query=query,
                rows=rows,
                format=fmt,
                encoding=encoding,
                delimiter=delimiter if fmt == "csv" else None,
                skip_rows=len(note.splitlines()) if fmt == "csv" else 0,
                sha256=_sha256(target),
                **base.fields(),
            )
        )

    def _csv_choices(self, options: CsvOptions, *parts: object) -> tuple[str, list[str]]:
        delimiter = choose(options.delimiters, self.seed, "delimiter", *parts)
        encodings = _seeded_order(options.encodings, self.seed, "encoding", *parts)
        return delimiter, list[str](encodings)

    def _target(self, path: str) -> Path:
        if any(f.path == path for f in self.files):
            raise LakeSpecError(self.source, [("(files)", f"two files would be {path!r}")])
        target = self.lake / path
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def _unique(self, path: str) -> str:
        taken = {f.path for f in self.files}
        folder, stem, ext = _split_path(path)
        candidate, n = path, 2
        while candidate in taken:
            candidate = _join(folder, f"{stem}_{n}{ext}")
            n += 1
        return candidate


@dataclass(frozen=True)
class LakeFileBase:
    """A file's provenance before it is written (the writer adds format, rows and digest)."""

    role: str
    table: str
    columns: list[str]
    row_filter: str
    distractor: str | None = None
    of_file: str | None = None
    changed: dict[str, str] | None = None
    part: str | None = None
    split: str = "none"

    def fields(self) -> dict[str, object]:
        return {
            "role": self.role,
            "table": self.table,
            "columns": self.columns,
            "row_filter": self.row_filter,
            "distractor": self.distractor,
            "of_file": self.of_file,
            "changed": self.changed or {},
            "part": self.part,
            "split": self.split,
        }


def _adjacent_periods(files: list[LakeFile]) -> list[tuple[LakeFile, LakeFile]]:
    """(a period's file, the next period's file) of each period-split export, in order."""
    by_export: dict[tuple[str, str, str], list[LakeFile]] = {}
    for lake_file in files:
        if lake_file.split.startswith("period:") and lake_file.part != "undated":
            folder = lake_file.path.rpartition("/")[0]
            by_export.setdefault((folder, lake_file.table, lake_file.split), []).append(lake_file)
    pairs: list[tuple[LakeFile, LakeFile]] = []
    for members in by_export.values():
        ordered = sorted(members, key=lambda f: f.part or "")
        pairs += list(itertools.pairwise(ordered))
    return pairs


def _query(
    table: str,
    columns: Sequence[str],
    row_filter: str,
    *,
    changed: dict[str, str] | None = None,
    limit: int | None = None,
) -> str:
    changed = changed or {}
    select = ", ".join(
        f"{changed[c]} AS {quote(c)}" if c in changed else f"t.{quote(c)}" for c in columns
    )
    text = f"SELECT {select} FROM raw.{quote(table)} AS t WHERE {row_filter} ORDER BY t.rowid"
    return text if limit is None else f"{text} LIMIT {limit}"


def _row_uniform(row_salt: str) -> str:
    return f"((hash({literal(row_salt)} || CAST(t.rowid AS VARCHAR)) % 1000000) / 1000000.0)"


def _row_share(row_salt: str, percent: int) -> str:
    return f"hash({literal(row_salt)} || CAST(t.rowid AS VARCHAR)) % 100 < {percent}"


def _and(*predicates: str | None) -> str:
    given = [p for p in predicates if p and p != "TRUE"]
    if not given:
        return "TRUE"
    if len(given) == 1:
        return given[0]
    return " AND ".join(f"({p})" for p in given)


def _seeded_order(items: Sequence[T], seed: int, *parts: object) -> list[T]:
    keyed = sorted(range(len(items)), key=lambda i: salt(seed, *parts, i))
    return [items[i] for i in keyed]


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _split_path(path: str) -> tuple[str, str, str]:
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.rpartition(".")
    return (folder, stem, dot + ext) if dot else (folder, name, "")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_lake_record(out_dir: Path | str) -> LakeRecord:
    return LakeRecord.model_validate_json((Path(out_dir) / RECORD_FILE).read_text("utf-8"))

"""``build_environment``: a dataset -> an exploration environment (CSV tables in folders and
Markdown documents, no schema documentation) under ``<out>/environment/``, with the record of
every noise decision in ``<out>/noise.json``, beside it, never inside it. The dataset is not
changed: milestone values are computed on it, by code."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import duckdb

from benchforge.core.artifacts import LAYOUT
from benchforge.core.derivations import register_derivation
from benchforge.core.records import DatasetRecord
from benchforge.synthesis.engine.generate import WAREHOUSE
from benchforge.synthesis.explore_env.derived import (
    aggregates,
    distractor,
    documents,
    wide_annual,
    year_over_year,
)
from benchforge.synthesis.explore_env.frame import (
    Frame,
    csv_text,
    dataset_types,
    read_dataset_table,
    slug,
)
from benchforge.synthesis.explore_env.loader import (
    EnvironmentSpecError,
    check_against_dataset,
    load_environment_spec,
)
from benchforge.synthesis.explore_env.noise import NoiseConflict, apply_noise, rendered
from benchforge.synthesis.explore_env.record import (
    ENVIRONMENT_DIR,
    RECORD_FILE,
    DerivedFile,
    EnvironmentRecord,
    WrittenTable,
)
from benchforge.synthesis.explore_env.spec import (
    Aggregates,
    Distractor,
    EnvironmentSpec,
    TableNoise,
    WideAnnual,
    YearOverYear,
)

DATABASE_DIR = "database"
Reader = Callable[[str], Frame]
Writer = Callable[[str, str], None]


def build_environment(
    dataset_dir: Path | str, spec: EnvironmentSpec | Path | str, out_dir: Path | str, seed: int
) -> EnvironmentRecord:
    """Writes the environment of ``dataset_dir`` to ``out_dir/environment`` (replacing one
    there) and its record to ``out_dir/noise.json``. ``spec``: a spec or its YAML file (named
    in errors); it is checked against the dataset before anything is written."""
    dataset_dir, out_dir = Path(dataset_dir), Path(out_dir)
    source: Path | str = spec if not isinstance(spec, EnvironmentSpec) else "<environment spec>"
    if not isinstance(spec, EnvironmentSpec):
        spec = load_environment_spec(spec)
    warehouse = dataset_dir / WAREHOUSE
    dataset = DatasetRecord.model_validate_json(
        LAYOUT.dataset_record_file(dataset_dir).read_text(encoding="utf-8")
    )
    types = dataset_types(warehouse)
    check_against_dataset(spec, types, source)
    files: dict[str, str] = {}
    # built aside and renamed into place: an environment is whole or absent
    staging = out_dir / f".{ENVIRONMENT_DIR}-staging"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)

    def write(relative: str, text: str) -> None:
        if relative in files:
            raise NoiseConflict("(files)", f"{relative} would be written twice: rename one")
        path = staging / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        files[relative] = hashlib.sha256(data).hexdigest()

    try:
        with duckdb.connect(str(warehouse), read_only=True) as con:
            frames: dict[str, Frame] = {}

            def clean(table: str) -> Frame:
                if table not in frames:
                    frames[table] = read_dataset_table(con, table)
                return frames[table]

            tables = _write_tables(spec, types, seed, clean, write)
            derived = _write_derived(spec, seed, clean, write)
    except NoiseConflict as err:
        shutil.rmtree(staging)
        raise EnvironmentSpecError(source, [(err.field, str(err))]) from None
    except BaseException:
        shutil.rmtree(staging)
        raise
    environment = out_dir / ENVIRONMENT_DIR
    if environment.exists():
        shutil.rmtree(environment)
    staging.rename(environment)
    record = EnvironmentRecord(
        seed=seed,
        spec_sha256=hashlib.sha256(spec.model_dump_json().encode()).hexdigest(),
        dataset_domain=dataset.domain,
        dataset_origin=str(dataset.origin),
        dataset_sha256=hashlib.sha256(
            json.dumps(dataset.table_checksums, sort_keys=True).encode()
        ).hexdigest(),
        tables=tables,
        derived=derived,
        files=dict(sorted(files.items())),
    )
    (out_dir / RECORD_FILE).write_text(record.json_text(), encoding="utf-8")
    return record


def read_environment_record(out_dir: Path | str) -> EnvironmentRecord:
    return EnvironmentRecord.model_validate_json(
        (Path(out_dir) / RECORD_FILE).read_text(encoding="utf-8")
    )


def table_path(folder: str, name: str) -> str:
    return f"{DATABASE_DIR}/{folder}/{name}.csv"


def _write_tables(
    spec: EnvironmentSpec,
    types: dict[str, dict[str, str]],
    seed: int,
    clean: Reader,
    write: Writer,
) -> list[WrittenTable]:
    written: list[WrittenTable] = []
    subsets = {s.table: s for s in spec.subsets}
    for table, folder in spec.folder_of().items():
        frame = clean(table)
        noisy, applied = apply_noise(table, frame, spec.noise.get(table, TableNoise()), seed, clean)
        texts = rendered(noisy)
        keep = [j for j, c in enumerate(noisy.columns) if c not in spec.drop_columns.get(table, [])]
        header = [noisy.columns[j] for j in keep]
        texts = [[row[j] for j in keep] for row in texts]
        path = table_path(folder, table)
        write(path, csv_text(header, texts))
        entry = WrittenTable(
            table=table,
            path=path,
            rows=len(texts),
            source_types={c: types[table][c] for c in frame.columns},
            written_columns=header,
            totals=applied["totals"],
            variants=applied["variants"],
            rounding=applied["rounding"],
            units=applied["units"],
            missing=applied["missing"],
        )
        if table in subsets:
            split = subsets[table]
            by = frame.index(split.by)
            values = split.values or sorted({str(r[by]) for r in frame.rows if r[by] is not None})
            entry.subset_column = split.by
            for value in values:
                rows = [
                    texts[i]
                    for i, src in enumerate(noisy.source)
                    if src is not None and str(frame.rows[src][by]) == value
                ]
                subset_path = table_path(folder, f"{table}_{slug(value)}")
                write(subset_path, csv_text(header, rows))
                entry.subsets[subset_path] = value
        written.append(entry)
    return written


def _write_derived(
    spec: EnvironmentSpec, seed: int, clean: Reader, write: Writer
) -> list[DerivedFile]:
    folders = spec.folder_of()
    derived: list[DerivedFile] = []

    Item = WideAnnual | YearOverYear | Aggregates | Distractor

    def folder(item: Item) -> str:
        return item.folder or folders.get(item.table, "other")

    def table(
        kind: Literal["wide_annual", "year_over_year", "aggregates", "distractor"],
        item: Item,
        header: list[str],
        rows: list[list[str]],
    ) -> None:
        path = table_path(folder(item), item.name)
        write(path, csv_text(header, rows))
        parameters = item.model_dump(exclude={"table", "name", "folder"}, mode="json")
        derived.append(
            DerivedFile(
                kind=kind,
                name=item.name,
                path=path,
                source_table=item.table,
                rows=len(rows),
                parameters=parameters,
            )
        )

    for wide in spec.wide_annual:
        table("wide_annual", wide, *wide_annual(clean(wide.table), wide))
    for yoy in spec.year_over_year:
        table("year_over_year", yoy, *year_over_year(clean(yoy.table), yoy))
    for agg in spec.aggregates:
        table("aggregates", agg, *aggregates(clean(agg.table), agg))
    for fake in spec.distractors:
        table("distractor", fake, *distractor(clean(fake.table), fake, seed))
    for docs in spec.documents:
        texts = documents(clean(docs.table), docs)
        for name, text in sorted(texts.items()):
            write(f"{docs.folder}/{name}", text)
        derived.append(
            DerivedFile(
                kind="documents",
                name=docs.folder,
                path=docs.folder,
                source_table=docs.table,
                rows=len(texts),
                parameters=docs.model_dump(exclude={"table", "folder"}, mode="json"),
            )
        )
    return derived


def _derive(dataset_dir: Path, spec_file: Path, out_dir: Path, seed: int) -> None:
    build_environment(dataset_dir, spec_file, out_dir, seed)


register_derivation("exploration_environment", _derive)  # for the families of exploration tasks

"""A published dataset made by hand for tests: a DuckDB warehouse whose ``raw`` tables come from
SQL, and the completion record every dataset has (``dataset.json``, written last); and the files
of a project to build on it.

Quicker than an import (no Parquet export, no profile, no Great Expectations), and all that the
consumers of a dataset read: gold builds and scaffolded tasks take its warehouse, and its version
(:func:`benchforge.harness.identity.dataset_version`) comes from the record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from benchforge.core.artifacts import LAYOUT
from benchforge.core.records import DatasetRecord
from benchforge.core.sql import quote


def write_files(root: Path, files: Mapping[str, str | None]) -> Path:
    """Writes ``files`` (a path relative to ``root`` -> its text; None: not written) under
    ``root``, e.g. a dbt project for the dataset; returns ``root``."""
    for rel, text in files.items():
        if text is None:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def write_dataset(folder: Path, tables: Mapping[str, str], *, domain: str = "shop") -> Path:
    """A dataset of ``domain`` in ``folder``: each of ``tables`` (name -> its SELECT) as a table
    of schema ``raw``. The record is a synthesized one (seed 1, scale 1); with no Parquet files
    to checksum, a table's checksum is that of its SELECT, so defining a table otherwise gives
    another dataset version."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = 0
    with duckdb.connect(str(folder / "warehouse.duckdb")) as con:
        con.execute("CREATE SCHEMA raw")
        for name, select in tables.items():
            con.execute(f"CREATE TABLE raw.{quote(name)} AS {select}")
            counted = con.execute(f"SELECT count(*) FROM raw.{quote(name)}").fetchone()
            rows += int(counted[0]) if counted else 0
    record = DatasetRecord(
        domain=domain,
        seed=1,
        scale=1.0,
        created_at=datetime.now(UTC),
        location=str(folder),
        total_rows=rows,
        anomaly_total=0,
        table_checksums={
            name: hashlib.sha256(select.encode()).hexdigest() for name, select in tables.items()
        },
        validation_success=None,
        validation_expectations=0,
    )
    LAYOUT.dataset_record_file(folder).write_text(record.model_dump_json(indent=2) + "\n")
    return folder


def mini_dataset(out: Path) -> Path:
    """The mini domain (tests/fixtures/mini_domain.yaml) synthesized at scale 1, seed 7, into
    ``out``: what the mini gold repository builds on."""
    from benchforge.synthesis.dataset import build_dataset
    from benchforge.synthesis.spec import load_spec
    from tests.paths import FIXTURES

    build_dataset(
        load_spec(FIXTURES / "mini_domain.yaml"), scale=1, seed=7, out=str(out), validate=False
    )
    return out

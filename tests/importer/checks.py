"""What every imported dataset must be, checked independently of the importer's own code:
the files are hashed here, the Parquet read back here, the record read by its consumers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import duckdb

from benchforge.core.records import DatasetRecord
from benchforge.evaluation.gold import dataset_version
from benchforge.harness.identity import dataset_version as run_dataset_version
from benchforge.harness.identity import record_version


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_dataset(
    folder: Path, name: str, rows: dict[str, int], source_schemas: Sequence[str] = ()
) -> DatasetRecord:
    """``folder`` is a complete imported dataset of ``rows`` (table -> row count): warehouse
    tables in schema raw (and a view per table in each of ``source_schemas``, listed in the
    manifest; no Parquet or checksum of their own), Parquet holding the same rows, manifest
    and record checksums that match the files, ``dataset.json`` written last and read by
    every consumer."""
    record = DatasetRecord.model_validate_json((folder / "dataset.json").read_text())
    assert record.origin == "imported" and record.domain == name
    assert record.seed is None and record.scale is None and record.imported is not None
    assert record.location == str(folder) and record.total_rows == sum(rows.values())
    hashes = {t: sha256(folder / "parquet" / f"{t}.parquet") for t in rows}
    assert record.table_checksums == hashes
    assert sorted(p.stem for p in (folder / "parquet").iterdir()) == sorted(rows)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["kind"] == "imported" and manifest["domain"] == name
    assert manifest["source_schemas"] == list(source_schemas)
    assert {t: (v["rows"], v["parquet_sha256"]) for t, v in manifest["tables"].items()} == {
        t: (n, hashes[t]) for t, n in rows.items()
    }
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as con:
        found = con.execute(
            "SELECT table_type, table_schema, table_name FROM information_schema.tables "
            "ORDER BY 1, 2, 3"
        ).fetchall()
        assert found == [("BASE TABLE", "raw", t) for t in sorted(rows)] + [
            ("VIEW", s, t) for s in sorted(source_schemas) for t in sorted(rows)
        ]
        for table, n in rows.items():
            parquet = str(folder / "parquet" / f"{table}.parquet")
            differ = con.execute(
                f'SELECT count(*) FROM ((SELECT * FROM raw."{table}" EXCEPT ALL '
                f"SELECT * FROM read_parquet('{parquet}')) UNION ALL "
                f"(SELECT * FROM read_parquet('{parquet}') EXCEPT ALL "
                f'SELECT * FROM raw."{table}"))'
            ).fetchone()
            count = con.execute(f'SELECT count(*) FROM raw."{table}"').fetchone()
            assert differ == (0,) and count == (n,), table
    files = [p for p in folder.rglob("*") if p.is_file()]
    newest = max(p.stat().st_mtime_ns for p in files)
    assert (folder / "dataset.json").stat().st_mtime_ns == newest, "dataset.json is not last"
    assert not list(folder.parent.glob(f".{folder.name}.*")), "staging left behind"
    # the consumers: gold builds key on it, runs version it, both from the record
    checksums = json.dumps(hashes, sort_keys=True).encode()
    assert dataset_version(folder) == hashlib.sha256(checksums).hexdigest()[:16]
    assert run_dataset_version(folder) == record_version(record)
    return record

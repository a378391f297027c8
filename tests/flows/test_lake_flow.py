"""The ``build-lake`` flow composes the library's steps (the same record and bytes as
``build_lake`` for the same seed, the obscured lake beside it), and the shipped crm spec
builds on a small crm dataset: every export, report and distractor kind present, the lake
small, the obscured one holding no original account id."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import yaml

from benchforge.synthesis.lake import (
    LAKE_DIR,
    MAPPING_FILE,
    RECORD_FILE,
    build_lake,
    obscure,
    read_lake_record,
)
from tests.paths import REPO_ROOT
from tests.support.lake import spec_data, tiny_dataset

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


def test_flow_builds_the_library_lake_and_the_obscured_one(tmp_path: Path) -> None:
    from benchforge.flows.lake import OBSCURED_DIR
    from benchforge.flows.lake import build_lake as build_lake_flow

    dataset = tiny_dataset(tmp_path / "shop")
    spec = tmp_path / "lake.yaml"
    spec.write_text(yaml.safe_dump(spec_data()), encoding="utf-8")
    library = build_lake(dataset, spec, tmp_path / "library", seed=3)
    record = build_lake_flow(str(dataset), str(spec), str(tmp_path / "flow"), 3, True)
    assert record == library
    assert (tmp_path / "flow" / RECORD_FILE).read_bytes() == (
        tmp_path / "library" / RECORD_FILE
    ).read_bytes()
    obscured = tmp_path / "flow" / OBSCURED_DIR
    assert read_lake_record(obscured).obscured
    assert (obscured / MAPPING_FILE).exists()


def test_shipped_crm_spec_builds_a_small_lake(tmp_path: Path) -> None:
    from benchforge.synthesis.dataset import build_dataset

    dataset = tmp_path / "crm"
    build_dataset("crm", scale=0.01, seed=7, out=str(dataset), validate=False)
    spec = REPO_ROOT / "task_specs" / "lake-crm" / "lake.yaml"
    record = build_lake(dataset, spec, tmp_path / "lake", seed=1)
    assert {f.role for f in record.files} == {"export", "report", "workbook", "distractor"}
    assert {f.distractor for f in record.files} >= {"near_duplicate", "stale_copy", "unrelated"}
    with duckdb.connect(str(dataset / "warehouse.duckdb"), read_only=True) as con:
        for lake_file in record.files:  # each query, run on the dataset, gives the file's rows
            counted = con.execute(f"SELECT count(*) FROM ({lake_file.query})").fetchone()
            assert counted == (lake_file.rows,), lake_file.path
    size = sum(p.stat().st_size for p in (tmp_path / "lake" / LAKE_DIR).rglob("*") if p.is_file())
    assert size < 2_000_000
    obscured = obscure(dataset, spec, tmp_path / "obscured", seed=1)
    accounts = [v for v in obscured.mapping.identifiers if v.startswith("ACC-")]
    assert accounts
    lake = tmp_path / "obscured" / LAKE_DIR
    texts = [
        p.read_bytes().decode("utf-8", errors="ignore")
        for p in lake.rglob("*")
        if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".txt")
    ]
    assert texts
    assert not any(account in text for text in texts for account in accounts[:200])

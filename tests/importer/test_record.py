"""The dataset record says how a dataset came to be: synthesized (seed and scale), imported
(where from, no seed or scale) or released; records stored before ``origin`` still read."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from benchforge.core.records import DatasetRecord, ImportStamp

BASE: dict[str, Any] = {
    "domain": "crm",
    "created_at": "2025-01-01T00:00:00Z",
    "location": "/data/crm",
    "total_rows": 10,
    "anomaly_total": 0,
    "table_checksums": {"accounts": "ab"},
    "validation_success": True,
    "validation_expectations": 3,
}
STAMP = ImportStamp(kind="files", location="/exports", tables={"accounts": "accounts.csv"})
RELEASE = {"source_version": "v", "policy": "p", "policy_sha256": "s", "report_passed": True}


def test_records_stored_before_origin_read_as_synthesized_or_released() -> None:
    old = DatasetRecord.model_validate({**BASE, "seed": 7, "scale": 1.0})
    assert old.origin == "synthesized"
    release = DatasetRecord.model_validate({**BASE, "seed": 7, "scale": 1.0, "release": RELEASE})
    assert release.origin == "released"
    # a release of an imported dataset keeps its source's (absent) seed and scale
    assert DatasetRecord(**BASE, seed=None, scale=None, release=RELEASE).origin == "released"


def test_an_imported_record_has_its_source_and_no_seed_or_scale() -> None:
    record = DatasetRecord(**BASE, origin="imported", seed=None, scale=None, imported=STAMP)
    assert DatasetRecord.model_validate_json(record.model_dump_json()) == record
    for bad, words in [
        ({"origin": "imported", "seed": None, "scale": None}, "needs `imported`"),
        ({"origin": "imported", "seed": 7, "scale": None, "imported": STAMP}, "no seed or scale"),
        ({"seed": None, "scale": 1.0}, "needs its seed and scale"),
        ({"origin": "released", "seed": None, "scale": None}, "needs its release stamp"),
    ]:
        with pytest.raises(ValidationError, match=words):
            DatasetRecord(**BASE, **bad)

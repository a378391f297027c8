"""The lakes of a lake task: built once per (dataset version, lake spec digest, seed, obscured)
under ``work/lake-data``, and the files of each setting copied out of them.

    lake-data/<key>/lake/               the lake (every file)
    lake-data/<key>/lake_record.json    provenance: never given to agents
    lake-data/<key>/settings/<name>/    the files an agent gets in one setting

The lake itself is the synthesis library's (``lake``, ``lake_obscured``), called by name through
:mod:`benchforge.core.derivations` (evaluation does not import synthesis). The seed is the
dataset's own, so a held-out or another dataset gives other splits, names and distractors, and
the gold files are derived from the record (``gold_files``), never listed by path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from benchforge.core.artifacts import LAYOUT
from benchforge.core.derivations import derivation
from benchforge.core.records import DatasetRecord
from benchforge.core.scratch import folder_lock, publish_once
from benchforge.evaluation.gold import dataset_version
from benchforge.evaluation.lake.spec import DataSource, LakeSetting

LAKE_DATA = "lake-data"
LAKE_DIR = "lake"  # synthesis.lake.LAKE_DIR: the files
RECORD_FILE = "lake_record.json"  # synthesis.lake.RECORD_FILE: their provenance
SETTINGS_DIR = "settings"


class LakeFileInfo(BaseModel):
    """What the evaluation side reads of a lake record's file (``synthesis.lake.LakeFile``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    path: str
    role: Literal["export", "report", "workbook", "distractor"]
    table: str
    columns: list[str]
    part: str | None = None
    format: str
    encoding: str | None = None
    delimiter: str | None = None
    skip_rows: int = 0


class LakeRecordInfo(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    seed: int
    obscured: bool = False
    files: list[LakeFileInfo]


class BuiltLake(BaseModel):
    """One built lake: its folder (``lake/`` and the record beside it) and its record."""

    model_config = ConfigDict(frozen=True)

    root: Path
    record: LakeRecordInfo

    @property
    def files_dir(self) -> Path:
        return self.root / LAKE_DIR


def dataset_seed(dataset_dir: Path) -> int:
    record = DatasetRecord.model_validate_json(
        LAYOUT.dataset_record_file(dataset_dir).read_text(encoding="utf-8")
    )
    return record.seed if record.seed is not None else 0


def built_lake(dataset_dir: Path, lake_spec: Path, work: Path, *, obscured: bool) -> BuiltLake:
    """The lake of ``dataset_dir`` by ``lake_spec`` (obscured or not), built once."""
    seed = dataset_seed(dataset_dir)
    spec_digest = hashlib.sha256(lake_spec.read_bytes()).hexdigest()
    kind = "obscured" if obscured else "plain"
    key = hashlib.sha256(
        f"{dataset_version(dataset_dir)}\0{seed}\0{spec_digest}\0{kind}".encode()
    ).hexdigest()[:20]
    make = derivation("lake_obscured" if obscured else "lake")
    root = publish_once(work / LAKE_DATA / key, lambda out: make(dataset_dir, lake_spec, out, seed))
    record = LakeRecordInfo.model_validate_json((root / RECORD_FILE).read_text(encoding="utf-8"))
    return BuiltLake(root=root, record=record)


def gold_files(record: LakeRecordInfo, sources: Iterable[DataSource]) -> list[str]:
    """The lake paths (sorted) that hold ``sources``: every file of each source's table and
    role. A source with no file in the lake is an error, not an empty gold."""
    found: set[str] = set()
    for source in sources:
        paths = [
            f.path
            for f in record.files
            if f.role == source.role
            and f.table == source.table
            and (not source.parts or f.part in source.parts)
        ]
        if not paths:
            parts = f" (parts {', '.join(source.parts)})" if source.parts else ""
            raise ValueError(f"no {source.role} file of table {source.table!r}{parts} in the lake")
        found.update(paths)
    return sorted(found)


def setting_files(
    record: LakeRecordInfo, gold: Sequence[str], setting: LakeSetting, distractors: int
) -> list[str]:
    """The lake paths an agent sees in ``setting`` (``synthesis.lake.select_files``'s rules:
    every file, the gold ones, or the gold ones and ``distractors`` others, a choice seeded by
    the lake's seed)."""
    paths = sorted(f.path for f in record.files)
    if setting in ("full", "obscured"):
        return paths
    if setting == "oracle":
        return sorted(gold)
    others = sorted(
        (p for p in paths if p not in set(gold)),
        key=lambda p: hashlib.sha256(f"{record.seed}\0trim\0{p}".encode()).hexdigest(),
    )
    return sorted([*gold, *others[:distractors]])


def setting_folder(lake: BuiltLake, name: str, paths: Sequence[str]) -> Path:
    """``paths`` of the lake copied into ``settings/<name>-<digest of paths>`` (once)."""
    digest = hashlib.sha256(json.dumps(list(paths)).encode()).hexdigest()[:12]
    dest = lake.root / SETTINGS_DIR / f"{name}-{digest}"
    with folder_lock(dest):
        return publish_once(dest, lambda out: _copy(lake.files_dir, paths, out))


def _copy(source: Path, paths: Sequence[str], out: Path) -> None:
    out.mkdir(parents=True)
    for path in paths:
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((source / path).read_bytes())

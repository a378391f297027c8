"""The ``lake`` step for data-lake pipeline tasks (KramaBench style): a dataset (a shipped
domain, an imported one or an anonymized release) written as many files of mixed formats
(CSV with varied delimiters and encodings, JSON, JSON Lines, Parquet, Markdown and text
reports stating facts in prose), split by period, region or entity, with seeded distractors;
every file's provenance recorded. Settings: full, oracle, trimmed, obscured. Plain Python: no
Prefect. Details: ``docs/lakes.md``.

Usage: ``build_lake(dataset_dir, load_lake_spec("lake.yaml"), out_dir, seed=1)``;
``select_files(record, gold, "trimmed", distractors=5)``; ``obscure(dataset_dir, spec, out,
seed=1)`` for the obscured lake and its mapping."""

from benchforge.synthesis.lake import derive  # noqa: F401  (registers lake, lake_obscured)
from benchforge.synthesis.lake.build import (
    LAKE_DIR,
    RECORD_FILE,
    build_lake,
    read_lake_record,
)
from benchforge.synthesis.lake.loader import (
    LakeSpecError,
    check_against_dataset,
    load_lake_spec,
    parse_lake_spec,
)
from benchforge.synthesis.lake.obscure import (
    MAPPING_FILE,
    NumberChange,
    ObscuredLake,
    ObscureMapping,
    obscure,
    read_obscure_mapping,
)
from benchforge.synthesis.lake.record import LakeFile, LakeRecord
from benchforge.synthesis.lake.settings import (
    LakeSetting,
    UnknownLakeFileError,
    copy_files,
    select_files,
)
from benchforge.synthesis.lake.spec import (
    CsvOptions,
    Distractors,
    Export,
    LakeSpec,
    Lookup,
    NoSplit,
    NumberRule,
    ObscureSpec,
    PeriodSplit,
    Report,
    ValueSplit,
)

__all__ = [
    "LAKE_DIR",
    "MAPPING_FILE",
    "RECORD_FILE",
    "CsvOptions",
    "Distractors",
    "Export",
    "LakeFile",
    "LakeRecord",
    "LakeSetting",
    "LakeSpec",
    "LakeSpecError",
    "Lookup",
    "NoSplit",
    "NumberChange",
    "NumberRule",
    "ObscureMapping",
    "ObscureSpec",
    "ObscuredLake",
    "PeriodSplit",
    "Report",
    "UnknownLakeFileError",
    "ValueSplit",
    "build_lake",
    "check_against_dataset",
    "copy_files",
    "load_lake_spec",
    "obscure",
    "parse_lake_spec",
    "read_lake_record",
    "read_obscure_mapping",
    "select_files",
]

"""Exploration environments (DataClawBench style): a dataset turned into folders of CSV tables
and Markdown documents with no schema documentation and DataClawBench's noise kinds (mixed
units, grand-total rows, name variants and mixed languages, regional subsets, wide annual and
year-over-year tables, national and regional aggregates, policy texts, distractor tables,
missing values, rounding differences), each seeded and recorded in ``noise.json`` beside the
environment. Plain Python: no Prefect. Details: ``docs/exploration-environments.md``.

Usage: ``build_environment(dataset_dir, "environment.yaml", out_dir, seed=1)``, then
:func:`read_clean_table` / :func:`clean_reading` with :func:`read_environment_record`."""

from benchforge.synthesis.explore_env.build import (
    DATABASE_DIR,
    build_environment,
    read_environment_record,
)
from benchforge.synthesis.explore_env.clean import (
    CleanReading,
    clean_reading,
    read_clean_derived,
    read_clean_table,
)
from benchforge.synthesis.explore_env.frame import Frame, read_dataset_table
from benchforge.synthesis.explore_env.loader import (
    EnvironmentSpecError,
    check_against_dataset,
    load_environment_spec,
    parse_environment_spec,
)
from benchforge.synthesis.explore_env.record import (
    ENVIRONMENT_DIR,
    RECORD_FILE,
    DerivedFile,
    EnvironmentRecord,
    WrittenTable,
)
from benchforge.synthesis.explore_env.spec import EnvironmentSpec, TableNoise

__all__ = [
    "DATABASE_DIR",
    "ENVIRONMENT_DIR",
    "RECORD_FILE",
    "CleanReading",
    "DerivedFile",
    "EnvironmentRecord",
    "EnvironmentSpec",
    "EnvironmentSpecError",
    "Frame",
    "TableNoise",
    "WrittenTable",
    "build_environment",
    "check_against_dataset",
    "clean_reading",
    "load_environment_spec",
    "parse_environment_spec",
    "read_clean_derived",
    "read_clean_table",
    "read_dataset_table",
    "read_environment_record",
]

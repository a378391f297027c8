"""The lake as a dataset derivation, for the lake task family (evaluation never imports
synthesis; it asks for these by name through :mod:`benchforge.core.derivations`):

- ``lake``: :func:`build_lake` of the dataset by the spec, seeded: ``<out>/lake/`` and
  ``<out>/lake_record.json``;
- ``lake_obscured``: :func:`obscure`: the same files with identifiers, names and numbers
  replaced, the record and the mapping beside them.
"""

from __future__ import annotations

from pathlib import Path

from benchforge.core.derivations import register_derivation
from benchforge.synthesis.lake.build import build_lake
from benchforge.synthesis.lake.obscure import obscure

LAKE = "lake"
LAKE_OBSCURED = "lake_obscured"


def _lake(dataset_dir: Path, spec_file: Path, out_dir: Path, seed: int) -> None:
    build_lake(dataset_dir, spec_file, out_dir, seed)


def _obscured(dataset_dir: Path, spec_file: Path, out_dir: Path, seed: int) -> None:
    obscure(dataset_dir, spec_file, out_dir, seed)


register_derivation(LAKE, _lake)
register_derivation(LAKE_OBSCURED, _obscured)

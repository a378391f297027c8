"""The files of a lake an agent is given, per setting (KramaBench's):

- ``full``: every file;
- ``oracle``: the gold files only (those a task's reference pipeline reads);
- ``trimmed``: the gold files and ``distractors`` other files of the lake, a seeded choice;
- ``obscured``: every file of the obscured lake (:func:`obscure`), whose gold is recomputed
  through its mapping.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from benchforge.core.errors import ConfigError
from benchforge.synthesis.lake.record import LakeRecord
from benchforge.synthesis.perturb.seeding import salt

LakeSetting = Literal["full", "oracle", "trimmed", "obscured"]


class UnknownLakeFileError(ConfigError):
    """A gold file that is not in the lake."""


def select_files(
    record: LakeRecord,
    gold: Iterable[str],
    setting: LakeSetting,
    *,
    distractors: int = 10,
    seed: int = 0,
) -> list[str]:
    """The lake paths (sorted) an agent sees in ``setting``; ``gold``: lake paths."""
    paths = [f.path for f in record.files]
    gold_files = sorted(set(gold))
    unknown = [g for g in gold_files if g not in set(paths)]
    if unknown:
        raise UnknownLakeFileError(f"gold files not in the lake: {', '.join(unknown)}")
    if setting in ("full", "obscured"):
        return sorted(paths)
    if setting == "oracle":
        return gold_files
    others = sorted(
        (p for p in paths if p not in set(gold_files)), key=lambda p: (salt(seed, "trim", p), p)
    )
    return sorted([*gold_files, *others[:distractors]])


def copy_files(lake_dir: Path | str, paths: Iterable[str], out_dir: Path | str) -> Path:
    """The chosen files copied, at the same relative paths, into ``out_dir`` (a setting's
    lake folder); returns it."""
    lake_dir, out_dir = Path(lake_dir), Path(out_dir)
    for path in paths:
        target = out_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lake_dir / path, target)
    return out_dir

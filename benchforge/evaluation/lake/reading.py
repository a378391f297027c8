"""What a reference pipeline reads: the gold files of one lake, through :class:`LakeInput`.

A reference pipeline is a Python module with ``answer(lake)`` and one function per sub-task,
each taking a ``LakeInput``. It reads files by what they hold (``lake.table("opportunities")``:
every gold export of that table, concatenated; ``lake.report_text("campaigns")``: the gold
reports of that table as one text), so the same code computes the gold on every seed, whose
splits, names, formats, delimiters and encodings differ, and on the obscured lake. It runs on
the scorer's side only: agents never see it.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd

from benchforge.evaluation.lake.data import LakeFileInfo


class LakeInput:
    """The gold files of a lake (``folder``: the lake's files; ``files``: their records)."""

    def __init__(self, folder: Path, files: list[LakeFileInfo]) -> None:
        self.folder = folder
        self.files = files

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    def table(self, name: str) -> pd.DataFrame:
        """Every gold export file of table ``name``, read and concatenated (typed: numbers as
        numbers, missing values as NA)."""
        frames = [
            read_file(self.folder / f.path, f)
            for f in self.files
            if f.table == name and f.role == "export"
        ]
        if not frames:
            raise KeyError(f"no gold export of table {name!r}")
        return pd.concat(frames, ignore_index=True)

    def report_text(self, name: str) -> str:
        """The gold reports of table ``name``, one text, whitespace collapsed (a text report
        wraps its sentences)."""
        texts = [
            (self.folder / f.path).read_text(encoding=f.encoding or "utf-8")
            for f in self.files
            if f.table == name and f.role == "report"
        ]
        if not texts:
            raise KeyError(f"no gold report of table {name!r}")
        return " ".join(" ".join(text.split()) for text in texts)


def read_file(path: Path, lake_file: LakeFileInfo) -> pd.DataFrame:
    if lake_file.format == "csv":
        return pd.read_csv(
            path,
            sep=lake_file.delimiter or ",",
            encoding=lake_file.encoding or "utf-8",
            skiprows=lake_file.skip_rows,
        )
    if lake_file.format in ("json", "jsonl"):
        text = path.read_text(encoding="utf-8")
        rows = (
            [json.loads(line) for line in text.splitlines() if line.strip()]
            if lake_file.format == "jsonl"
            else json.loads(text)
        )
        return pd.DataFrame(rows, columns=lake_file.columns)
    if lake_file.format == "parquet":
        with duckdb.connect() as con:
            return con.execute("SELECT * FROM read_parquet(?)", [str(path)]).df()
    raise ValueError(f"{lake_file.path}: a {lake_file.format} file is not a table")

"""Reading a ``lake.yaml`` and checking it against a dataset: every problem names the file and
the field (``lake.yaml: exports.0.splits.1.every: ...``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml
from benchforge.synthesis.lake.spec import LakeSpec, Split, sentence_fields

_SPLIT_TAGS = ("period", "value", "none")
_DATE_TYPES = ("DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE")


class LakeSpecError(ConfigError):
    """A lake spec is missing, not YAML, not a valid spec, or does not fit its dataset."""

    def __init__(self, path: Path | str, problems: Sequence[tuple[str, str]]) -> None:
        self.path = path
        self.problems = list(problems)
        super().__init__("\n".join(f"{path}: {field}: {message}" for field, message in problems))


def load_lake_spec(path: Path | str) -> LakeSpec:
    path = Path(path)
    try:
        data: Any = read_yaml(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise LakeSpecError(path, [("(file)", err.strerror or str(err))]) from None
    except yaml.YAMLError as err:
        raise LakeSpecError(path, [("(yaml)", " ".join(str(err).split()))]) from None
    return parse_lake_spec(data, path)


def parse_lake_spec(data: Any, source: Path | str = "<lake spec>") -> LakeSpec:
    try:
        return LakeSpec.model_validate(data)
    except ValidationError as err:
        raise LakeSpecError(source, [(_field(e), _message(e)) for e in err.errors()]) from None


def check_against_dataset(
    spec: LakeSpec, columns: Mapping[str, Mapping[str, str]], source: Path | str
) -> None:
    """Raises :class:`LakeSpecError` unless every table and column the spec names is in the
    dataset (``columns``: table -> column -> DuckDB type) and period splits are over dates."""
    problems: list[tuple[str, str]] = []

    def has_table(field: str, table: str) -> bool:
        if table not in columns:
            problems.append((field, f"no table {table!r} in the dataset"))
            return False
        return True

    def has_column(field: str, table: str, column: str) -> None:
        if column not in columns[table]:
            problems.append((field, f"no column {column!r} in table {table!r}"))

    def check_splits(field: str, table: str, splits: Sequence[Split]) -> None:
        for j, split in enumerate(splits):
            if split.by == "none":
                continue
            at = f"{field}.splits.{j}"
            has_column(f"{at}.column", table, split.column)
            if split.by == "period" and split.column in columns[table]:
                kind = columns[table][split.column]
                if kind not in _DATE_TYPES:
                    problems.append((f"{at}.column", f"{split.column!r} is {kind}, not a date"))
            if split.by == "value" and split.lookup is not None:
                lookup = split.lookup
                if has_table(f"{at}.lookup.table", lookup.table):
                    has_column(f"{at}.lookup.key", lookup.table, lookup.key)
                    has_column(f"{at}.lookup.value", lookup.table, lookup.value)

    for i, export in enumerate(spec.exports):
        if not has_table(f"exports.{i}.table", export.table):
            continue
        for j, column in enumerate(export.columns or []):
            has_column(f"exports.{i}.columns.{j}", export.table, column)
        check_splits(f"exports.{i}", export.table, export.splits)
    for i, report in enumerate(spec.reports):
        if not has_table(f"reports.{i}.table", report.table):
            continue
        for column in sentence_fields(report.sentence):
            has_column(f"reports.{i}.sentence", report.table, column)
        check_splits(f"reports.{i}", report.table, report.splits)
    for i, workbook in enumerate(spec.workbooks):
        if not has_table(f"workbooks.{i}.table", workbook.table):
            continue
        for j, column in enumerate(workbook.columns or []):
            has_column(f"workbooks.{i}.columns.{j}", workbook.table, column)
        check_splits(f"workbooks.{i}", workbook.table, workbook.splits)
    for i, table in enumerate(spec.distractors.unrelated_tables or []):
        if has_table(f"distractors.unrelated_tables.{i}", table) and table in {
            e.table for e in spec.exports
        }:
            problems.append((f"distractors.unrelated_tables.{i}", f"{table!r} is exported"))
    if problems:
        raise LakeSpecError(source, problems)


def _field(error: Any) -> str:
    # A discriminated union puts the split's tag in the location (splits.0.period.every):
    # not a field.
    loc = list(error["loc"])
    for i in range(len(loc) - 1, 1, -1):
        if loc[i] in _SPLIT_TAGS and loc[i - 2] == "splits" and isinstance(loc[i - 1], int):
            del loc[i]
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc.append("by")
    return ".".join(str(p) for p in loc) or "(top)"


def _message(error: Any) -> str:
    return str(error["msg"]).removeprefix("Value error, ")

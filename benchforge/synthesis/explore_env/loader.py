"""Reading an ``environment.yaml`` and checking it against a dataset: every problem names the
file and the field (``environment.yaml: noise.company_kpis.mixed_units.0.column: ...``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml
from benchforge.synthesis.explore_env.spec import EnvironmentSpec

NUMERIC_TYPES = ("DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT")
TEXT_TYPES = ("VARCHAR",)


class EnvironmentSpecError(ConfigError):
    """An environment spec is missing, not YAML, not a valid spec, or does not fit its dataset."""

    def __init__(self, path: Path | str, problems: Sequence[tuple[str, str]]) -> None:
        self.path = path
        self.problems = list(problems)
        super().__init__("\n".join(f"{path}: {field}: {message}" for field, message in problems))


def load_environment_spec(path: Path | str) -> EnvironmentSpec:
    path = Path(path)
    try:
        data: Any = read_yaml(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise EnvironmentSpecError(path, [("(file)", err.strerror or str(err))]) from None
    except yaml.YAMLError as err:
        raise EnvironmentSpecError(path, [("(yaml)", " ".join(str(err).split()))]) from None
    return parse_environment_spec(data, path)


def parse_environment_spec(data: Any, source: Path | str = "<environment spec>") -> EnvironmentSpec:
    try:
        return EnvironmentSpec.model_validate(data)
    except ValidationError as err:
        problems = [
            (
                ".".join(str(p) for p in e["loc"]) or "(top)",
                str(e["msg"]).removeprefix("Value error, "),
            )
            for e in err.errors()
        ]
        raise EnvironmentSpecError(source, problems) from None


def is_numeric(kind: str) -> bool:
    return kind.startswith(NUMERIC_TYPES) or kind.startswith("DECIMAL")


def check_against_dataset(
    spec: EnvironmentSpec, types: Mapping[str, Mapping[str, str]], source: Path | str
) -> None:
    """Raises :class:`EnvironmentSpecError` unless every table and column the spec names is in
    the dataset with a type its noise kind can use (``types``: table -> column -> DuckDB type)."""
    problems: list[tuple[str, str]] = []
    written = spec.folder_of()

    def table(field: str, name: str, must_be_written: bool = False) -> bool:
        if name not in types:
            problems.append((field, f"no table {name!r} in the dataset"))
            return False
        if must_be_written and name not in written:
            problems.append((field, f"table {name!r} is in no folder"))
            return False
        return True

    def column(field: str, name: str, col: str, kind: str = "") -> None:
        if col not in types[name]:
            problems.append((field, f"no column {col!r} in table {name!r}"))
        elif kind == "numeric" and not is_numeric(types[name][col]):
            problems.append((field, f"{name}.{col} is {types[name][col]}, not a number"))
        elif kind == "text" and types[name][col] not in TEXT_TYPES:
            problems.append((field, f"{name}.{col} is {types[name][col]}, not text"))
        elif kind == "date" and not types[name][col].startswith(("DATE", "TIMESTAMP")):
            problems.append((field, f"{name}.{col} is {types[name][col]}, not a date"))

    for folder, tables in spec.folders.items():
        for i, name in enumerate(tables):
            table(f"folders.{folder}.{i}", name)
    for name, noise in spec.noise.items():
        at = f"noise.{name}"
        if not table(at, name, must_be_written=True):
            continue
        if noise.total_rows is not None:
            totals = noise.total_rows
            column(f"{at}.total_rows.label_column", name, totals.label_column, "text")
            for i, col in enumerate(totals.group_by):
                column(f"{at}.total_rows.group_by.{i}", name, col)
            for i, col in enumerate(totals.measures):
                column(f"{at}.total_rows.measures.{i}", name, col, "numeric")
        for i, variants in enumerate(noise.name_variants):
            column(f"{at}.name_variants.{i}.column", name, variants.column, "text")
            for j, alt in enumerate(variants.alternates):
                where = f"{at}.name_variants.{i}.alternates.{j}"
                if table(f"{where}.table", alt.table):
                    column(f"{where}.key", alt.table, alt.key)
                    column(f"{where}.to", alt.table, alt.to, "text")
        for i, rounding in enumerate(noise.rounding):
            column(f"{at}.rounding.{i}.column", name, rounding.column, "numeric")
        for i, units in enumerate(noise.mixed_units):
            column(f"{at}.mixed_units.{i}.column", name, units.column, "numeric")
            if units.entity is not None:
                column(f"{at}.mixed_units.{i}.entity", name, units.entity)
            if units.unit_column is not None and units.unit_column in types[name]:
                problems.append(
                    (
                        f"{at}.mixed_units.{i}.unit_column",
                        f"{name} has a column {units.unit_column!r}",
                    )
                )
        if noise.missing_values is not None:
            for i, col in enumerate(noise.missing_values.columns):
                column(f"{at}.missing_values.columns.{i}", name, col)
    for i, subset in enumerate(spec.subsets):
        if table(f"subsets.{i}.table", subset.table, must_be_written=True):
            column(f"subsets.{i}.by", subset.table, subset.by)
    for kind in ("wide_annual", "year_over_year"):
        for i, derived in enumerate(getattr(spec, kind)):
            if table(f"{kind}.{i}.table", derived.table):
                for j, col in enumerate(derived.keys):
                    column(f"{kind}.{i}.keys.{j}", derived.table, col)
                column(f"{kind}.{i}.period", derived.table, derived.period, "date")
                column(f"{kind}.{i}.value", derived.table, derived.value, "numeric")
    for i, agg in enumerate(spec.aggregates):
        if table(f"aggregates.{i}.table", agg.table):
            column(f"aggregates.{i}.region", agg.table, agg.region)
            for j, col in enumerate(agg.dimensions):
                column(f"aggregates.{i}.dimensions.{j}", agg.table, col)
            for j, col in enumerate(agg.measures):
                column(f"aggregates.{i}.measures.{j}", agg.table, col, "numeric")
    for i, distractor in enumerate(spec.distractors):
        if table(f"distractors.{i}.table", distractor.table):
            for j, col in enumerate(distractor.columns):
                column(f"distractors.{i}.columns.{j}", distractor.table, col, "numeric")
    for i, docs in enumerate(spec.documents):
        if table(f"documents.{i}.table", docs.table):
            for field in ("id_column", "title_column", "body_column"):
                column(f"documents.{i}.{field}", docs.table, getattr(docs, field))
            for j, col in enumerate(docs.fields):
                column(f"documents.{i}.fields.{j}", docs.table, col)
    for name, cols in spec.drop_columns.items():
        if table(f"drop_columns.{name}", name, must_be_written=True):
            noised = _noised_columns(spec, name)
            for i, col in enumerate(cols):
                column(f"drop_columns.{name}.{i}", name, col)
                if col in noised:
                    problems.append(
                        (f"drop_columns.{name}.{i}", f"{col!r} has noise: {noised[col]}")
                    )
    if problems:
        raise EnvironmentSpecError(source, problems)


def _noised_columns(spec: EnvironmentSpec, table: str) -> dict[str, str]:
    """Column -> the noise that reads or writes it, for one table (needed in the written file)."""
    noise = spec.noise.get(table)
    if noise is None:
        return {}
    at = f"noise.{table}"
    used: dict[str, str] = {}
    if noise.total_rows is not None:
        for col in [noise.total_rows.label_column, *noise.total_rows.measures]:
            used[col] = f"{at}.total_rows"
    for i, variants in enumerate(noise.name_variants):
        used[variants.column] = f"{at}.name_variants.{i}"
    for i, rounding in enumerate(noise.rounding):
        used[rounding.column] = f"{at}.rounding.{i}"
    for i, units in enumerate(noise.mixed_units):
        used[units.column] = f"{at}.mixed_units.{i}"
    if noise.missing_values is not None:
        for col in noise.missing_values.columns:
            used[col] = f"{at}.missing_values"
    return used

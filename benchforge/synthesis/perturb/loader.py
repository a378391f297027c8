"""Reading a ``perturb.yaml`` and checking it against a dataset: every problem names the file
and the field (``perturb.yaml: keys.0.rules.1.width: ...``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml
from benchforge.synthesis.perturb.spec import PerturbSpec


class PerturbSpecError(ConfigError):
    """A perturb spec is missing, not YAML, not a valid spec, or does not fit its dataset."""

    def __init__(self, path: Path | str, problems: Sequence[tuple[str, str]]) -> None:
        self.path = path
        self.problems = list(problems)
        super().__init__("\n".join(f"{path}: {field}: {message}" for field, message in problems))


def load_perturb_spec(path: Path | str) -> PerturbSpec:
    path = Path(path)
    try:
        data: Any = read_yaml(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise PerturbSpecError(path, [("(file)", err.strerror or str(err))]) from None
    except yaml.YAMLError as err:
        raise PerturbSpecError(path, [("(yaml)", " ".join(str(err).split()))]) from None
    return parse_perturb_spec(data, path)


def parse_perturb_spec(data: Any, source: Path | str = "<perturb spec>") -> PerturbSpec:
    try:
        return PerturbSpec.model_validate(data)
    except ValidationError as err:
        raise PerturbSpecError(source, [(_field(e), _message(e)) for e in err.errors()]) from None


def check_against_dataset(
    spec: PerturbSpec, columns: Mapping[str, Sequence[str]], source: Path | str
) -> None:
    """Raises :class:`PerturbSpecError` unless every table and column the spec names is in the
    dataset (``columns``: table -> its column names)."""
    problems: list[tuple[str, str]] = []
    placed = spec.placement()

    def table_problem(field: str, table: str) -> bool:
        if table not in columns:
            problems.append((field, f"no table {table!r} in the dataset"))
            return True
        return False

    def column_problem(field: str, table: str, column: str) -> None:
        if column not in columns[table]:
            problems.append((field, f"no column {column!r} in table {table!r}"))

    for name, database in spec.databases.items():
        for kind in ("tables", "documents"):
            for i, table in enumerate(getattr(database, kind)):
                table_problem(f"databases.{name}.{kind}.{i}", table)
    for i, key in enumerate(spec.keys):
        if table_problem(f"keys.{i}.table", key.table):
            continue
        if key.table not in placed:
            problems.append((f"keys.{i}.table", f"table {key.table!r} is in no database"))
        column_problem(f"keys.{i}.column", key.table, key.column)
    removed: dict[tuple[str, str], str] = {}
    for i, rule in enumerate(spec.embed):
        if table_problem(f"embed.{i}.table", rule.table):
            continue
        if rule.table not in placed:
            problems.append((f"embed.{i}.table", f"table {rule.table!r} is in no database"))
        for j, column in enumerate(rule.columns):
            column_problem(f"embed.{i}.columns.{j}", rule.table, column)
            if (rule.table, column) in removed:
                problems.append(
                    (f"embed.{i}.columns.{j}", f"removed by {removed[rule.table, column]}")
                )
            removed[rule.table, column] = f"embed.{i}"
        column_problem(f"embed.{i}.into", rule.table, rule.into)
        if (rule.table, rule.into) in removed and removed[rule.table, rule.into] != f"embed.{i}":
            problems.append((f"embed.{i}.into", f"removed by {removed[rule.table, rule.into]}"))
    for i, key in enumerate(spec.keys):
        if (key.table, key.column) in removed:
            problems.append((f"keys.{i}.column", f"removed by {removed[key.table, key.column]}"))
    if problems:
        raise PerturbSpecError(source, problems)


def _field(error: Any) -> str:
    loc = list(error["loc"])
    # A discriminated union puts the rule's kind (its tag) in the location: not a field.
    rule_kinds = ("prefix", "zero_pad", "case", "trailing_space")
    if len(loc) > 4 and loc[0] == "keys" and loc[2] == "rules" and loc[4] in rule_kinds:
        del loc[4]
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc.append("kind")
    return ".".join(str(p) for p in loc) or "(top)"


def _message(error: Any) -> str:
    return str(error["msg"]).removeprefix("Value error, ")

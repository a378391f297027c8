"""Reading a dataset's ``db_config.yaml``: every problem names the file and the field."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import ValidationError

from benchforge.core.engines.models import DbConfig, DuckDbEntry, EngineKind, SqliteEntry
from benchforge.core.errors import ConfigError
from benchforge.core.yamlio import read_yaml

DB_CONFIG_FILE = "db_config.yaml"


class DbConfigError(ConfigError):
    """A ``db_config.yaml`` is missing, not YAML, or not a valid config."""

    def __init__(self, path: Path, problems: Sequence[tuple[str, str]]) -> None:
        self.path = path
        self.problems = list(problems)
        lines = "\n".join(f"{path}: {field}: {message}" for field, message in self.problems)
        super().__init__(lines)


def load_db_config(path: Path) -> DbConfig:
    """The config in ``path`` with its file paths made absolute against the file's folder;
    a database file that does not exist is a problem of its ``path`` field."""
    path = Path(path).absolute()
    try:
        data: Any = read_yaml(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise DbConfigError(path, [("(file)", err.strerror or str(err))]) from None
    except yaml.YAMLError as err:  # carries its own line and column
        raise DbConfigError(path, [("(yaml)", " ".join(str(err).split()))]) from None
    try:
        config = DbConfig.model_validate(data).resolved(path.parent)
    except ValidationError as err:
        raise DbConfigError(path, [(_field(e), _message(e)) for e in err.errors()]) from None
    missing = [
        (f"databases.{name}.path", f"no such file: {entry.path}")
        for name, entry in config.databases.items()
        if isinstance(entry, DuckDbEntry | SqliteEntry) and not entry.path.is_file()
    ]
    if missing:
        raise DbConfigError(path, missing)
    return config


def _field(error: Any) -> str:
    loc = list(error["loc"])
    # A discriminated union puts the engine (its tag) in the location: not a field.
    if len(loc) > 2 and loc[0] == "databases" and loc[2] in get_args(EngineKind):
        del loc[2]
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc.append("engine")
    return ".".join(str(p) for p in loc) or "(top)"


def _message(error: Any) -> str:
    if error["type"] == "union_tag_invalid":
        return f"unknown engine {error['input'].get('engine')!r}: one of " + ", ".join(
            get_args(EngineKind)
        )
    if error["type"] == "union_tag_not_found":
        return "Field required (one of " + ", ".join(get_args(EngineKind)) + ")"
    return str(error["msg"]).removeprefix("Value error, ")

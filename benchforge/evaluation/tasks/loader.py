"""Loading and validating task folders; errors name the file and the field path."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchforge.core.errors import BenchforgeError
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.tasks.models import LoadedTask, TaskSpecBase

# The families registry is imported where it is used: its modules import the task models.

TASK_FILE = "task.yaml"


class TaskSpecError(BenchforgeError):
    def __init__(self, file: Path, problems: list[tuple[str, str]]):
        self.file, self.problems = file, problems
        super().__init__(
            "invalid task spec\n  " + "\n  ".join(f"{file}: {p}: {m}" for p, m in problems)
        )


def _path(loc: tuple[int | str, ...]) -> str:
    # A discriminated union puts the family (its tag) first in the location: not a field.
    from benchforge.evaluation.families.registry import family_names

    families = set(family_names())
    parts = [p for i, p in enumerate(loc) if not (i == 0 and isinstance(p, str) and p in families)]
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(root)"


def load_task(folder: Path, missing_ok: Collection[str] = ()) -> LoadedTask:
    """The validated task of ``folder``. ``missing_ok``: spec fields whose file may not exist
    yet because the caller is about to generate it (``benchforge task contract`` writing a
    task's first contract)."""
    folder = Path(folder).absolute()
    path = folder / TASK_FILE
    try:
        data: Any = read_yaml(path.read_text())
    except OSError as err:
        raise TaskSpecError(path, [("(file)", err.strerror or str(err))]) from None
    except Exception as err:  # yaml errors carry their own line numbers
        raise TaskSpecError(path, [("(yaml)", str(err).splitlines()[0])]) from None
    from benchforge.evaluation.families.registry import spec_adapter

    try:
        spec = spec_adapter().validate_python(data)
    except ValidationError as err:
        problems = [
            (_path(e["loc"]), str(e["msg"]).removeprefix("Value error, ")) for e in err.errors()
        ]
        raise TaskSpecError(path, problems) from None
    problems = [
        (field, message)
        for field, message in _file_problems(spec, folder, catalogue_root(folder))
        if not (field in missing_ok and not (folder / str(getattr(spec, field))).exists())
    ]
    if spec.id != folder.name:
        problems.append(("id", f"'{spec.id}' does not match the folder name '{folder.name}'"))
    if spec.suite != folder.parent.name:
        problems.append(
            ("suite", f"'{spec.suite}' does not match the suite folder '{folder.parent.name}'")
        )
    if problems:
        raise TaskSpecError(path, problems)
    return LoadedTask(spec=spec, folder=folder)


def catalogue_root(task_folder: Path) -> Path:
    """The folder holding a task's tasks folder (``<root>/task_specs/<suite>/<task_id>``): a
    task's ``repo`` is relative to it."""
    return Path(task_folder).absolute().parents[2]


def _file_problems(spec: TaskSpecBase, folder: Path, root: Path) -> list[tuple[str, str]]:
    """The files the spec names, checked by its family."""
    from benchforge.evaluation.families.registry import get_family

    return get_family(spec.family).file_problems(spec, folder, root)


def discover(root: Path) -> list[Path]:
    """Every task folder under ``root`` (a suites folder, a suite, or one task)."""
    root = Path(root)
    if (root / TASK_FILE).is_file():
        return [root]
    return sorted(p.parent for p in root.rglob(TASK_FILE))


def load_tasks(root: Path, missing_ok: Collection[str] = ()) -> list[LoadedTask]:
    """Validates every task under ``root``; reports all invalid ones together (``missing_ok``:
    as :func:`load_task`)."""
    loaded, errors = [], []
    for folder in discover(root):
        try:
            loaded.append(load_task(folder, missing_ok))
        except TaskSpecError as err:
            errors.append(str(err))
    if errors:
        raise BenchforgeError("\n".join(errors))
    return loaded


def task_json_schema() -> str:
    """The JSON Schema of ``task.yaml``: one of the registered families' specs."""
    from benchforge.evaluation.families.registry import spec_adapter

    return json.dumps(spec_adapter().json_schema(), indent=2, sort_keys=True) + "\n"

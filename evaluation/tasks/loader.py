"""Loading and validating task folders; errors name the file and the field path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from benchforge.core.errors import BenchforgeError
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.tasks.models import (
    DeArchTask,
    DeEvolTask,
    DeImplTask,
    LoadedTask,
    TaskSpec,
)

TASK_FILE = "task.yaml"
_ADAPTER: TypeAdapter[DeImplTask | DeEvolTask | DeArchTask] = TypeAdapter(TaskSpec)


class TaskSpecError(BenchforgeError):
    def __init__(self, file: Path, problems: list[tuple[str, str]]):
        self.file, self.problems = file, problems
        super().__init__(
            "invalid task spec\n  " + "\n  ".join(f"{file}: {p}: {m}" for p, m in problems)
        )


def _path(loc: tuple[int | str, ...]) -> str:
    parts = [p for p in loc if not (isinstance(p, str) and p in ("de_impl", "de_evol", "de_arch"))]
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(root)"


def load_task(folder: Path) -> LoadedTask:
    folder = Path(folder).absolute()
    path = folder / TASK_FILE
    try:
        data: Any = read_yaml(path.read_text())
    except OSError as err:
        raise TaskSpecError(path, [("(file)", err.strerror or str(err))]) from None
    except Exception as err:  # yaml errors carry their own line numbers
        raise TaskSpecError(path, [("(yaml)", str(err).splitlines()[0])]) from None
    try:
        spec = _ADAPTER.validate_python(data)
    except ValidationError as err:
        problems = [
            (_path(e["loc"]), str(e["msg"]).removeprefix("Value error, ")) for e in err.errors()
        ]
        raise TaskSpecError(path, problems) from None
    problems = _file_problems(spec, folder, catalogue_root(folder))
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


def _file_problems(
    spec: DeImplTask | DeEvolTask | DeArchTask, folder: Path, root: Path
) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if not (root / spec.repo / "dbt_project.yml").is_file():
        problems.append(("repo", f"'{spec.repo}' is not a dbt project"))
    wanted: dict[str, str | None] = {}
    if isinstance(spec, DeImplTask):
        wanted = {"contract": spec.contract, "contract_metadata": spec.contract_metadata}
    elif isinstance(spec, DeEvolTask):
        wanted = {"change_request": spec.change_request, "gold_v2": spec.gold_v2}
        for i, removed in enumerate(spec.removed):
            if not (root / spec.repo / removed).is_file():
                problems.append((f"removed[{i}]", f"'{removed}' is not a file of {spec.repo}"))
    elif isinstance(spec, DeArchTask):
        wanted = {"requirement": spec.requirement}
    for field, rel in wanted.items():
        if rel is not None and not (folder / rel).exists():
            problems.append((field, f"missing file '{rel}' in {folder}"))
    return problems


def discover(root: Path) -> list[Path]:
    """Every task folder under ``root`` (a suites folder, a suite, or one task)."""
    root = Path(root)
    if (root / TASK_FILE).is_file():
        return [root]
    return sorted(p.parent for p in root.rglob(TASK_FILE))


def load_tasks(root: Path) -> list[LoadedTask]:
    """Validates every task under ``root``; reports all invalid ones together."""
    loaded, errors = [], []
    for folder in discover(root):
        try:
            loaded.append(load_task(folder))
        except TaskSpecError as err:
            errors.append(str(err))
    if errors:
        raise BenchforgeError("\n".join(errors))
    return loaded


def task_json_schema() -> str:
    return json.dumps(_ADAPTER.json_schema(), indent=2, sort_keys=True) + "\n"

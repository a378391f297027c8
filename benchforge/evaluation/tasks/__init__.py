"""Benchmark task specs (pydantic models, YAML folders, JSON Schema)."""

from benchforge.evaluation.tasks.loader import (
    TaskSpecError,
    discover,
    load_task,
    load_tasks,
    task_json_schema,
)
from benchforge.evaluation.tasks.models import (
    DeArchTask,
    DeEvolTask,
    DeImplTask,
    DeScoring,
    LoadedTask,
    TaskSpecBase,
)

__all__ = [
    "DeArchTask",
    "DeEvolTask",
    "DeImplTask",
    "DeScoring",
    "LoadedTask",
    "TaskSpecBase",
    "TaskSpecError",
    "discover",
    "load_task",
    "load_tasks",
    "task_json_schema",
]

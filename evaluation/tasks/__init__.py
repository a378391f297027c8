"""Benchmark task specs (pydantic models, YAML folders, JSON Schema)."""

from evaluation.tasks.loader import TaskSpecError, discover, load_task, load_tasks, task_json_schema
from evaluation.tasks.models import DeArchTask, DeEvolTask, DeImplTask, DeScoring, LoadedTask

__all__ = [
    "DeArchTask",
    "DeEvolTask",
    "DeImplTask",
    "DeScoring",
    "LoadedTask",
    "TaskSpecError",
    "discover",
    "load_task",
    "load_tasks",
    "task_json_schema",
]

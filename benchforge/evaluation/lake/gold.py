"""The gold of a lake task on one dataset: its reference pipeline run over the gold files of the
lake of its setting (the obscured lake for ``obscured``), the question's answer and every
sub-task's, with the gold files the agent's reads are compared with.

The reference module is the task author's code: it runs here, on the scorer's side, in this
process (as ``engine_answer``'s ``gold.py`` does), over a copy of the gold files only; it is
never copied into a workspace.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict

from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.lake.answers import AnswerType, GoldAnswer, Value
from benchforge.evaluation.lake.data import (
    BuiltLake,
    built_lake,
    gold_files,
    setting_folder,
)
from benchforge.evaluation.lake.reading import LakeInput
from benchforge.evaluation.lake.spec import DataSource, LakePipelineTask, LakeQuestion
from benchforge.evaluation.tasks.models import LoadedTask


class ReferenceError(Exception):
    """The reference pipeline failed or returned no value of its answer type."""


class LakeGold(BaseModel):
    model_config = ConfigDict(extra="forbid")

    setting: str
    lake_seed: int
    question: str
    answer: GoldAnswer
    subtasks: dict[str, GoldAnswer]
    subtask_questions: dict[str, str]
    gold_files: list[str]
    key_functionalities: list[str]


def load_question(task: LoadedTask) -> LakeQuestion:
    spec = _spec(task)
    return LakeQuestion.model_validate(read_yaml(task.file(spec.question).read_text()))


def question_file(task: LoadedTask) -> Path:
    return task.file(_spec(task).question)


def reference_file(task: LoadedTask) -> Path:
    return question_file(task).parent / load_question(task).reference


def lake_spec_file(task: LoadedTask) -> Path:
    return task.file(_spec(task).lake)


def task_lake(task: LoadedTask, dataset_dir: Path, work: Path) -> BuiltLake:
    obscured = _spec(task).setting == "obscured"
    return built_lake(dataset_dir, lake_spec_file(task), work, obscured=obscured)


def lake_gold(task: LoadedTask, dataset_dir: Path, work: Path) -> LakeGold:
    question = load_question(task)
    lake = task_lake(task, dataset_dir, work)
    module = _load_module(reference_file(task))

    def run(name: str, sources: list[DataSource], kind: AnswerType) -> GoldAnswer:
        paths = gold_files(lake.record, sources)
        folder = setting_folder(lake, "gold", paths)
        files = [f for f in lake.record.files if f.path in set(paths)]
        function: Callable[[LakeInput], Any] | None = getattr(module, name, None)
        if function is None:
            raise ReferenceError(f"{reference_file(task)} defines no {name}(lake)")
        try:
            value = function(LakeInput(folder, files))
        except Exception as exc:
            raise ReferenceError(f"{name}: {type(exc).__name__}: {exc}") from exc
        return GoldAnswer(answer_type=kind, value=as_value(value, kind))

    return LakeGold(
        setting=_spec(task).setting,
        lake_seed=lake.record.seed,
        question=question.question,
        answer=run("answer", question.data_sources, question.answer_type),
        subtasks={s.id: run(s.reference, s.data_sources, s.answer_type) for s in question.subtasks},
        subtask_questions={s.id: s.question for s in question.subtasks},
        gold_files=gold_files(lake.record, question.data_sources),
        key_functionalities=question.key_functionalities,
    )


def as_value(value: Any, kind: AnswerType) -> Value:
    """A reference's return value as a gold of ``kind`` (numpy scalars to float)."""
    if kind.is_list:
        if not isinstance(value, list | tuple):
            raise ReferenceError(f"a {kind} reference must return a list, got {value!r}")
        return [_scalar(v) for v in value]
    if kind.is_numeric:
        number = float(value)
        if not math.isfinite(number):
            raise ReferenceError(f"the reference returned {number}")
        return number
    return str(value)


def _scalar(value: Any) -> str | float:
    if isinstance(value, str):
        return value
    return float(value)


def _load_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"lake_reference_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ReferenceError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spec(task: LoadedTask) -> LakePipelineTask:
    if not isinstance(task.spec, LakePipelineTask):
        raise TypeError(f"{task.key} is a {task.spec.family} task, not a lake_pipeline task")
    return task.spec

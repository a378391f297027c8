"""The ``lake_pipeline`` task spec: one question over a data lake (KramaBench style), in one
**setting** of the lake, answered with a value of a typed answer type and the pipeline code that
computed it.

    task_specs/lake-<domain>/
      lake.yaml                         the lake spec (benchforge.synthesis.lake)
      questions/<name>.yaml             a LakeQuestion: the question, its answer type, gold data
                                        sources, key functionalities, sub-tasks
      questions/<name>.py               its reference pipeline: answer(lake) and one function
                                        per sub-task (never shipped to agents)
      <task_id>/task.yaml               this model: a question in one setting

A question is one task per setting (``full``, ``oracle``, ``trimmed``, ``obscured``) and one in
the ``subtasks`` mode (its sub-tasks, on the gold files): each is its own task id, so a run's
identity and leaderboard keep settings apart, and ``benchforge run --setting S`` runs the tasks
of setting ``S`` (``docs/lake-tasks.md``).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchforge.evaluation.lake.answers import AnswerType
from benchforge.evaluation.tasks.models import TaskSpecBase

LakeSetting = Literal["full", "oracle", "trimmed", "obscured"]
SETTINGS: tuple[LakeSetting, ...] = ("full", "oracle", "trimmed", "obscured")
Difficulty = Literal["easy", "hard"]
Mode = Literal["task", "subtasks"]
_IDENTIFIER = r"^[a-z_][a-z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DataSource(_Strict):
    """Files of the lake, named by what they hold (not by path, so another seed, whose splits
    and names differ, names its own files): every ``export`` (or ``report``) file of ``table``
    (of ``parts`` only, when given), never a distractor."""

    table: str
    role: Literal["export", "report"] = "export"
    parts: list[str] = Field(
        default_factory=list,
        description="Only the files of these split parts (a value split's values, as the lake "
        "names them: 'Sales_Cloud'); default every part.",
    )


class SubTask(_Strict):
    """One key functionality as a question of its own (KramaBench's sub-task)."""

    id: str = Field(pattern=_IDENTIFIER)
    question: str = Field(min_length=10)
    answer_type: AnswerType
    reference: str = Field(
        pattern=_IDENTIFIER, description="The function of the reference module computing it."
    )
    data_sources: list[DataSource] = Field(min_length=1)


class LakeQuestion(_Strict):
    """A question over the lake, shared by the tasks of its settings."""

    question: str = Field(min_length=10)
    answer_type: AnswerType
    reference: str = Field(
        description="The reference pipeline, a Python module beside this file (relative): "
        "answer(lake) -> the gold, and one function per sub-task."
    )
    data_sources: list[DataSource] = Field(min_length=1)
    key_functionalities: list[str] = Field(min_length=1)
    subtasks: list[SubTask] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_subtask_per_functionality(self) -> LakeQuestion:
        if len(self.subtasks) != len(self.key_functionalities):
            raise ValueError(
                f"{len(self.subtasks)} sub-tasks for {len(self.key_functionalities)} key "
                "functionalities: one sub-task per key functionality, in order"
            )
        ids = [s.id for s in self.subtasks]
        if len(set(ids)) != len(ids):
            raise ValueError("sub-task ids must be unique")
        return self


class LakePipelineTask(TaskSpecBase):
    family: Literal["lake_pipeline"]
    question: str = Field(
        description="The LakeQuestion file (relative to the task folder, e.g. "
        "../questions/won-amount.yaml)."
    )
    lake: str = Field(default="../lake.yaml", description="The lake spec (relative).")
    setting: LakeSetting = Field(description="Which files of which lake the agent gets.")
    mode: Mode = Field(
        default="task",
        description="task: the question; subtasks: every sub-task at once, on the gold files "
        "(setting oracle), answered as a JSON object by sub-task id",
    )
    trimmed_distractors: int = Field(
        default=10, ge=0, description="Files beside the gold ones in the trimmed setting."
    )
    difficulty: Difficulty = Field(
        description="hard: several files, or a pipeline of more than three steps"
    )

    @model_validator(mode="after")
    def _subtasks_on_gold_files(self) -> LakePipelineTask:
        if self.mode == "subtasks" and self.setting != "oracle":
            raise ValueError("sub-tasks run on the gold files: setting must be oracle")
        return self


def setting_tag(setting: str) -> str:
    return f"setting:{setting}"


SETTING_TAG = re.compile(r"^setting:(?P<setting>[a-z]+)$")

"""The two lake judges on the project's judge client: paraphrase (approximate strings) and
pipeline design (one call, a boolean per key functionality).

- ``JudgeParaphrase.same_meaning`` reads the answer as a human would see it
  (``sanitize_output``: rendered, hidden text and evaluator-addressed sentences removed). An
  answer with nothing visible left is not a paraphrase of anything, without a call. A call
  that fails, or replies that never validate, raise ``JudgeUnavailable``: the answer is then
  unscored, never wrong.
- ``judge_pipeline_design`` asks once for ``{"implemented": [bool, ...]}``; a reply of the
  wrong length is sent back with the problem and asked again (``ask_json``); if none
  validates, the task's pipeline design is *unscored* (``score`` None) and says why. The code is
  read through ``code_for_judge`` (no comments, no evaluator-addressed strings).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.sanitize import sanitize_output
from benchforge.evaluation.judges.structured import ask_json
from benchforge.evaluation.lake.code_view import code_for_judge
from benchforge.evaluation.lake.prompts import (
    PIPELINE_PROMPT_VERSION,
    paraphrase_messages,
    pipeline_messages,
)
from benchforge.evaluation.lake.scorers import JudgeUnavailable

ANSWER_MAX_WORDS = 200


class ParaphraseReply(BaseModel):
    same_meaning: bool
    reason: str = ""


class PipelineDesignReply(BaseModel):
    implemented: list[bool]
    reason: str = ""


class PipelineDesignScore(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["scored", "unscored", "no_code"]
    score: float | None
    implemented: list[bool] | None = None
    detail: str = ""
    attempts: int = 0
    infrastructure: bool = False
    prompt_version: str = PIPELINE_PROMPT_VERSION
    injection_flags: list[str] = Field(default_factory=list)


class JudgeParaphrase:
    """``ParaphraseJudge`` on a ``Judge`` (synchronous: it runs on the judge's LLM loop)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.calls = 0

    def same_meaning(self, *, question: str, answer: str, gold: str) -> bool:
        visible = sanitize_output(answer, max_words=ANSWER_MAX_WORDS).text
        if not visible.strip():
            return False
        self.calls += 1
        reply = self.judge.run(
            ask_json(
                self.judge,
                paraphrase_messages(question=question, gold=gold, answer=visible),
                ParaphraseReply,
            )
        )
        if reply.value is None:
            kind = "the judge call failed" if reply.infrastructure else "no valid judge reply"
            raise JudgeUnavailable(f"{kind} after {reply.attempts} attempt(s): {reply.error}")
        return reply.value.same_meaning


def judge_pipeline_design(
    judge: Judge, *, question: str, functionalities: Sequence[str], code: str
) -> PipelineDesignScore:
    if not functionalities:
        raise ValueError("a pipeline-design judgement needs at least one key functionality")
    view = code_for_judge(code)
    if not view.text.strip():
        return PipelineDesignScore(
            status="no_code",
            score=0.0,
            implemented=[False] * len(functionalities),
            detail="no pipeline code to judge",
            injection_flags=view.injection_flags,
        )
    expected = len(functionalities)

    def right_length(reply: PipelineDesignReply) -> None:
        if len(reply.implemented) != expected:
            raise ValueError(
                f"'implemented' has {len(reply.implemented)} booleans; exactly {expected} "
                "are needed, one per functionality in order"
            )

    reply = judge.run(
        ask_json(
            judge,
            pipeline_messages(question=question, functionalities=functionalities, code=view.text),
            PipelineDesignReply,
            check=right_length,
        )
    )
    if reply.value is None:
        return PipelineDesignScore(
            status="unscored",
            score=None,
            detail=f"no valid judge reply after {reply.attempts} attempt(s): {reply.error}",
            attempts=reply.attempts,
            infrastructure=reply.infrastructure,
            injection_flags=view.injection_flags,
        )
    implemented = reply.value.implemented
    return PipelineDesignScore(
        status="scored",
        score=sum(implemented) / expected,
        implemented=implemented,
        detail=reply.value.reason,
        attempts=reply.attempts,
        injection_flags=view.injection_flags,
    )

"""Accuracy of an exploration answer: per part, code first, the judge only for the rest.

A gold answer has one or more parts. A numeric part passes when the answer states its value
within the part's tolerance, in its unit or bare, without hedging (``dab.number_match``: the
validators' number reading, thousands separators and scale words included); this needs no
judge. A text part passes when its words are written whole in the answer (no call); else the
judge decides whether the answer states it. Acc = passed parts / parts; a trial is correct only
when every part passes. A judge failure leaves the trial's accuracy unscored, never 0.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.dab.normalize import (
    TokenIndex,
    find_phrase,
    normalize_text,
    phrase_tokens,
    tokenize,
)
from benchforge.evaluation.dab.number_match import NumberRule, check_number
from benchforge.evaluation.judges.client import Judge, Message
from benchforge.evaluation.judges.models import content_hash
from benchforge.evaluation.judges.prompts import MATERIAL_RULES, delimit, request_block
from benchforge.evaluation.judges.sanitize import sanitize_output
from benchforge.evaluation.judges.structured import ask_json


class AnswerPart(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    value: float | str
    relative_tolerance: float = Field(default=0.005, ge=0)
    unit: str | None = Field(default=None, description="a validators unit name, e.g. percent")


class PartVerdict(BaseModel):
    name: str
    passed: bool | None
    by: Literal["code", "judge", "none"]
    reason: str


class AccuracyScore(BaseModel):
    status: Literal["scored", "unscored"]
    accuracy: float | None
    correct: bool | None
    parts: list[PartVerdict]


PART_SYSTEM = f"""\
You check one part of a data agent's final answer. The request gives the question, the name of \
the part and its expected value. Decide whether the answer states that value for that part: \
the same entity or conclusion, possibly worded differently. A list of alternatives, a hedge, or \
the value stated for something else does not count.

{MATERIAL_RULES}

Reply with one JSON object and nothing else."""

PART_USER = """\
{request}

{material}

Reply with JSON: {{"stated": true or false, "reason": "<one sentence>"}}."""

PART_PROMPT_VERSION = content_hash([PART_SYSTEM, PART_USER])


class PartReply(BaseModel):
    stated: bool
    reason: str = ""


def part_messages(*, question: str, part: AnswerPart, answer: str) -> list[Message]:
    request = request_block(
        {"task": "answer_part", "question": question, "part": part.name, "expected": part.value}
    )
    return [
        {"role": "system", "content": PART_SYSTEM},
        {
            "role": "user",
            "content": PART_USER.format(request=request, material=delimit("ANSWER", answer)),
        },
    ]


def score_accuracy(
    answer: str | None, parts: list[AnswerPart], *, question: str, judge: Judge | None
) -> AccuracyScore:
    visible = sanitize_output(answer or "").text
    verdicts = [_part(visible, part, question, judge) for part in parts]
    if any(v.passed is None for v in verdicts):
        return AccuracyScore(status="unscored", accuracy=None, correct=None, parts=verdicts)
    passed = sum(bool(v.passed) for v in verdicts)
    return AccuracyScore(
        status="scored",
        accuracy=passed / len(parts),
        correct=passed == len(parts),
        parts=verdicts,
    )


def _part(answer: str, part: AnswerPart, question: str, judge: Judge | None) -> PartVerdict:
    if not answer.strip():
        return PartVerdict(name=part.name, passed=False, by="none", reason="no answer")
    if not isinstance(part.value, str):
        rule = NumberRule(
            target=part.value,
            tolerance=max(abs(part.value) * part.relative_tolerance, 1e-9),
            unit=part.unit,
        )
        outcome = check_number(normalize_text(answer), rule)
        return PartVerdict(name=part.name, passed=outcome.passed, by="code", reason=outcome.reason)
    words = phrase_tokens(part.value)
    if find_phrase(TokenIndex(tokenize(normalize_text(answer))), words):
        return PartVerdict(name=part.name, passed=True, by="code", reason="written whole")
    if judge is None:
        return PartVerdict(name=part.name, passed=None, by="none", reason="no judge configured")
    reply = judge.run(
        ask_json(judge, part_messages(question=question, part=part, answer=answer), PartReply)
    )
    if reply.value is None:
        return PartVerdict(
            name=part.name,
            passed=None,
            by="judge",
            reason=f"no valid judge reply after {reply.attempts} attempt(s): {reply.error}",
        )
    return PartVerdict(
        name=part.name, passed=reply.value.stated, by="judge", reason=reply.value.reason
    )

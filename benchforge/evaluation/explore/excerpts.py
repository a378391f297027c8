"""Candidate excerpts: where a trajectory states a milestone's value, found by code.

Every text is read as a person reading the trajectory sees it (``sanitize_output``: rendered,
hidden text and sentences addressed to the evaluator removed), so a value hidden in a comment
is no excerpt. The trajectory is read as agent steps: step t is the t-th model turn together
with the tool results that follow it (the DataClawBench step). In each step's model text and
tool outputs, and in the final answer (step T, source ``final_answer``), a numeric milestone
is stated by a number within its tolerance (1 % relative or 1e-6 absolute by default;
thousands separators, ``1.2M`` and ``1.2 million`` are read as numbers); a text milestone by
its words, whole.
An output of at most ``WHOLE_CHARS`` characters is kept whole; a longer one gives a window of
``WINDOW_CHARS`` characters on each side of every mention.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from benchforge.core.records import Step
from benchforge.evaluation.dab.normalize import (
    TokenIndex,
    find_phrase,
    normalize_text,
    phrase_tokens,
    tokenize,
)
from benchforge.evaluation.dab.quantities import read_quantities
from benchforge.evaluation.explore.models import Excerpt, Milestone, Source
from benchforge.evaluation.judges.sanitize import sanitize_output

WHOLE_CHARS = 4000
WINDOW_CHARS = 300


class StepText(BaseModel):
    step: int
    source: Source
    text: str


def step_texts(trajectory: Sequence[Step], answer: str | None) -> list[StepText]:
    """The trajectory's texts by agent step, then the final answer as the last step."""
    texts: list[StepText] = []
    step = 0
    for entry in trajectory:
        if entry.kind == "model":
            step += 1
        if not entry.output:
            continue
        visible = sanitize_output(entry.output).text
        texts.append(StepText(step=max(step, 1), source=entry.kind, text=visible))
    if answer:
        visible = sanitize_output(answer).text
        texts.append(StepText(step=max(step, 1), source="final_answer", text=visible))
    return texts


def agent_steps(trajectory: Sequence[Step]) -> int:
    """T: the number of model turns."""
    return sum(1 for entry in trajectory if entry.kind == "model")


def find_excerpts(texts: Sequence[StepText], milestones: Sequence[Milestone]) -> list[Excerpt]:
    found: list[Excerpt] = []
    for item in texts:
        normalized = normalize_text(item.text)
        for milestone in milestones:
            spans = _mentions(normalized, milestone)
            if not spans:
                continue
            for text in _windows(normalized, spans):
                found.append(
                    Excerpt(key=milestone.key, step=item.step, source=item.source, text=text)
                )
    return found


def _mentions(text: str, milestone: Milestone) -> list[tuple[int, int]]:
    if isinstance(milestone.value, str):
        phrase = phrase_tokens(milestone.value)
        return [(s.start, s.end) for s in find_phrase(TokenIndex(tokenize(text)), phrase)]
    return [
        (q.span.start, q.span.end)
        for q in read_quantities(text)
        if q.quantity and milestone.matches(q.value)
    ]


def _windows(text: str, spans: list[tuple[int, int]]) -> list[str]:
    if len(text) <= WHOLE_CHARS:
        return [text]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        low, high = max(0, start - WINDOW_CHARS), min(len(text), end + WINDOW_CHARS)
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return [text[low:high] for low, high in merged]

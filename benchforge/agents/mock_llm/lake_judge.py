"""The faithful mock judge's rules for the two lake judges (``evaluation.lake.prompts``).

PARAPHRASE. Words: lowercase runs of letters and digits, minus ``STOP_WORDS``. An answer word
equal to the initials of consecutive reference words ("nyc" for "new york city") stands for
those words. Same meaning iff the answer's words, so expanded, are exactly the reference's
words (as sets): "NYC" for "New York City" is the same, "the Northeast region" for "Northeast"
is not (one word more), "42 customers" for "42" is not.

ANSWER PART (exploration answers). The part is stated iff some sentence of the answer, its
words expanded as above, holds every word of the expected value.

PIPELINE DESIGN. A functionality's keywords are found as for rubric criteria (``keywords``);
the code's words are its identifiers split at underscores and case changes, and the words of
its string literals. A functionality is implemented iff at least half of its keywords match a
code word (``coverage``, first five letters).
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from benchforge.agents.mock_llm.judge_policies import STOP_WORDS, coverage, keywords

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
PIPELINE_THRESHOLD = 0.5


class ParaphraseVerdict(BaseModel):
    same_meaning: bool
    reason: str


class PipelineVerdict(BaseModel):
    implemented: list[bool]
    reason: str


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS]


def _expanded(answer: list[str], reference: list[str]) -> set[str]:
    out: set[str] = set()
    for word in answer:
        for start in range(len(reference)):
            span = reference[start : start + len(word)]
            if len(word) > 1 and len(span) == len(word) and "".join(w[0] for w in span) == word:
                out.update(span)
                break
        else:
            out.add(word)
    return out


def paraphrase_verdict(reference: str, answer: str) -> ParaphraseVerdict:
    ref = _words(reference)
    same = _expanded(_words(answer), ref) == set(ref)
    return ParaphraseVerdict(same_meaning=same, reason="same words" if same else "the words differ")


def pipeline_verdict(functionalities: list[str], code: str) -> PipelineVerdict:
    code_words = " ".join(_CAMEL.sub(" ", code).replace("_", " ").split())
    implemented = [coverage(keywords(f), code_words) >= PIPELINE_THRESHOLD for f in functionalities]
    return PipelineVerdict(implemented=implemented, reason="keywords found in the code")


class PartVerdict(BaseModel):
    stated: bool
    reason: str


def part_verdict(payload: dict[str, object], answer: str) -> PartVerdict:
    expected = str(payload.get("expected", ""))
    pieces = [p for line in answer.splitlines() for p in re.split(r"(?<=[.!?;])\s+", line)]
    want = set(_words(expected))
    stated = bool(want) and any(want <= _expanded(_words(p), _words(expected)) for p in pieces)
    return PartVerdict(stated=stated, reason="stated" if stated else "not stated")

"""What a judge is allowed to see of an output: the text a reader sees, minus text aimed at the
judge, cut to the task's length limit.

An agent's report is untrusted input to an LLM judge. Before any judge reads it (and before any
evidence quote is checked against it), ``sanitize_output``:

1. renders the report as a reader would see it (``visible.visible_text``: Markdown rendered by a
   real parser, then only the visible text of the page: no comments, reference definitions,
   hidden or transparent elements, alt or title attributes, invisible or tag Unicode); every
   removal is listed in ``removed`` with its kind;
2. replaces each sentence that addresses the evaluator by ``REMOVED_MARKER``: the narrow
   syntactic patterns below (fake delimiters, role lines, "ignore the rubric", "10/10") and the
   meaning-based classifier of ``injection`` (text to or about whoever grades the report, or
   about its score);
3. cuts the result to ``max_words`` words (``length.limit_words``), flagged in ``truncated``.

Removals of evaluator-addressed text (visible or hidden) are also listed in ``injection_flags``
as ``"<kind>: <snippet>"``. Hidden content that does not address the evaluator is removed and
listed in ``removed`` only (a stray ``<!-- TODO -->`` is not an attack, but a judge must not
read it either).

The judge prompt also tells the judge to disregard instructions; the code checks on evidence do
not depend on either.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.judges.injection import classify
from benchforge.evaluation.judges.length import TRUNCATED_FLAG, count_words, limit_words
from benchforge.evaluation.judges.visible import snippet, visible_text

REMOVED_MARKER = "[removed: text addressed to the evaluator]"
PRECUT_FACTOR = 5
PRECUT_MIN_WORDS = 20_000

# Evaluator-addressed text: (kind, pattern). Matched per sentence, case-insensitive. Kept narrow:
# an honest analysis says "we ignore the outliers" or "by the end of the analysis period".
_ADDRESSED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.I | re.M))
    for kind, pattern in (
        (
            "ignore_instructions",
            r"\b(?:ignore|disregard|forget|override|bypass|skip)\b[^.!?\n]{0,40}"
            r"\b(?:rubric|grading|scoring\s+(?:rules|criteria|guide)|evaluation\s+criteria|"
            r"instructions?|guidelines|prompt|system\s+message|marking\s+scheme)\b",
        ),
        (
            "award_request",
            r"\b(?:award|give|assign|grant|mark|score|grade|rate)\b[^.!?\n]{0,40}"
            r"\b(?:full|maximum|max|perfect|all\s+the|all|every)\s+"
            r"(?:marks?|points?|score|credit)\b(?!\s+of\b)",
        ),
        ("award_request", r"\bfull\s+(?:marks|points|credit)\b"),
        (
            "score_request",
            r"(?<![/\d])(?:10|100)\s*/\s*(?:10|100)(?![/\d])|\b(?:10|100)\s+out\s+of\s+(?:10|100)\b",
        ),
        (
            "addresses_evaluator",
            r"\b(?:as|to|dear|attention|hello|hi|note\s+(?:to|for)|message\s+(?:to|for)|"
            r"instructions?\s+(?:to|for))\s+(?:the\s+|any\s+|all\s+|an\s+|a\s+)?(?:ai\s+|llm\s+)?"
            r"(?:grader|judge|evaluator|assessor|marker|scorer|grading\s+model|language\s+model)s?\b",
        ),
        (
            "addresses_evaluator",
            r"\byou\s+are\s+(?:now\s+)?(?:a|an|the)\b[^.!?\n]{0,40}"
            r"\b(?:grader|judge|evaluator|assessor|marker|scorer|reviewer)s?\b",
        ),
        (
            "addresses_evaluator",
            r"^\W*(?:grader|judge|evaluator|assessor|scorer|grading\s+model)s?\s*"
            r"(?:instructions?|note)?\s*[:,]",
        ),
        (
            "claims_rubric_met",
            r"\brubric\b[^.!?\n]{0,60}\b(?:satisf|met\b|fulfil|pass(?:es|ed)?\b|complete[ds]?\b)"
            r"|\b(?:meets|satisfies|fulfils|fulfills)\s+(?:all|every|each)\s+(?:of\s+the\s+)?"
            r"(?:rubric|grading|evaluation\s+criteria|criteria\s+of\s+the\s+rubric)\b",
        ),
        ("role_line", r"^\W*(?:system|assistant|developer)\s*(?:prompt|message)?\s*:"),
        (
            "fake_delimiter",
            r"<<<[^\n]{0,80}>>>|^\s*<<<|<\|[a-z_]+\|>|\[/?(?:INST|SYS)\]|<</?SYS>>"
            r"|</?\s*(?:report|output|document|system|instructions?|judge|grader|evaluator|rubric)"
            r"\b[^>\n]{0,80}>",
        ),
        (
            "fake_delimiter",
            r"^\W*(?:end|close|begin|start)\s+of\s+(?:the\s+)?(?:report|output|document|"
            r"submission)\b\W*$|(?-i:\b(?:END|BEGIN|START) OF (?:THE )?(?:REPORT|OUTPUT|DOCUMENT|"
            r"SUBMISSION)\b)|\b(?:begin|start)\s+(?:system\s+)?instructions\b"
            r"|\bnew\s+(?:system\s+)?instructions\s*:",
        ),
    )
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class SanitizedOutput(BaseModel):
    """The text a judge sees, what was taken out, and which removals were injections."""

    model_config = ConfigDict(frozen=True)

    text: str
    removed: list[str] = Field(default_factory=list)
    injection_flags: list[str] = Field(default_factory=list)
    truncated: str | None = Field(
        default=None, description="'truncated: kept N of M words' when the limit cut the text"
    )

    @property
    def flags(self) -> list[str]:
        """Every removal and cut, for the score record: hidden content by kind, evaluator-
        addressed sentences, truncation."""
        return [*self.removed, *([self.truncated] if self.truncated else [])]


@lru_cache(maxsize=32)
def sanitize_output(text: str, *, max_words: int | None = None) -> SanitizedOutput:
    """``text`` as a judge may read it (see the module docstring). A report far over the limit
    is first cut to ``PRECUT_FACTOR`` times the limit in source words (at least
    ``PRECUT_MIN_WORDS``; whole lines), so that a megabyte of padding costs little more to read
    than the limit does; the flag then counts the source's words. (Cached: GSB reads the same
    report once per baseline.)"""
    source_words = count_words(text)
    precut = None if max_words is None else max(PRECUT_FACTOR * max_words, PRECUT_MIN_WORDS)
    if precut is not None and source_words > precut:
        text = limit_words(text, precut).text
    visible = visible_text(text)
    removed = [r.label() for r in visible.removals]
    flags = [
        f"{r.kind}: {_snippet(r.text)}"
        for r in visible.removals
        if r.kind != "invisible_unicode" and addressed_kinds(r.text)
    ]

    lines = []
    for line in visible.text.split("\n"):
        kept: list[str] = []
        touched = False
        for sentence in _SENTENCE_END.split(line):
            kinds = addressed_kinds(sentence)
            if not kinds:
                kept.append(sentence)
                continue
            touched = True
            label = f"{', '.join(kinds)}: {_snippet(sentence)}"
            removed.append(label)
            flags.append(label)
            if not kept or kept[-1] != REMOVED_MARKER:
                kept.append(REMOVED_MARKER)
        lines.append(" ".join(kept) if touched else line)
    limited = limit_words("\n".join(lines).strip("\n"), max_words)
    truncated = limited.flag
    if precut is not None and source_words > precut:
        truncated = f"{TRUNCATED_FLAG}: kept {limited.kept_words} of {source_words} words"
    return SanitizedOutput(
        text=limited.text, removed=removed, injection_flags=flags, truncated=truncated
    )


def addressed_kinds(text: str) -> list[str]:
    """Kinds of evaluator-addressed text found in ``text`` (empty: none): the patterns above,
    then the classifier's kind."""
    if REMOVED_MARKER in text:
        text = text.replace(REMOVED_MARKER, " ")
    kinds = list(dict.fromkeys(kind for kind, pattern in _ADDRESSED if pattern.search(text)))
    if not kinds:
        meaning = classify(text)
        if meaning.kind is not None:
            kinds.append(meaning.kind)
    return kinds


def _snippet(text: str) -> str:
    return snippet(text)

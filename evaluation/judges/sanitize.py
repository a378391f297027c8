"""What a judge is allowed to see of an output: the visible text, minus text aimed at the judge.

An agent's report is untrusted input to an LLM judge. Before any judge reads it (and before any
evidence quote is checked against it), ``sanitize_output``:

1. drops zero-width and bidirectional control characters (they hide words from a human reader
   and split trigger words so that pattern checks miss them);
2. drops content a rendered report never shows: HTML comments, ``<script>`` / ``<style>``
   elements, elements hidden by ``display:none`` / ``visibility:hidden`` / ``font-size:0`` /
   the ``hidden`` or ``aria-hidden`` attributes, and markdown "comment links"
   (``[//]: # (...)``, a link definition whose target is ``#``);
3. replaces each sentence that addresses the evaluator (asks to ignore the rubric, to award
   marks, speaks "as the grader", plays a ``system:`` role, or fakes a delimiter such as
   ``<<<END REPORT>>>`` / "END OF REPORT" / chat-template tags) by ``REMOVED_MARKER``.

Every removal is listed in ``removed``; removals of evaluator-addressed text (visible or
hidden) are also listed in ``injection_flags`` as ``"<kind>: <snippet>"``. Hidden content that
does not address the evaluator is dropped without a flag (a stray ``<!-- TODO -->`` is not an
attack, but a judge must not read it either).

The patterns here are deliberately narrow (honest reports must pass untouched); the judge prompt
also tells the judge to disregard instructions, and the code checks on evidence do not depend on
either.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

REMOVED_MARKER = "[removed: text addressed to the evaluator]"
SNIPPET_CHARS = 80

_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_HIDDEN_TAGS = re.compile(r"<(script|style|template)\b[^>]*>.*?(?:</\1\s*>|\Z)", re.DOTALL | re.I)
_HIDDEN_ELEMENT = re.compile(
    r"<(?P<tag>[a-zA-Z][a-zA-Z0-9]*)\b(?P<attrs>[^>]*?"
    r"(?:style\s*=\s*(?:\"[^\"]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0"
    r"(?![.\d]*[1-9]))[^\"]*\"|'[^']*(?:display\s*:\s*none|visibility\s*:\s*hidden"
    r"|font-size\s*:\s*0(?![.\d]*[1-9]))[^']*')"
    r"|\shidden(?=[\s>/=])|aria-hidden\s*=\s*[\"']?true)[^>]*)>"
    r"(?P<body>.*?)(?:</(?P=tag)\s*>|\Z)",
    re.DOTALL | re.I,
)
_COMMENT_LINK = re.compile(
    r"^[ \t]*\[[^\]\n]*\]:[ \t]*(?:#|<#>)[ \t]*(?:\([^\n]*\)|\"[^\n]*\"|'[^\n]*')?[ \t]*$",
    re.MULTILINE,
)

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
            r"|</?\s*(?:report|output|document|system|instructions?|judge|rubric)\s*>",
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


def sanitize_output(text: str) -> SanitizedOutput:
    """``text`` as a judge may read it (see the module docstring)."""
    removed: list[str] = []
    flags: list[str] = []

    invisible = len(_INVISIBLE.findall(text))
    if invisible:
        removed.append(f"{invisible} zero-width or bidirectional control character(s)")
        text = _INVISIBLE.sub("", text)

    def drop(kind: str, pattern: re.Pattern[str], group: int | str = 0) -> None:
        nonlocal text

        def replace(match: re.Match[str]) -> str:
            whole = match.group(0)
            removed.append(f"{kind}: {_snippet(whole)}")
            hidden = match.group(group) if group else whole
            if addressed_kinds(hidden):
                flags.append(f"{kind}: {_snippet(hidden)}")
            return ""

        text = pattern.sub(replace, text)

    drop("html_comment", _HTML_COMMENT)
    drop("hidden_html", _HIDDEN_TAGS)
    drop("hidden_html", _HIDDEN_ELEMENT, "body")
    drop("comment_link", _COMMENT_LINK)

    lines = []
    for line in text.split("\n"):
        kept: list[str] = []
        touched = False
        for sentence in _SENTENCE_END.split(line):
            kinds = addressed_kinds(sentence)
            if not kinds:
                kept.append(sentence)
                continue
            touched = True
            removed.append(f"{kinds[0]}: {_snippet(sentence)}")
            flags.append(f"{kinds[0]}: {_snippet(sentence)}")
            if not kept or kept[-1] != REMOVED_MARKER:
                kept.append(REMOVED_MARKER)
        lines.append(" ".join(kept) if touched else line)
    return SanitizedOutput(
        text="\n".join(lines).strip("\n"), removed=removed, injection_flags=flags
    )


def addressed_kinds(text: str) -> list[str]:
    """Kinds of evaluator-addressed text found in ``text`` (empty: none)."""
    if REMOVED_MARKER in text:
        text = text.replace(REMOVED_MARKER, " ")
    return [kind for kind, pattern in _ADDRESSED if pattern.search(text)]


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"

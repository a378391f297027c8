"""Pipeline code as the pipeline-design judge may read it: the code, not what it says about
itself.

Whether code implements a functionality is a property of its statements, so the judge reads
Python with its comments removed (``tokenize``), string literals that address the evaluator
replaced by ``REMOVED_MARKER``, and invisible or tag Unicode stripped. Every removal is listed.
Code that does not tokenize as Python is judged as text with invisible characters stripped, and
flagged. The result is cut to ``max_chars`` (flagged).
"""

from __future__ import annotations

import io
import tokenize

from pydantic import BaseModel, Field

from benchforge.evaluation.judges.sanitize import REMOVED_MARKER, addressed_kinds
from benchforge.evaluation.judges.visible import strip_invisible

DEFAULT_MAX_CHARS = 20_000


class CodeView(BaseModel):
    text: str
    removed: list[str] = Field(default_factory=list)
    injection_flags: list[str] = Field(default_factory=list)
    truncated: bool = False


def code_for_judge(code: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> CodeView:
    visible, removals = strip_invisible(code)
    removed = [f"{r.kind}: {r.text[:60]}" for r in removals]
    flags = [f"{r.kind}: {r.text[:60]}" for r in removals if r.kind == "tag_unicode"]
    try:
        text = _without_comments(visible, removed, flags)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        text = visible
        removed.append("not Python: judged as text")
    truncated = len(text) > max_chars
    if truncated:
        text = text[:max_chars]
    return CodeView(text=text, removed=removed, injection_flags=flags, truncated=truncated)


def _without_comments(code: str, removed: list[str], flags: list[str]) -> str:
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    kept: list[tokenize.TokenInfo] = []
    for token in tokens:
        if token.type == tokenize.COMMENT:
            removed.append(f"comment: {token.string[:60]}")
            if addressed_kinds(token.string):
                flags.append(f"comment: {token.string[:60]}")
            continue
        if token.type == tokenize.STRING and addressed_kinds(token.string):
            flags.append(f"string: {token.string[:60]}")
            removed.append(f"string: {token.string[:60]}")
            token = token._replace(string=repr(REMOVED_MARKER))
        kept.append(token)
    return _untokenize(kept)


def _untokenize(tokens: list[tokenize.TokenInfo]) -> str:
    """Tokens back to source, keeping each kept token's line and column (a replaced string
    shifts the rest of its line)."""
    lines: list[str] = []
    row, col = 1, 0
    for token in tokens:
        (start_row, start_col), (end_row, end_col) = token.start, token.end
        if token.type in (tokenize.ENDMARKER,):
            break
        if start_row > row:
            lines.append("\n" * (start_row - row))
            row, col = start_row, 0
        if start_col > col:
            lines.append(" " * (start_col - col))
        lines.append(token.string)
        if token.type in (tokenize.NEWLINE, tokenize.NL):
            row, col = end_row + 1, 0
        else:
            row = end_row
            col = start_col + len(token.string) if start_row == end_row else end_col
    return "\n".join(line.rstrip() for line in "".join(lines).split("\n"))

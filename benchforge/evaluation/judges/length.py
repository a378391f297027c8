"""How much of a report a judge reads: a word limit per task, the excess cut and flagged.

A judge that reads a 0.86 MB report in each of its calls is slow and expensive, and padding can
sway a length-biased judge. A ``da_open`` task sets ``max_report_words`` (default
``DEFAULT_MAX_REPORT_WORDS``, about 3.5 times the longest shipped reference report), a
``de_arch`` task ``max_blueprint_words`` (default ``DEFAULT_MAX_BLUEPRINT_WORDS``, about 3 times
the longest shipped reference blueprint); the visible text of a longer output is cut at the
last whole line (or sentence, or word) within the limit before any judge sees it, and the score
carries the flag ``"truncated: kept N of M words"``. Evidence can then only come from the kept
part, and no judge request grows with the output past the limit.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from pydantic import BaseModel, ConfigDict

DEFAULT_MAX_REPORT_WORDS = 2000
DEFAULT_MAX_BLUEPRINT_WORDS = 6000
TRUNCATED_FLAG = "truncated"
_WORD = re.compile(r"(?=\S*[^\W_])\S+")
"""A word: a run of non-space characters with a letter or digit in it (Markdown's ``#``, ``-``,
``|`` and ``---`` are not words)."""
_SENTENCE_END = re.compile(r"[.!?][)\]\"'*_]*(?=\s)")


class LimitedText(BaseModel):
    """``text`` cut to the limit; ``words`` the original's word count, ``kept_words`` what is
    left."""

    model_config = ConfigDict(frozen=True)

    text: str
    words: int
    kept_words: int
    truncated: bool

    @property
    def flag(self) -> str | None:
        """``"truncated: kept N of M words"`` when cut, else None."""
        if not self.truncated:
            return None
        return f"{TRUNCATED_FLAG}: kept {self.kept_words} of {self.words} words"


def count_words(text: str) -> int:
    return sum(1 for _ in _WORD.finditer(text))


def limit_words(text: str, max_words: int | None) -> LimitedText:
    """``text`` with at most ``max_words`` words (None: no limit). The cut falls at the end of
    the last whole line that fits, unless that drops more than a tenth of the limit (a long
    paragraph is one line in Markdown): then at the end of the last whole sentence that fits,
    under the same condition, else after the last word that fits."""
    words = list(_WORD.finditer(text))
    if max_words is None or len(words) <= max_words:
        return LimitedText(text=text, words=len(words), kept_words=len(words), truncated=False)
    if max_words <= 0:
        return LimitedText(text="", words=len(words), kept_words=0, truncated=True)
    first_out = words[max_words].start()
    starts = [w.start() for w in words[: max_words + 1]]
    enough = max_words - max_words // 10

    def kept_before(cut: int) -> int:
        return bisect_left(starts, cut)

    cut = words[max_words - 1].end()
    line_end = text.rfind("\n", 0, first_out)
    sentence_end = max((m.end() for m in _SENTENCE_END.finditer(text, 0, first_out)), default=-1)
    for boundary in (line_end, sentence_end):
        if boundary > words[0].start() and kept_before(boundary) >= enough:
            cut = boundary
            break
    kept = text[:cut].rstrip()
    return LimitedText(text=kept, words=len(words), kept_words=count_words(kept), truncated=True)

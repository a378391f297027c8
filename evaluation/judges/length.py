"""How much of a report a judge reads: a word limit per task, the excess cut and flagged.

A judge that reads a 0.86 MB report in each of its calls is slow and expensive, and padding can
sway a length-biased judge. A task sets ``max_report_words`` (default ``DEFAULT_MAX_REPORT_WORDS``,
about 3.5 times the longest shipped reference); the visible text of a longer report is cut at
the last whole line (or word) within the limit before any judge sees it, and the score carries
the flag ``TRUNCATED_FLAG`` with the counts. Evidence can then only come from the kept part.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

DEFAULT_MAX_REPORT_WORDS = 2000
TRUNCATED_FLAG = "truncated"
_WORD = re.compile(r"\S+")


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
    """``text`` with at most ``max_words`` words (None: no limit). The cut falls after the last
    complete line that fits; when even the first line is longer, after the last word that
    fits."""
    words = list(_WORD.finditer(text))
    if max_words is None or len(words) <= max_words:
        return LimitedText(text=text, words=len(words), kept_words=len(words), truncated=False)
    if max_words <= 0:
        return LimitedText(text="", words=len(words), kept_words=0, truncated=True)
    last_fitting_end = words[max_words - 1].end()
    line_end = text.rfind("\n", 0, words[max_words].start())
    cut = line_end if line_end >= words[0].start() and line_end >= 0 else last_fitting_end
    if cut < words[0].start():
        cut = last_fitting_end
    kept = text[:cut].rstrip()
    return LimitedText(
        text=kept, words=len(words), kept_words=count_words(kept), truncated=True
    )

"""The text a validator reads, and whole-token phrase search over it.

``normalize_text`` is applied to the answer and to every gold value alike:

- unicode: NFKC (full-width digits, no-break and thin spaces), the minus sign and curly quotes
  made ASCII;
- markdown: fences and backticks, ``**bold**``/``__bold__``/``*em*``/``_em_``/``~~strike~~``,
  links, headings, block quotes, bullet and numbered-list markers, ``<br>``; a table loses its
  header row and rule, and its pipes become line breaks, so two cells never read as one number;
- thousands separators: ``1,234,567`` and ``1 234 567`` become ``1234567``. A comma or a single
  space groups digits only when every group after the first has exactly three digits and no
  space follows the comma: ``3, 4, 5`` and ``3,4,5`` stay three numbers, ``1,5`` stays two
  unless ``decimal_comma`` (then ``1,5`` is 1.5 and ``1.234.567,8`` is 1234567.8);
- ``12 %`` becomes ``12%``.

Phrase search (``find_phrase``) compares *tokens*: runs of letters, digits and underscores,
case-folded, accents removed, apostrophes dropped (``Children's`` = ``Childrens``) and ``&``
read as ``and``. A phrase matches only whole tokens in sequence, so ``MALE`` is not found in
``FEMALE`` nor ``MI`` in ``DETERMINE``; punctuation between tokens (``Vol. 8`` / ``Vol 8``) and a
trailing period do not matter.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from functools import lru_cache
from typing import NamedTuple

_ASCII = str.maketrans(
    {
        "\u2212": "-",  # minus sign
        "\u2018": "'",
        "\u2019": "'",
        "\u02bc": "'",
        "\u201c": '"',
        "\u201d": '"',
    }
)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)[^\n]*$", re.M)
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+", re.M)
_QUOTE = re.compile(r"^[ \t]*>[ \t]?", re.M)
_BULLET = re.compile(r"^[ \t]*(?:[-*+\u2022][ \t]+|\d{1,3}[.)][ \t]+(?=\S))", re.M)
_RULE = r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|?)+[ \t]*$"
# A table's header row (the line above its rule) labels the columns: dropped with the rule.
_TABLE_HEADER = re.compile(rf"^[^\n]*\|[^\n]*\n{_RULE}", re.M)
_TABLE_RULE = re.compile(rf"^{_RULE}", re.M)
_BREAK = re.compile(r"<br\s*/?>", re.I)
_EMPHASIS = [
    re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"),
    re.compile(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)"),
    re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"),
    re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])"),
    re.compile(r"(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)"),
]
_SPACES = re.compile(r"[ \t]+")
_COMMA_GROUPS = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?!\w|[.,]\d{3}\b|,\d)")
_DOT_GROUPS = re.compile(r"(?<![\w.,])\d{1,3}(?:\.\d{3})+(?!\w|[.,]\d{3}\b|\.\d)")
_SPACE_GROUPS = re.compile(r"(?<![\w.,])\d{1,3}(?: \d{3})+(?!\w| \d|,\d)")
_SPACE_GROUPS_DECIMAL_COMMA = re.compile(r"(?<![\w.,])\d{1,3}(?: \d{3})+(?!\w| \d|\.\d)")
_DECIMAL_COMMA = re.compile(r"(?<![\w.,])(\d+),(\d+)(?![\w.,]\d|\w)")
_PERCENT_SPACE = re.compile(r"(?<=\d) %")
_TOKEN = re.compile(r"\w+(?:'\w+)*|&")


def normalize_text(text: str, *, decimal_comma: bool = False) -> str:
    """``text`` as validators read it (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text).translate(_ASCII)
    text = _strip_markdown(text)
    text = _SPACES.sub(" ", text)
    if decimal_comma:
        text = _DOT_GROUPS.sub(lambda m: m.group(0).replace(".", ""), text)
        text = _SPACE_GROUPS_DECIMAL_COMMA.sub(lambda m: m.group(0).replace(" ", ""), text)
        text = _DECIMAL_COMMA.sub(r"\1.\2", text)
    else:
        text = _COMMA_GROUPS.sub(lambda m: m.group(0).replace(",", ""), text)
        text = _SPACE_GROUPS.sub(lambda m: m.group(0).replace(" ", ""), text)
    return _PERCENT_SPACE.sub("%", text)


def _strip_markdown(text: str) -> str:
    text = _FENCE.sub("", text)
    text = text.replace("`", "")
    text = _LINK.sub(r"\1", text)
    text = _BREAK.sub("\n", text)
    text = _TABLE_HEADER.sub("", text)
    text = _TABLE_RULE.sub("", text)
    text = text.replace("|", "\n")
    text = _HEADING.sub("", text)
    text = _QUOTE.sub("", text)
    text = _BULLET.sub("", text)
    for pattern in _EMPHASIS:
        text = pattern.sub(r"\1", text)
    return text


class Token(NamedTuple):
    """One token of a normalized text: its folded form and where it is written."""

    folded: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """The tokens of an already normalized ``text`` (see the module docstring)."""
    return [
        Token(_fold(match.group(0)), match.start(), match.end()) for match in _TOKEN.finditer(text)
    ]


def _fold(word: str) -> str:
    if word == "&":
        return "and"
    decomposed = unicodedata.normalize("NFKD", word.casefold().replace("'", ""))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@lru_cache(maxsize=65536)  # a set's other_values are read again for every answer
def phrase_tokens(phrase: str, *, decimal_comma: bool = False) -> tuple[str, ...]:
    """The folded tokens of a gold value, normalized like an answer."""
    return tuple(t.folded for t in tokenize(normalize_text(phrase, decimal_comma=decimal_comma)))


class Span(NamedTuple):
    start: int
    end: int


class TokenIndex:
    """The tokens of one answer, and where each folded token occurs (phrase search starts only
    where a phrase's first token is written)."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.positions: dict[str, list[int]] = defaultdict(list)
        for index, token in enumerate(tokens):
            self.positions[token.folded].append(index)


def find_phrase(index: TokenIndex, phrase: tuple[str, ...]) -> list[Span]:
    """Every place the token sequence ``phrase`` is written (character spans of the normalized
    text), first to last."""
    if not phrase:
        return []
    tokens, size = index.tokens, len(phrase)
    found: list[Span] = []
    for at in index.positions.get(phrase[0], ()):
        if at + size <= len(tokens) and all(
            tokens[at + k].folded == phrase[k] for k in range(1, size)
        ):
            found.append(Span(tokens[at].start, tokens[at + size - 1].end))
    return found

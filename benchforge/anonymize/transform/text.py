"""Free-text scrubbing: identifiers re-embedded in notes, descriptions and comments.

Structured columns are replaced by pseudonyms and fakes elsewhere; a free-text column can still
quote the same values ("Called Jane Smith on +1-555-010-2233"). Two recognizers cover it:

- a **deny-list** of every original identifier the policy replaces (emails, phones, full names,
  account codes), matched case-insensitively on word boundaries by one Aho-Corasick automaton, so
  a mention becomes the *same* replacement its structured column got and text and tables stay
  consistent. A boundary is any place where a letter or digit does not continue the match
  (accented letters included: 'Berg' is not replaced inside 'Öberg'), except beside a character
  of a script written without spaces (Han, kana, Hangul, Thai): '田中太郎様', 'Smithさん' match.
  Identifiers shorter than :data:`MIN_IDENTIFIER_LENGTH` are left out (a two-letter code would
  hit inside every sentence), or than :data:`MIN_UNSEGMENTED_IDENTIFIER_LENGTH` when they are
  written in such a script;
- **patterns** for identifiers nobody listed: emails, phone numbers, IBANs (mod-97 checked), card
  numbers (Luhn checked), IPv4 addresses and URLs, each replaced by a placeholder (``<EMAIL>``).

When recognizers overlap, the longest span wins (then the leftmost); on an identical span the
deny-list wins, so a known email gets its consistent fake and an unknown one ``<EMAIL>``, while
a listed surname inside an unknown email address does not leave the rest of the address behind.

Speed: the deny-list runs once over a whole batch (texts joined by NUL, so no match crosses two
rows) and every pattern has a vectorized RE2 prefilter (``pyarrow.compute``) that is a necessary
condition of its Python regex; only rows a recognizer can hit are looped over in Python.

Presidio is not used: its pattern recognizers need a spaCy pipeline (~370 texts/s on two cores
here), it cannot take our deny-list replacements, and its person/location recognizers need an
NER model download.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import ahocorasick
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from benchforge.anonymize.policy.models import PatternKind, Scrub

MIN_IDENTIFIER_LENGTH = 4
"""Identifiers shorter than this (after trimming) never join the deny-list; the privacy report's
verbatim leak count uses the same floor."""

MIN_UNSEGMENTED_IDENTIFIER_LENGTH = 3
"""The floor for identifiers containing a character of a script written without spaces: one
Han character carries about a word, so a three-character Chinese name (王小明) is one; two
characters are not enough, because without word boundaries a two-character name is found
inside longer names and words (王伟 inside 王伟华, a fake)."""

UNSEGMENTED_RANGES = (
    "\u0e00-\u0e7f"  # Thai
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"  # Hangul
    "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
)
_UNSEGMENTED_CHAR = re.compile(f"[{UNSEGMENTED_RANGES}]")
UNSEGMENTED_SQL = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}]"
"""The same scripts as a DuckDB (RE2) character class."""


def unsegmented_sql(expr: str) -> str:
    """DuckDB SQL: whether ``expr`` holds a character of :data:`UNSEGMENTED_SQL`; an ASCII text
    (as many bytes as characters) skips the regular expression (crm scale 5: 0.35 s -> 0.08 s
    over the 6.3 M identifiers)."""
    return f"(strlen({expr}) <> length({expr}) AND regexp_matches({expr}, '{UNSEGMENTED_SQL}'))"


def is_unsegmented(text: str) -> bool:
    """Whether ``text`` contains a character of a script written without spaces."""
    return _UNSEGMENTED_CHAR.search(text) is not None


def unsegmented_spellings(original: str, replacement: str) -> list[tuple[str, str]]:
    """Other spellings of an identifier in an unsegmented script: '佐藤 直子' is written
    '佐藤直子' in running text (its replacement loses its spaces too when it is in such a
    script)."""
    if not is_unsegmented(original) or not re.search(r"\s", original):
        return []
    compact = re.sub(r"\s+", "", replacement) if is_unsegmented(replacement) else replacement
    return [(re.sub(r"\s+", "", original), compact)]


def long_enough(identifier: str) -> bool:
    """Whether a (trimmed) identifier is long enough to be deny-listed and searched for."""
    floor = (
        MIN_UNSEGMENTED_IDENTIFIER_LENGTH if is_unsegmented(identifier) else MIN_IDENTIFIER_LENGTH
    )
    return len(identifier) >= floor


def long_enough_sql(expr: str) -> str:
    """:func:`long_enough` in DuckDB SQL over a VARCHAR expression."""
    return (
        f"(length({expr}) >= {MIN_IDENTIFIER_LENGTH} OR (length({expr}) >= "
        f"{MIN_UNSEGMENTED_IDENTIFIER_LENGTH} AND regexp_matches({expr}, '{UNSEGMENTED_SQL}')))"
    )


PATTERN_ORDER: tuple[PatternKind, ...] = ("email", "url", "iban", "card", "ipv4", "phone")
RECOGNIZERS: tuple[str, ...] = ("deny_list", *PATTERN_ORDER)
"""Recognizer names, in the order that breaks ties between identical spans."""

PLACEHOLDERS: dict[PatternKind, str] = {
    "email": "<EMAIL>",
    "phone": "<PHONE>",
    "iban": "<IBAN>",
    "card": "<CARD>",
    "ipv4": "<IP>",
    "url": "<URL>",
}

_BATCH_ROWS = 65_536  # rows joined into one string for the automaton: bounds peak memory
_BATCH_BYTES = 64 << 20
_SEPARATOR = "\x00"

# ----------------------------------------------------------------------------- patterns

_EMAIL = re.compile(
    r"(?<![\w.%+\-])[\w.%+\-]+@(?:[A-Za-z0-9\-]+\.)+[A-Za-z]{2,}(?![\w\-])",
)
_URL = re.compile(r"(?<![\w@])(?:https?://|www\.)[^\s<>\"'()\[\]{}]+", re.IGNORECASE)
_URL_TRAILING = ".,;:!?"
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)", re.ASCII)
# Card numbers as printed: 13-19 digits in one run, in groups of four (4-4-4-4, 4-4-4-1..3,
# 4-4-4-4-1..3) or Amex/Diners 4-6-4/5. Free groupings (001-537-640-6812) are phone numbers.
_CARD = re.compile(
    r"(?<![\w\-])(?<!\d )"
    r"(?:\d{13,19}"
    r"|\d{4}([ \-])\d{4}\1\d{4}(?:\1\d{4})?(?:\1\d{1,3})?"
    r"|\d{4}([ \-])\d{6}\2\d{4,5})"
    r"(?![\w\-])(?! \d)",
    re.ASCII,
)
_IBAN = re.compile(r"(?<!\w)[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?!\w)", re.IGNORECASE | re.ASCII)
_PHONE = re.compile(
    r"(?<![\w+\-/.])(?<!\d[ .])"
    r"(?P<intl>\+\d{1,3}[ .\-]?|00\d{1,3}[ .\-])?"
    r"(?P<area>\(\d{1,4}\)[ .\-]?)?"
    r"\d(?:[ .\-]?\d){4,14}"
    r"(?:[ ]?(?:x|ext\.?)[ ]?\d{1,5})?"
    r"(?![\w\-/])(?![ .\-]\d)",
    re.IGNORECASE | re.ASCII,
)
_DATE_IN_PHONE = re.compile(
    r"\d{4}[\-/.](?:0?[1-9]|1[0-2])[\-/.](?:0?[1-9]|[12]\d|3[01])(?!\d)"
    r"|(?<!\d)(?:0?[1-9]|[12]\d|3[01])[\-/.](?:0?[1-9]|[12]\d|3[01])[\-/.](?:19|20)\d\d(?!\d)"
)
_YEAR_GROUP = re.compile(r"(?:19|20)\d\d")
_DOTTED_QUAD = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")

# RE2 prefilters (pyarrow.compute): each is implied by its pattern, so a row the prefilter
# rejects cannot match the Python regex. One pass of their alternation finds the rows any
# pattern can touch (usually few); the per-pattern filters then run on those rows only.
_PREFILTERS: dict[PatternKind, str] = {
    "email": "@",
    "url": r"(?i:https?://|www\.)",
    "ipv4": r"\d\.\d{1,3}\.\d{1,3}\.\d",
    "card": r"\d(?:[ \-]?\d){12}",
    "iban": r"(?i:[a-z]{2}\d{2}(?: ?[a-z0-9]){11})",
    "phone": r"\d(?:[ .\-]?\d){4}",
}


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a card number (digits only)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_valid(compact: str) -> bool:
    """ISO 13616 check: country letters, two check digits, 11-30 alphanumerics, mod 97 == 1."""
    s = compact.upper()
    if not (15 <= len(s) <= 34 and s[:2].isalpha() and s[2:4].isdigit() and s.isalnum()):
        return False
    if not s.isascii():
        return False
    rearranged = s[4:] + s[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97 == 1


def _email_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _EMAIL.finditer(text):
        yield m.span()


def _url_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _URL.finditer(text):
        start, end = m.span()
        while end > start and text[end - 1] in _URL_TRAILING:
            end -= 1
        if end - start > 4:
            yield start, end


def _ipv4_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _IPV4.finditer(text):
        if all(int(octet) <= 255 for octet in m.group().split(".")):
            yield m.span()


def _card_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            yield m.span()


def _iban_spans(text: str) -> Iterator[tuple[int, int]]:
    # The regex is greedy with optional spaces, so "DE89 3704 ... 00 AND" may take the next
    # word; try the candidate cut at each space from the longest down until one checks out.
    for m in _IBAN.finditer(text):
        start, candidate = m.start(), m.group()
        cuts = [len(candidate)] + [
            i for i in range(len(candidate) - 1, 0, -1) if candidate[i] == " "
        ]
        for cut in cuts:
            if iban_valid(candidate[:cut].replace(" ", "")):
                yield start, start + cut
                break


def _phone_spans(text: str) -> Iterator[tuple[int, int]]:
    for m in _PHONE.finditer(text):
        found = m.group()
        main = re.split(r"(?i)\s?(?:x|ext\.?)", found, maxsplit=1)[0]
        digits = sum(ch.isdigit() for ch in main)
        if not 7 <= digits <= 15:
            continue
        # A bare run of under ten digits is more often an amount or an order number.
        has_separator = bool(m.group("intl") or m.group("area")) or any(ch in " .-" for ch in main)
        if not has_separator and digits < 10:
            continue
        if _DATE_IN_PHONE.search(main) or _DOTTED_QUAD.fullmatch(main):
            continue
        groups = re.findall(r"\d+", main)
        if all(len(g) == 4 and _YEAR_GROUP.fullmatch(g) for g in groups):
            continue  # "1999 2004": years, not a number
        yield m.span()


_SPAN_FINDERS: dict[PatternKind, Callable[[str], Iterator[tuple[int, int]]]] = {
    "email": _email_spans,
    "url": _url_spans,
    "ipv4": _ipv4_spans,
    "card": _card_spans,
    "iban": _iban_spans,
    "phone": _phone_spans,
}

# ----------------------------------------------------------------------------- scrubber


@dataclass(frozen=True)
class _Entry:
    """One lower-cased identifier: the replacement for each exact spelling seen in the mapping
    (pseudonyms re-apply the original's case, so ``acc-7`` and ``ACC-7`` differ) and a default
    for spellings not in it."""

    length: int
    exact: dict[str, str]
    default: str


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    kind: str
    replacement: str


class DenyAutomaton:
    """The deny-list as one Aho-Corasick automaton over its lower-cased identifiers; built once
    (crm scale 5: ~0.8 s for 250 k identifiers) and shared by every :class:`Scrubber` whose rule
    uses the same deny-list."""

    def __init__(self, deny: Mapping[str, str]):
        self.entries: list[_Entry] = []
        self.automaton: ahocorasick.Automaton | None = None
        originals = sorted(
            {
                key.strip(): value
                for key, value in deny.items()
                if long_enough(key.strip()) and _SEPARATOR not in key
            }.items()
        )
        if not originals:
            return
        # Lower-case with Arrow's per-code-point mapping, the same one applied to the texts, so
        # match positions in the lowered text are positions in the original.
        lowered = pc.utf8_lower(pa.array([k for k, _ in originals], pa.string())).to_pylist()
        grouped: dict[str, dict[str, str]] = {}
        for low, (original, replacement) in zip(lowered, originals, strict=True):
            grouped.setdefault(low, {})[original] = replacement
        automaton = ahocorasick.Automaton()
        for low, exact in grouped.items():
            # Default for an unseen spelling: the replacement of the first spelling in sort
            # order, so the choice does not depend on the mapping's iteration order.
            entry = _Entry(len(low), exact, exact[min(exact)])
            automaton.add_word(low, len(self.entries))
            self.entries.append(entry)
        automaton.make_automaton()
        self.automaton = automaton


class Scrubber:
    """Scrubs a batch of texts with one rule and one deny-list; build it once per column (the
    automaton is built in the constructor unless a built one is given) and call :meth:`scrub`
    on each batch."""

    def __init__(self, rule: Scrub, deny: Mapping[str, str] | DenyAutomaton):
        self.rule = rule
        self.patterns: tuple[PatternKind, ...] = tuple(
            kind for kind in PATTERN_ORDER if kind in rule.patterns
        )
        self._entries: list[_Entry] = []
        self._automaton: ahocorasick.Automaton | None = None
        if rule.deny_list:
            built = deny if isinstance(deny, DenyAutomaton) else DenyAutomaton(deny)
            self._entries, self._automaton = built.entries, built.automaton

    @property
    def deny_list_size(self) -> int:
        """Distinct (case-insensitive) identifiers in the automaton."""
        return len(self._entries)

    def scrub(
        self, values: pa.Array, weights: np.ndarray | None = None
    ) -> tuple[pa.Array, Counter[str]]:
        """Scrubbed texts (same length and type, NULLs kept) and the number of replacements per
        recognizer (``deny_list``, ``email``, ``phone``, ``iban``, ``card``, ``ipv4``, ``url``);
        with ``weights`` (one integer per text: how many rows hold it) a text's replacements
        count that many times."""
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            if values.null_count == len(values):
                return values, Counter()
            raise TypeError(f"Scrubber.scrub takes strings, got {values.type}")
        hits: Counter[str] = Counter()
        pieces = [
            self._scrub_batch(
                values.slice(a, b - a), hits, None if weights is None else weights[a:b]
            )
            for a, b in _batches(values)
        ]
        if not pieces:
            return values, hits
        out = pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)
        return out, hits

    # ------------------------------------------------------------------ internals

    def _deny_spans(self, values: pa.Array) -> dict[int, list[_Span]]:
        """Deny-list matches per row, found in one automaton pass over the whole batch."""
        spans: dict[int, list[_Span]] = {}
        if self._automaton is None or len(values) == 0:
            return spans
        filled = pc.fill_null(values, "")
        text = _joined(filled)
        lowered = _joined(pc.utf8_lower(filled))
        lengths = pc.utf8_length(filled).to_numpy(zero_copy_only=False).astype(np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
        size = len(text)
        entries = self._entries
        for end_index, idx in self._automaton.iter(lowered):
            entry = entries[idx]
            end = end_index + 1
            start = end - entry.length
            if start > 0 and _continues(text[start - 1], text[start]):
                continue
            if end < size and _continues(text[end], text[end - 1]):
                continue
            row = int(np.searchsorted(starts, start, side="right")) - 1
            found = text[start:end]
            local = start - int(starts[row])
            replacement = entry.exact.get(found, entry.default)
            spans.setdefault(row, []).append(
                _Span(local, local + entry.length, "deny_list", replacement)
            )
        return spans

    def _candidates(self, values: pa.Array) -> dict[PatternKind, np.ndarray]:
        """Per pattern, the sorted row indexes its regex can possibly match."""
        if not self.patterns or len(values) == 0:
            return {}
        either = "|".join(f"(?:{_PREFILTERS[kind]})" for kind in self.patterns)
        hit = pc.fill_null(pc.match_substring_regex(values, either), False)
        rows = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
        if len(self.patterns) == 1 or len(rows) == 0:
            return {kind: rows for kind in self.patterns}
        subset = values.take(pa.array(rows, pa.int64()))
        return {
            kind: rows[
                pc.fill_null(pc.match_substring_regex(subset, _PREFILTERS[kind]), False)
                .to_numpy(zero_copy_only=False)
                .astype(bool)
            ]
            for kind in self.patterns
        }

    def _scrub_batch(
        self, values: pa.Array, hits: Counter[str], weights: np.ndarray | None
    ) -> pa.Array:
        deny = self._deny_spans(values)
        candidates = self._candidates(values)
        rows: set[int] = set(deny)
        for found in candidates.values():
            rows.update(found.tolist())
        if not rows:
            return values
        ordered = sorted(rows)
        wanted = {kind: set(found.tolist()) for kind, found in candidates.items()}
        texts = values.take(pa.array(ordered, pa.int64())).to_pylist()
        changed_rows: list[int] = []
        changed_texts: list[str] = []
        for row, text in zip(ordered, texts, strict=True):
            if text is None:
                continue
            spans = list(deny.get(row, ()))
            for kind in self.patterns:
                if row in wanted[kind]:
                    placeholder = PLACEHOLDERS[kind]
                    spans.extend(
                        _Span(s, e, kind, placeholder) for s, e in _SPAN_FINDERS[kind](text)
                    )
            chosen = _resolve(spans)
            if not chosen:
                continue
            out = []
            cursor = 0
            for span in chosen:
                out.append(text[cursor : span.start])
                out.append(span.replacement)
                cursor = span.end
                hits[span.kind] += 1 if weights is None else int(weights[row])
            out.append(text[cursor:])
            new = "".join(out)
            if new != text:
                changed_rows.append(row)
                changed_texts.append(new)
        if not changed_rows:
            return values
        mask = np.zeros(len(values), dtype=bool)
        mask[changed_rows] = True
        return pc.replace_with_mask(values, pa.array(mask), pa.array(changed_texts, values.type))


def _continues(outside: str, inside: str) -> bool:
    """Whether the character beside a match continues its word: a letter or digit, unless
    either side is written without spaces (where words are not delimited)."""
    if not outside.isalnum():
        return False
    return not (_UNSEGMENTED_CHAR.match(outside) or _UNSEGMENTED_CHAR.match(inside))


def _batches(values: pa.Array) -> Iterator[tuple[int, int]]:
    """[start, end) row ranges of at most _BATCH_ROWS rows and about _BATCH_BYTES of text (a
    longer single text is a batch of its own): the joined batch stays far below Arrow's 2 GiB
    string limit and memory stays bounded on long documents."""
    sizes = pc.fill_null(pc.binary_length(values), 0).to_numpy(zero_copy_only=False)
    ends = np.cumsum(sizes.astype(np.int64) + 1)
    start, n = 0, len(values)
    while start < n:
        base = int(ends[start - 1]) if start else 0
        by_bytes = int(np.searchsorted(ends, base + _BATCH_BYTES, side="right"))
        end = min(n, start + _BATCH_ROWS, max(by_bytes, start + 1))
        yield start, end
        start = end


def _joined(values: pa.Array) -> str:
    """All texts of a batch as one Python string, NUL-separated (one C-level join)."""
    lists = pa.ListArray.from_arrays(pa.array([0, len(values)], pa.int32()), values)
    return str(pc.binary_join(lists, pa.scalar(_SEPARATOR, values.type))[0].as_py())


_PRIORITY = {kind: i for i, kind in enumerate(RECOGNIZERS)}


def _resolve(spans: list[_Span]) -> list[_Span]:
    """Non-overlapping spans, longest first, then leftmost, then by recognizer priority (the
    deny-list first); returned in text order."""
    if len(spans) <= 1:
        return spans
    spans.sort(key=lambda s: (s.start - s.end, s.start, _PRIORITY[s.kind]))
    chosen: list[_Span] = []
    for span in spans:
        if all(span.end <= c.start or span.start >= c.end for c in chosen):
            chosen.append(span)
    chosen.sort(key=lambda s: s.start)
    return chosen

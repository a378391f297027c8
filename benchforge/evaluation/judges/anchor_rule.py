"""Strict anchors: when a report states an anchor, and when it offers a competing value instead.

**Stating** (``states_anchor``). A written number (``numbers.find_numbers``) states a numeric
anchor when all of these agree:

- *value*, within the anchor's relative tolerance, after scale suffixes (``$18.3M`` states
  18,256,544 at 1%). A ``percent`` anchor compares in percent units: ``0.418 percent`` is 0.418%,
  never 41.8%, and a bare ``0.418`` is not a percent at all (an anchor whose value is a fraction,
  text ``14.0%`` for 0.14, is compared as 14);
- *unit*: ``percent`` needs a percent mark (``%``, "percent", "per cent", "pct"); a currency
  takes its own symbol or code or a bare number, never another currency or a percent or
  multiple mark; ``multiple`` takes ``x`` (or the multiplication sign), "times", a bare number
  or an amount ("$1.23 per dollar"), never a percent, points or a count noun;
  ``percentage_points`` takes "pp", "points" or a bare number, never ``%``; ``days`` and
  ``hours`` their own unit or a bare number; ``count`` and ``number`` a bare number or one
  followed by a count noun ("41.8 deals" states neither a percent nor a currency nor a
  multiple). In a Markdown table a bare cell takes the unit its column header (or, failing
  that, its row label) names: ``Share (%)``, ``Bookings (USD)``; a header that also names a
  scale ("wan CNY", "USD millions") leaves its cells bare;
- *sign or direction* by the anchor's kind: a ``level`` is stated with its sign as written and
  never by a number written as a change ("fell 4.2%"); a ``change`` reads direction words
  ("declined/fell/dropped by 41.8%" states -41.8, "rose/grew by 41.8%" +41.8, an unsigned
  number with no direction word is positive); a ``gap`` compares magnitudes ("0.41 lower").

Ordinals ("90th") and parts of dates ("31 December", ``2024-10-01``) state nothing. A text
anchor is stated by its text as a whole word, case-insensitive.

**Competing values** (``is_hedge``). A *competitor* is another number that could be the same
quantity: it passes the anchor's unit test (and, for a level, is not a change), lies within
[value/3, value*3] of the anchor, does not itself state the anchor, and does not state any
*other* anchor of the rubric (``others``: a known quantity never competes). Years, ordinals,
dates and list markers never compete. The stating line (a table row is a line) is a hedge
when

1. a hedge word ("either", "somewhere", "possibly", "perhaps", "maybe") stands within 40
   characters before the anchor, or the anchor is joined to any other number by "or" /
   "and/or" / "nor" or sits in "between X and Y" (known quantities included);
2. it holds two or more distinct competitors ("churn is 10%, 12%, 14% or 16%"; one is allowed:
   "rose from 12% to 14%", "14% (down from 15%)");
3. it holds a competitor and "or" stands between the two, or the line has hedge wording
   anywhere ("33.2%, or possibly 26.0%"; ``_SAME_LINE``: "possibly", "perhaps", "maybe",
   "alternatively", "alternative", "either", "otherwise", "depending", "arguably",
   "somewhere", "or so"). Weaker words ("instead", "might", "could") are left out: honest
   lines use them next to thresholds ("instead of the current budget ... the 50% line").

The rest of the report (``context``) is a hedge when

4. another line holds a competitor and definition wording (``_ELSEWHERE``: "alternatively",
   "if instead", "or rather", "another/alternative/different/stricter/broader definition|
   reading|estimate|method|calculation|basis|interpretation|formula"), or is a footnote (a
   line opening with ``[^1]:``, ``†``, ``‡``, ``§`` or a superscript digit) holding a
   competitor, or holds a competitor and an uncertainty word ("possibly", "perhaps", "maybe",
   "arguably", "depending on") while being about the same thing: it shares a content word
   with the stating line, or names nothing of its own ("Or possibly 26.0%."), so "Possibly
   80% of deals close in Q4" does not compete with "Win rate is 33.2%";
5. the anchor is stated in a table cell and another row of that table holds a competitor in
   the same column, and the table's rows do not name distinct things: the header of the label
   column or of that column, or either row's label, uses definition wording (``_CANDIDATE``:
   "definition", "method", "estimate", "scenario", "variant", "candidate", "option",
   "assumption", "approach", "calculation", "basis", "version", "counting", "including",
   "excluding", "weighted" ...), or the two rows name the same thing (their cells outside
   that column are the same once parenthesised qualifiers are dropped). A row holding the
   anchor and a competitor under column headers with definition wording ("Definition A",
   "Definition B") is a hedge too. A segment table (one row per region, channel or
   priority; one column per year) never competes.

So honest reports state each anchored figure once as a finding, compare it with at most one
figure on the same line, and give alternative definitions a rubric anchor of their own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from benchforge.evaluation.judges.models import AnchorValue
from benchforge.evaluation.judges.numbers import NumberMention, find_numbers

HEDGE_WINDOW = 3.0
"""A competing number lies within [value/3, value*3] of the anchor."""
HEDGE_NEAR_CHARS = 40

_CURRENCIES = frozenset({"usd", "eur", "gbp", "cny"})
_ACCEPTS: dict[str, frozenset[str | None]] = {
    "percent": frozenset({"percent"}),
    "percentage_points": frozenset({"percentage_points", "points", None}),
    "multiple": frozenset({"multiple", None, *_CURRENCIES}),
    "count": frozenset({None, "count"}),
    "number": frozenset({None, "count", "points"}),
    "days": frozenset({"days", None}),
    "hours": frozenset({"hours", None}),
    **{c: frozenset({c, None}) for c in _CURRENCIES},
}

_NEAR_BEFORE = re.compile(r"\b(?:either|somewhere|possibly|perhaps|maybe)\b", re.I)
_ALTERNATIVE_GAP = re.compile(r"^[\s,;:]*(?:or|and/or|nor)[\s,;:]*$", re.I)
_UNIT_CHARS = re.compile("^[\\s%$€£¥kKMBbnmx\u00d7]*")
_BETWEEN = re.compile(r"\b(?:between|from)\s*$", re.I)
_BETWEEN_GAP = re.compile("[\\s%$€£¥kKMBbnmx\u00d7]*\\b(?:and|or)\\b\\s*[$€£¥]?", re.I)
_OR = re.compile(r"\b(?:or|nor)\b", re.I)
_SAME_LINE = re.compile(
    r"\b(?:possibly|perhaps|maybe|alternatively|either|otherwise|depending|arguably|"
    r"somewhere|alternative|or\s+so|or\s+thereabouts)\b",
    re.I,
)
_ELSEWHERE = re.compile(
    r"\b(?:alternatively|if\s+instead|or\s+rather|(?:another|an?\s+alternative|alternative|"
    r"alternate|a\s+different|different|stricter|broader|narrower|looser|wider)\s+(?:\w+\s+)?"
    r"(?:definitions?|readings?|estimates?|methods?|methodolog(?:y|ies)|calculations?|basis|"
    r"bases|interpretations?|formulas?|formulae|denominators?|ways?\s+of\s+counting))\b",
    re.I,
)
_ELSEWHERE_ON_TOPIC = re.compile(
    r"\b(?:possibly|perhaps|maybe|arguably|conceivably|depending\s+on)\b", re.I
)
_STOP = frozenset(
    re.findall(
        r"\w+",
        "the a an and or of in on at to for by with from as is are was were be been it its this "
        "that these those than then there their our we they which who what when where while "
        "per all each every any some only just about over under into out up down also not no "
        "possibly perhaps maybe arguably conceivably depending alternatively",
    )
)
_CANDIDATE = re.compile(
    r"\b(?:definitions?|readings?|interpretations?|methods?|methodolog(?:y|ies)|estimates?|"
    r"scenarios?|variants?|candidates?|options?|assumptions?|approach(?:es)?|calculations?|"
    r"formulas?|formulae|basis|bases|versions?|alternatives?|counting|counted|computed|"
    r"measured|weighted|unweighted|excluding|including|incl|excl|possibly|perhaps|maybe|"
    r"alternatively|depending|if)\b",
    re.I,
)
_FOOTNOTE = re.compile(r"^\s*(?:\[\^[^\]]+\]:|[†‡§¹²³⁴⁵⁶⁷⁸⁹]|\^\d)")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_LIST_MARKER = re.compile(r"^\s*(\d+)[.)]\s")
_PARENS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_HEADER_SCALE = re.compile(r"\b(?:wan|thousands?|millions?|billions?|mn|bn|k|m|000s?)\b", re.I)
_HEADER_UNITS: list[tuple[str, re.Pattern[str]]] = [
    ("percent", re.compile(r"%|\bper\s?cent\b|\bpct\b", re.I)),
    ("percentage_points", re.compile(r"\bpp\b|\bpercentage points\b", re.I)),
    ("usd", re.compile(r"\bUSD\b|\$")),
    ("eur", re.compile(r"\bEUR\b|€")),
    ("gbp", re.compile(r"\bGBP\b|£")),
    ("cny", re.compile(r"\bCNY\b|\bRMB\b|¥|\byuan\b", re.I)),
    ("days", re.compile(r"\bdays\b", re.I)),
    ("hours", re.compile(r"\bhours\b", re.I)),
]


# --------------------------------------------------------------------------- one number


def _close(value: float, target: float, tolerance: float) -> bool:
    return math.isclose(value, target, rel_tol=tolerance, abs_tol=1e-9)


def _target(anchor: AnchorValue) -> float:
    """The anchor's value in the units a mention is read in (a percent in percent units)."""
    return _target_of(float(anchor.value), anchor.text, anchor.unit, anchor.tolerance)


@lru_cache(maxsize=1024)
def _target_of(value: float, text: str, unit: str, tolerance: float) -> float:
    if unit == "percent":
        written = find_numbers(text)
        if (
            written
            and not _close(written[0].value, value, tolerance)
            and _close(written[0].value, value * 100.0, tolerance)
        ):
            return value * 100.0
    return value


def _numeric(anchor: AnchorValue) -> bool:
    return not isinstance(anchor.value, str)


def _quantity(mention: NumberMention) -> bool:
    return not (mention.ordinal or mention.date)


def _unit_fits(mention: NumberMention, anchor: AnchorValue) -> bool:
    return mention.unit in _ACCEPTS.get(anchor.unit, frozenset())


def _value_fits(mention: NumberMention, anchor: AnchorValue) -> bool:
    target = _target(anchor)
    if anchor.kind == "change":
        signed = -abs(mention.value) if mention.direction < 0 else mention.value
        return _close(signed, target, anchor.tolerance)
    if anchor.kind == "gap":
        return _close(abs(mention.value), abs(target), anchor.tolerance)
    return mention.direction == 0 and _close(mention.value, target, anchor.tolerance)


def mention_states(mention: NumberMention, anchor: AnchorValue) -> bool:
    """One written number states the (numeric) anchor: value, unit and sign or direction."""
    return (
        _numeric(anchor)
        and _quantity(mention)
        and _unit_fits(mention, anchor)
        and _value_fits(mention, anchor)
    )


def _year(mention: NumberMention) -> bool:
    return (
        mention.unit is None
        and "," not in mention.raw
        and "." not in mention.raw
        and 1900 <= mention.value <= 2100
    )


def _competes(mention: NumberMention, anchor: AnchorValue, known: list[AnchorValue]) -> bool:
    """``mention`` could be the anchor's quantity with another value (see the module doc)."""
    if not _quantity(mention) or _year(mention) or not _unit_fits(mention, anchor):
        return False
    if anchor.kind == "level" and mention.direction != 0:
        return False
    if any(mention_states(mention, a) for a in known):
        return False
    target = abs(_target(anchor))
    return target > 0 and target / HEDGE_WINDOW <= abs(mention.value) <= target * HEDGE_WINDOW


# --------------------------------------------------------------------------- layout


def _squash(text: str) -> str:
    return " ".join(text.split())


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


def _cell_index(line: str, position: int) -> int:
    index = line[:position].count("|")
    return index - 1 if line.lstrip().startswith("|") else index


def _header_unit(text: str) -> str | None:
    """The unit a header names, for its bare cells; none when it also names a scale ("wan CNY",
    "USD millions"): such a cell is not in the anchor's units, so it stays bare."""
    if _HEADER_SCALE.search(text):
        return None
    for unit, pattern in _HEADER_UNITS:
        if pattern.search(text):
            return unit
    return None


@dataclass
class _Table:
    header: list[str]
    rows: list[int] = field(default_factory=list)


class _Layout:
    """The lines of a text, its Markdown tables, and each line's numbers (a bare table cell
    with the unit of its column header or row label; list markers dropped)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines() or [text]
        self.tables: dict[int, _Table] = {}
        i = 0
        while i + 1 < len(self.lines):
            line, nxt = self.lines[i], self.lines[i + 1]
            if "|" in line and _TABLE_SEPARATOR.match(nxt) and "-" in nxt:
                table = _Table(header=_cells(line))
                j = i + 2
                while j < len(self.lines) and "|" in self.lines[j] and self.lines[j].strip():
                    table.rows.append(j)
                    self.tables[j] = table
                    j += 1
                i = j
            else:
                i += 1
        self._mentions: dict[int, list[NumberMention]] = {}
        self._squashed = [_squash(line) for line in self.lines]

    def index_of(self, span: str) -> int | None:
        needle = _squash(span)
        if not needle:
            return None
        for i, line in enumerate(self._squashed):
            if needle in line:
                return i
        return None

    def label(self, i: int) -> str:
        cells = _cells(self.lines[i])
        return cells[0] if cells else ""

    def column(self, i: int, mention: NumberMention) -> int:
        return _cell_index(self.lines[i], mention.start)

    def header_cell(self, table: _Table, column: int) -> str:
        return table.header[column] if 0 <= column < len(table.header) else ""

    def mentions(self, i: int) -> list[NumberMention]:
        if i not in self._mentions:
            self._mentions[i] = self._read(i)
        return self._mentions[i]

    def _read(self, i: int) -> list[NumberMention]:
        line = self.lines[i]
        found = find_numbers(line)
        marker = _LIST_MARKER.match(line)
        if marker is not None:
            found = [m for m in found if m.start != marker.start(1)]
        table = self.tables.get(i)
        if table is None:
            return found
        out = []
        for m in found:
            column = _cell_index(line, m.start)
            if m.unit is None and column > 0:
                unit = _header_unit(self.header_cell(table, column)) or _header_unit(self.label(i))
                if unit is not None:
                    m = m._replace(unit=unit, percent=unit == "percent")
            out.append(m)
        return out


@lru_cache(maxsize=4)
def _layout(text: str) -> _Layout:
    """One layout per output: every anchor of a rubric reads the same report."""
    return _Layout(text)


def _span_mentions(span: str, context: str | None) -> list[NumberMention]:
    """The numbers of ``span``, with table units when ``span`` is found within a line of
    ``context`` (positions are then those of that line)."""
    if context:
        layout = _layout(context)
        stripped = span.strip()
        for i, line in enumerate(layout.lines):
            offset = line.find(stripped) if stripped else -1
            if offset >= 0:
                end = offset + len(stripped)
                return [m for m in layout.mentions(i) if offset <= m.start and m.end <= end]
    return find_numbers(span)


# --------------------------------------------------------------------------- the checks


def _text_anchor_spans(span: str, anchor: AnchorValue) -> list[tuple[int, int]]:
    needle = str(anchor.value).strip() or anchor.text.strip()
    if not needle:
        return []
    pattern = re.compile(rf"(?<!\w){re.escape(needle)}(?!\w)", re.I)
    return [(m.start(), m.end()) for m in pattern.finditer(span)]


def states_anchor(span: str, anchor: AnchorValue, *, context: str | None = None) -> bool:
    """``span`` states the anchor (see the module docstring): some number in it agrees in
    value, unit and sign or direction; a text anchor's text as a whole word. With
    ``context`` (the whole output), a bare table cell takes its column's unit."""
    if not _numeric(anchor):
        return bool(_text_anchor_spans(span, anchor))
    if not any(_quantity(m) and _value_fits(m, anchor) for m in find_numbers(span)):
        return False  # a table header changes units, never values: skip the layout
    return any(mention_states(m, anchor) for m in _span_mentions(span, context))


def _text_hedge(line: str, anchor: AnchorValue) -> bool:
    for start, end in _text_anchor_spans(line, anchor):
        near = line[max(0, start - HEDGE_NEAR_CHARS) : end + HEDGE_NEAR_CHARS]
        if re.search(r"\b(?:or|either|and/or)\b", near, re.I):
            return True
    return False


def _joined(line: str, m: NumberMention, other: NumberMention) -> bool:
    """``m`` and ``other`` are offered as alternatives: "14% or 16%", "between 12% and 14%"."""
    left, right = (other, m) if other.end <= m.start else (m, other)
    gap = line[left.end : right.start]
    if len(gap) > HEDGE_NEAR_CHARS:
        return False
    if _ALTERNATIVE_GAP.match(_UNIT_CHARS.sub("", gap)):
        return True
    return bool(
        _BETWEEN_GAP.fullmatch(gap) and _BETWEEN.search(line[max(0, left.start - 20) : left.start])
    )


def _line_hedge(
    line: str,
    mentions: list[NumberMention],
    m: NumberMention,
    competes: list[NumberMention],
    anchor: AnchorValue,
) -> bool:
    """Rules 1-3 of the module docstring, for one stating number ``m`` on its line."""
    if _NEAR_BEFORE.search(line[max(0, m.start - HEDGE_NEAR_CHARS) : m.start]):
        return True
    if any(_joined(line, m, o) for o in mentions if not mention_states(o, anchor)):
        return True
    if len({round(o.value, 9) for o in competes}) >= 2:
        return True
    for o in competes:
        left, right = (o, m) if o.end <= m.start else (m, o)
        if _OR.search(line[left.end : right.start]):
            return True
    return bool(competes) and bool(_SAME_LINE.search(line))


def _content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z-]+", text.lower())
    return {w.rstrip("s") for w in words if w not in _STOP}


def _on_topic(other: str, line: str) -> bool:
    """A hedged line is about the stating line's quantity: it shares a content word with it,
    or names nothing of its own ("Or possibly 26.0%.")."""
    own = _content_words(other)
    return not own or bool(own & _content_words(line))


def _row_key(layout: _Layout, row: int, columns: set[int]) -> list[str]:
    """What a row names: its cells outside ``columns``, parenthesised qualifiers dropped."""
    cells = _cells(layout.lines[row])
    return [
        " ".join(re.findall(r"\w+", _PARENS.sub(" ", c).lower()))
        for i, c in enumerate(cells)
        if i not in columns
    ]


def is_hedge(
    span: str,
    anchor: AnchorValue,
    *,
    context: str | None = None,
    others: Iterable[AnchorValue] = (),
) -> bool:
    """The report offers a competing value for the anchor ``span`` states (the rules of the
    module docstring). ``context``: the whole output (without it only ``span``'s own line is
    read); ``others``: the rubric's other anchors, known quantities that never compete."""
    layout = _layout(context) if context else _Layout(span)
    index = layout.index_of(span)
    line = layout.lines[index] if index is not None else _squash(span)
    if not _numeric(anchor):
        return _text_hedge(line, anchor)
    known = [anchor, *(a for a in others if _numeric(a))]
    mentions = layout.mentions(index) if index is not None else find_numbers(line)
    matching = [m for m in mentions if mention_states(m, anchor)]
    if not matching:
        return False
    competes = [o for o in mentions if _competes(o, anchor, known)]
    if any(_line_hedge(line, mentions, m, competes, anchor) for m in matching):
        return True
    table = layout.tables.get(index) if index is not None else None
    if table is not None and index is not None and competes:
        # A row offering the value under several column headers: "| Definition A | B |".
        headers = {layout.column(index, m) for m in matching}
        headers |= {layout.column(index, o) for o in competes}
        if any(_CANDIDATE.search(layout.header_cell(table, c)) for c in headers):
            return True
    for j, other in enumerate(layout.lines):
        if j == index:
            continue
        rivals = [o for o in layout.mentions(j) if _competes(o, anchor, known)]
        if not rivals:
            continue
        own_table = layout.tables.get(j)
        header = " | ".join(own_table.header) if own_table is not None else ""
        if _ELSEWHERE.search(other) or _ELSEWHERE.search(header) or _FOOTNOTE.match(other):
            return True
        if _ELSEWHERE_ON_TOPIC.search(other) and _on_topic(other, line):
            return True
        if index is not None and table is not None and own_table is table:
            columns = {layout.column(index, m) for m in matching}
            same_column = [o for o in rivals if layout.column(j, o) in columns]
            if same_column and _candidate_rows(layout, table, index, j, columns):
                return True
    return False


def _candidate_rows(
    layout: _Layout, table: _Table, row: int, other: int, columns: set[int]
) -> bool:
    """Rows ``row`` and ``other`` of ``table`` give values for the same thing (rule 5)."""
    words = [layout.header_cell(table, 0), layout.label(row), layout.label(other)]
    words += [layout.header_cell(table, c) for c in columns]
    if any(_CANDIDATE.search(w) for w in words):
        return True
    return _row_key(layout, row, columns) == _row_key(layout, other, columns)

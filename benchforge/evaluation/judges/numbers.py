"""Numbers as a report writes them: the value (thousands separators, ``k``/``M``/``bn`` and word
suffixes applied), and what is written around it that says what it measures.

- ``unit``: ``percent`` (``%``, "percent", "per cent", "pct"), ``percentage_points`` ("pp",
  "percentage points"), ``points`` ("points", "pts"), a currency (``usd``: ``$``, "USD",
  "dollars"; ``eur``: ``€``, "EUR", "euros"; ``gbp``: ``£``, "GBP", "pounds"; ``cny``: ``¥``,
  "CNY", "RMB", "yuan"), ``multiple`` (``1.23x``, the multiplication sign, "1.23 times"),
  ``days``, ``hours``, ``time`` (weeks, months, years, minutes), ``count`` (a count noun right
  after it: "41.8 deals", "12 companies"), ``mixed`` (a currency and a percent at once); None
  when bare.
- ``direction``: -1 or +1 when the number is written as a change ("fell 4.2%", "declined by
  4.2%", "a 4.2% drop", "up 4.2%", "rose by 4.2%", "an increase of 4.2%"); 0 otherwise ("rose
  to 14%" and "down from 15%" are levels).
- ``ordinal`` ("90th") and ``date`` (a part of ``2024-10-01`` or ``31 December``): not
  quantities.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

_SUFFIX = {
    "k": 1e3,
    "K": 1e3,
    "thousand": 1e3,
    "M": 1e6,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "B": 1e9,
    "bn": 1e9,
    "billion": 1e9,
}
_NUMBER = re.compile(
    r"(?P<neg>(?<![\w.,])[-\u2212])?"
    r"(?P<cur>[$€£¥])?"
    r"(?<![\w.])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w,]*\d)"
    r"(?:(?P<pct>\s?%)|(?P<suf>k|K|M|B|bn|mn|m)(?![A-Za-z])"
    r"|\s(?P<word>thousand|million|billion)\b)?"
)
_CURRENCY_SYMBOL = {"$": "usd", "€": "eur", "£": "gbp", "¥": "cny"}
_CODE_BEFORE = re.compile(r"\b(?P<code>USD|EUR|GBP|CNY|RMB)\s?$")
_CODES = {"USD": "usd", "EUR": "eur", "GBP": "gbp", "CNY": "cny", "RMB": "cny"}
_AFTER: list[tuple[str, re.Pattern[str]]] = [
    ("percent", re.compile(r"\s*(?:percent|per[\s-]cent|pct)\b", re.I)),
    ("percentage_points", re.compile(r"\s*(?:percentage[\s-]points?|pp|p\.p\.|ppts?)(?!\w)", re.I)),
    ("points", re.compile(r"\s*(?:points?|pts?)\b", re.I)),
    ("usd", re.compile(r"\s*(?:USD\b|US\s?dollars?\b|dollars?\b)", re.I)),
    ("eur", re.compile(r"\s*(?:EUR\b|euros?\b)", re.I)),
    ("gbp", re.compile(r"\s*(?:GBP\b|pounds?\b|sterling\b)", re.I)),
    ("cny", re.compile(r"\s*(?:CNY\b|RMB\b|yuan\b|renminbi\b)", re.I)),
    ("multiple", re.compile("(?:\\s?[x\u00d7](?![A-Za-z0-9])|\\s+times\\b)", re.I)),
    ("days", re.compile(r"(?:\s*days?\b|d\b)", re.I)),
    ("hours", re.compile(r"(?:\s*(?:hours?|hrs?)\b|h\b)", re.I)),
    ("time", re.compile(r"\s*(?:weeks?|months?|years?|minutes?|mins?|seconds?|quarters?)\b", re.I)),
    (
        "count",
        re.compile(
            r"\s+(?:deals?|accounts?|customers?|clients?|companies|company|firms?|businesses|"
            r"cases?|tickets?|campaigns?|contracts?|opportunities|opportunity|leads?|events?|"
            r"conversions?|clicks?|impressions?|people|persons?|employees?|staff|users?|"
            r"orders?|units?|items?|records?|rows?|filings?|policies|policy|documents?|"
            r"advertisers?|ads?|transactions?|sales|wins?|losses|industries|industry|"
            r"provinces?|regions?|countries|country|products?|visits?|sessions?)\b",
            re.I,
        ),
    ),
]
_ORDINAL = re.compile(r"(?:st|nd|rd|th)\b", re.I)
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DATE_AFTER = re.compile(rf"^(?:-\d{{1,2}}\b|\s+{_MONTH}\b)", re.I)
_DATE_BEFORE = re.compile(rf"(?:\d{{4}}-(?:\d{{1,2}}-)?|\b{_MONTH}\.?\s+)$", re.I)
_APPROX = (
    r"(?:\s+(?:about|around|roughly|approximately|almost|nearly|some|just|only|over|under|a|an|"
    r"another|a\s+further))*"
)
_DIRECTION_BEFORE = re.compile(
    r"\b(?:(?P<up>rose|rises?|risen|rising|grew|grows?|grown|growing|increased?|increases|"
    r"increasing|climbed|climbs?|jumped|jumps?|up|(?:higher|gained|expanded|improved)\s+by)"
    r"|(?P<down>fell|falls?|fallen|falling|dropped|drops?|dropping|declined?|declines|declining|"
    r"decreased?|decreases|decreasing|shrank|shrinks?|shrunk|slipped|slips?|slid|down|"
    r"(?:lower|contracted|reduced|cut)\s+by))"
    rf"(?:\s+by)?{_APPROX}\s*[-\u2212+]?[$€£¥]?$",
    re.I,
)
_DIRECTION_NOUN_BEFORE = re.compile(
    r"\b(?:(?P<up>increase|rise|growth|gain|jump|uplift)|"
    r"(?P<down>decrease|decline|drop|fall|reduction|contraction|shortfall))\s+of"
    rf"{_APPROX}\s*[-\u2212+]?[$€£¥]?$",
    re.I,
)
_DIRECTION_AFTER = re.compile(
    r"^\s*(?:(?P<up>increase|rise|growth|gain|jump|uplift|higher|more)|"
    r"(?P<down>decrease|decline|drop|fall|reduction|contraction|lower|less|fewer))\b",
    re.I,
)
_DIRECTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        "rose rise rises risen rising grew grow grows grown growing increase increased "
        "increases increasing climbed climb climbs jumped jump jumps up higher gained expanded "
        "improved fell fall falls fallen falling dropped drop drops dropping declined decline "
        "declines declining decreased decrease decreases decreasing shrank shrink shrinks "
        "shrunk slipped slip slips slid down lower contracted reduced cut growth gain uplift "
        "reduction contraction shortfall",
    )
)
_PHRASAL_VERBS = frozenset(
    re.findall(
        r"\w+",
        "make makes made making add adds added adding sum sums summed end ends ended set sets "
        "show shows showed shown turn turns turned take takes took taken break breaks broke "
        "broken pick picks picked bring brings brought",
    )
)
_LOOK = 40  # characters read on each side of a number for its unit and direction


class NumberMention(NamedTuple):
    """One number as written: its value (suffixes applied; a percent stays in percent units),
    whether it was a percent, where it sits in the text, and (see the module docstring) its
    written unit, direction, and whether it is an ordinal or part of a date."""

    value: float
    percent: bool
    start: int
    end: int
    raw: str
    unit: str | None = None
    direction: int = 0
    ordinal: bool = False
    date: bool = False


def find_numbers(text: str, *, paren_negative: bool = False) -> list[NumberMention]:
    """Every number written in ``text``: ``1,204``, ``-3.5``, ``12.4%``, ``$1.2M``, ``€3bn``,
    ``4 million``. ``paren_negative``: ``(1,204)`` reads as -1204 (accounting style). Digits
    glued to letters (``Q3``, ``H2O``, ``v2``) are not numbers."""
    return list(_find_numbers(text, paren_negative))


@lru_cache(maxsize=4096)
def _find_numbers(text: str, paren_negative: bool) -> tuple[NumberMention, ...]:
    # Cached: every anchor of a rubric reads the same lines of the same report.
    found: list[NumberMention] = []
    for match in _NUMBER.finditer(text):
        raw_num = match.group("num")
        value = float(raw_num.replace(",", ""))
        suffix = match.group("suf") or match.group("word")
        if suffix:
            value *= _SUFFIX[suffix]
        negative = bool(match.group("neg"))
        start, end = match.start(), match.end()
        if paren_negative and text[start - 1 : start] == "(" and text[end : end + 1] == ")":
            negative = True
        before, after = text[max(0, start - _LOOK) : start], text[end : end + _LOOK]
        unit = _unit(match, before, after)
        found.append(
            NumberMention(
                value=-value if negative else value,
                percent=unit == "percent",
                start=start,
                end=end,
                raw=match.group(0),
                unit=unit,
                direction=_direction(before, after),
                ordinal=not suffix and bool(_ORDINAL.match(after)),
                date=not suffix
                and unit is None
                and bool(_DATE_AFTER.match(after) or _DATE_BEFORE.search(before[-12:])),
            )
        )
    return tuple(found)


def _unit(match: re.Match[str], before: str, after: str) -> str | None:
    currency = _CURRENCY_SYMBOL.get(match.group("cur") or "")
    if currency is None:
        code = _CODE_BEFORE.search(before[-5:])
        if code is not None:
            currency = _CODES[code.group("code")]
    percent = bool(match.group("pct"))
    written: str | None = None
    if not percent:
        for unit, pattern in _AFTER:
            if pattern.match(after):
                written = unit
                break
    if written == "percent":
        percent = True
    if percent:
        return "mixed" if currency else "percent"
    if currency is not None:
        if written in {"usd", "eur", "gbp", "cny"} and written != currency:
            return "mixed"
        return currency if written in {None, "usd", "eur", "gbp", "cny", "count"} else "mixed"
    return written


def _direction(before: str, after: str) -> int:
    words = {w.lower() for w in before.split()[-6:]}
    if not words.isdisjoint(_DIRECTION_WORDS):  # the regexes only where they can match
        for pattern in (_DIRECTION_BEFORE, _DIRECTION_NOUN_BEFORE):
            found = pattern.search(before)
            if found is not None and not _phrasal(before, found):
                return 1 if found.group("up") else -1
    found = _DIRECTION_AFTER.match(after)
    if found is not None:
        return 1 if found.group("up") else -1
    return 0


def _phrasal(before: str, found: re.Match[str]) -> bool:
    """ "made up 60.1%", "adds up to", "broke down": "up"/"down" after such a verb is no
    direction."""
    word = found.group(0).split()[0].lower()
    previous = before[: found.start()].split()[-1:]
    return word in {"up", "down"} and bool(previous) and previous[0].lower() in _PHRASAL_VERBS


def extract_numbers(text: str, *, paren_negative: bool = False) -> list[float]:
    """The values of ``find_numbers`` (percents in percent units: ``12.4%`` is 12.4)."""
    return [m.value for m in find_numbers(text, paren_negative=paren_negative)]


def normalize_number(token: str) -> float | None:
    """One written number (``"$1.2M"``, ``"12.4%"``, ``"1,204"``, ``"-3.5"``) as a float, or None
    when ``token`` is not exactly one number."""
    token = token.strip()
    mentions = find_numbers(token)
    if len(mentions) == 1 and mentions[0].start == 0 and mentions[0].end == len(token):
        return mentions[0].value
    return None

"""THE FAITHFUL MOCK JUDGE RULE in plain Python: what the mock server's ``mock-judge`` policy
awards, computed offline, to check authored reports without a server.

Rubric: a report is split into text units (``evidence.text_units``); a criterion's keywords are
its lowercase words of 4+ letters minus stop words and minus its anchor's text; a keyword
matches a unit holding a word that starts with the keyword's first 5 letters. A positive item
earns its points iff its best unit covers >= 30% of the keywords and, for an anchored item,
that unit states the anchor (within tolerance, not as a hedge); a penalty applies when its best
unit covers >= 60%. Per standard the best-earning path counts.

:func:`rubric_check` judges every item twice, with a short stop list and the mock's own (a
longer one), so a reference only passes with a margin that does not hang on the exact stop
words: it must earn an item under both lists, trigger a penalty under neither, and every unit
tied for best must state the item's anchor (whichever one a judge quotes).

GSB: readability = min(headings, 6) + min(list items, 10) / 2 + 2 * has a table; depth =
min(distinct numbers, 30) / 3 + min(sentences with a causal word, 10); the candidate is "good"
on a dimension when 2 * (its feature - the baseline's) > 3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchforge.agents.mock_llm.judge_policies import STOP_WORDS as MOCK_STOP_WORDS
from benchforge.evaluation.judges.evidence import (
    copies_rubric,
    find_numbers,
    is_hedge,
    states_anchor,
    text_units,
)
from benchforge.evaluation.judges.models import ResolvedItem, ResolvedRubric

POSITIVE_COVERAGE = 0.30
PENALTY_COVERAGE = 0.60
_SHORT_TEXT = """
    that this with from they them than then when what which their there these those have
    been were will would should could into onto also such each other only more most
    """
STOP_SHORT = frozenset(_SHORT_TEXT.split())
STOP_LONG = STOP_SHORT | MOCK_STOP_WORDS  # the mock judge's own list
CAUSAL = re.compile(r"\b(because|driven|due to|recommend|suggest|therefore|indicates)\b", re.I)
_WORD = re.compile(r"[a-z]+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def keywords(criterion: str, anchor_text: str = "", stop: frozenset[str] = STOP_SHORT) -> set[str]:
    own = set(_WORD.findall(anchor_text.lower()))
    return {w for w in re.findall(r"[a-z]{4,}", criterion.lower()) if w not in stop | own}


def coverage(unit: str, keys: set[str]) -> float:
    if not keys:
        return 0.0
    words = _WORD.findall(unit.lower())
    hits = sum(1 for k in keys if any(w.startswith(k[:5]) for w in words))
    return hits / len(keys)


@dataclass
class ItemCheck:
    item: ResolvedItem
    coverage: float  # the lower (positive items) or higher (penalties) of both stop lists
    best_unit: str
    earned: float
    problems: list[str] = field(default_factory=list)


def _best(units: list[str], item: ResolvedItem, stop: frozenset[str]) -> tuple[float, list[str]]:
    anchor_text = item.anchor.text if item.anchor else ""
    keys = keywords(item.criterion, anchor_text, stop)
    scored = [(coverage(u, keys), u) for u in units]
    top = max((c for c, _ in scored), default=0.0)
    return top, [u for c, u in scored if c == top]


def check_item(report: str, item: ResolvedItem, rubric_texts: list[str]) -> ItemCheck:
    """The item under both stop lists; ``earned`` only when both agree it is earned (positive)
    and when either says the penalty applies (negative)."""
    units = text_units(report)
    results = [_best(units, item, stop) for stop in (STOP_SHORT, STOP_LONG)]
    if item.points < 0:
        cov = max(c for c, _ in results)
        unit = results[0][1][0] if results[0][1] else ""
        applies = cov >= PENALTY_COVERAGE
        return ItemCheck(item, cov, unit, item.points if applies else 0.0)
    cov = min(c for c, _ in results)
    problems: list[str] = []
    best_units = [u for _, tied in results for u in tied]
    if cov < POSITIVE_COVERAGE:
        problems.append(f"coverage {cov:.2f} < {POSITIVE_COVERAGE}")
    if item.anchor is not None:
        # Ties: whichever best unit the mock quotes must state the anchor.
        for unit in best_units:
            if not states_anchor(unit, item.anchor):
                problems.append(f"best unit does not state {item.anchor.text}: {unit[:90]!r}")
            elif is_hedge(unit, item.anchor, context=report):
                problems.append(f"best unit hedges {item.anchor.text}: {unit[:90]!r}")
    for unit in best_units:
        if copies_rubric(unit, rubric_texts):
            problems.append(f"best unit copies the rubric: {unit[:90]!r}")
    earned = item.points if not problems else 0.0
    return ItemCheck(item, cov, best_units[0] if best_units else "", earned, problems)


@dataclass
class RubricCheck:
    score: float  # 0..1
    items: dict[str, ItemCheck]
    paths: dict[str, str]  # standard id -> the path counted

    def earned(self, item_id: str) -> float:
        check = self.items[item_id]
        return check.earned if self.paths[check.item.standard_id] == check.item.path_id else 0.0


def rubric_texts(rubric: ResolvedRubric) -> list[str]:
    texts = [i.criterion for i in rubric.items]
    for requirement in rubric.requirements:
        texts.append(requirement.title)
        for standard in requirement.standards:
            texts.append(standard.title)
            texts += [p.approach for p in standard.paths]
    return texts


def rubric_check(report: str, rubric: ResolvedRubric) -> RubricCheck:
    texts = rubric_texts(rubric)
    items = {i.id: check_item(report, i, texts) for i in rubric.items}
    paths: dict[str, str] = {}
    total = 0.0
    maximum = 0.0
    for requirement in rubric.requirements:
        for standard in requirement.standards:
            maximum += standard.max_points
            by_path = {p.id: sum(items[i.id].earned for i in p.items) for p in standard.paths}
            best = max(by_path, key=lambda pid: by_path[pid])  # first on ties
            paths[standard.id] = best
            total += min(max(by_path[best], 0.0), standard.max_points)
    return RubricCheck(score=total / maximum if maximum else 0.0, items=items, paths=paths)


# --------------------------------------------------------------------------- GSB features


def readability(report: str) -> float:
    lines = report.splitlines()
    headings = sum(1 for line in lines if _HEADING.match(line))
    items = sum(1 for line in lines if _LIST_ITEM.match(line))
    table = any(_TABLE_RULE.match(line) for line in lines)
    return min(headings, 6) + min(items, 10) / 2 + 2 * table


def depth(report: str) -> float:
    numbers = {round(m.value, 9) for m in find_numbers(report)}
    causal = sum(1 for s in _SENTENCES.split(report) if CAUSAL.search(s))
    return min(len(numbers), 30) / 3 + min(causal, 10)


def gsb_verdict(candidate: float, other: float) -> str:
    raw = max(-10.0, min(10.0, 2 * (candidate - other)))
    return "good" if raw > 3 else "bad" if raw < -3 else "same"

"""THE FAITHFUL MOCK JUDGE RULE, re-implemented here so the shipped ``da_open`` tasks can be
checked without a server: a reference report must earn >= 90% of its rubric, an empty report
nothing, and every baseline must lose the Good-Same-Bad comparison on both dimensions.

Why a copy and not the mock's own code: the rule is the *contract* between the mock judge, the
judge prompts and the authored reports; checking the reports against the written rule (not
against one implementation of it) catches an author who leans on an implementation detail.
Two points of the rule are not pinned down by its wording, so this module checks the stricter
reading of each:

- the stop-word list: keywords are computed three times, with a minimal list of function
  words (more keywords, so positive items are harder to earn), with an extended list that also
  drops rubric verbs such as "states" or "reports" (fewer keywords, so penalty items are
  easier to trigger), and with the mock server's own list; a report must pass under all three;
- ties: when several units share the best coverage, every one of them must state the anchor
  (a judge may quote any of them) and none may be a hedge.

A standard is judged on one path, the one earning the most points (ties: the first listed), as
the mock judge chooses it; ``RubricResult.lost_against`` compares two reports the way
``benchforge task verify`` does (an item outside the chosen path earned nothing).

Evidence and numbers use the harness's own helpers (``benchforge.evaluation.judges.evidence``):
units, the 8-word copy rule, anchor matching and hedges are the harness's, not re-invented.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from benchforge.agents.mock_llm.judge_policies import STOP_WORDS as MOCK_STOP_WORDS
from benchforge.evaluation.judges.evidence import (
    copies_rubric,
    extract_numbers,
    is_hedge,
    states_anchor,
    text_units,
)
from benchforge.evaluation.judges.models import AnchorValue, HierarchicalRubric, RubricItemSpec
from benchforge.evaluation.judges.sanitize import sanitize_output

POSITIVE_COVERAGE = 0.30
PENALTY_COVERAGE = 0.60
PREFIX = 5


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


MINIMAL_STOP_WORDS = _word_set(
    """
    about above after again against also among because been before being below between both
    could does doing down during each either else even every from further have having here
    hers herself himself into itself just many might more most much must neither none only
    onto other others ours ourselves over same shall should some such than that their theirs
    them themselves then there these they this those through thus under until upon very were
    what when where whether which while whom whose will with within without would your yours
    """
)
EXTENDED_STOP_WORDS = MINIMAL_STOP_WORDS | _word_set(
    """
    report reports reported states state stated gives give given mentions mention mentioned
    identifies identify identified explains explain explained notes note noted uses using used
    provides provide includes include including describes describe described shows show
    shown quantifies quantify names name discusses discuss presents present least clearly
    correctly explicitly analysis analyst output
    """
)
STOP_LISTS: dict[str, frozenset[str]] = {
    "minimal": MINIMAL_STOP_WORDS,
    "extended": EXTENDED_STOP_WORDS,
    "mock": MOCK_STOP_WORDS,
}

_KEYWORD = re.compile(r"[a-z]{4,}")
_WORD = re.compile(r"[a-z]+")


def keywords(
    criterion: str, anchor_text: str = "", stop: frozenset[str] = MINIMAL_STOP_WORDS
) -> list[str]:
    """Lowercase words of >= 4 letters of ``criterion`` minus stop words and minus the words of
    the anchor's own text, in order, each once."""
    drop = set(stop) | set(_KEYWORD.findall(anchor_text.lower()))
    out: list[str] = []
    for word in _KEYWORD.findall(criterion.lower()):
        if word not in drop and word not in out:
            out.append(word)
    return out


def _matches(keyword: str, words: Iterable[str]) -> bool:
    stem = keyword[:PREFIX]
    return any(w.startswith(stem) for w in words)


def coverage(unit: str, kws: list[str]) -> float:
    """Matched keywords / keywords (0 when the criterion has none)."""
    if not kws:
        return 0.0
    words = set(_WORD.findall(unit.lower()))
    return sum(_matches(k, words) for k in kws) / len(kws)


@dataclass(frozen=True)
class ItemResult:
    item_id: str
    points: float
    earned: float
    coverage: float
    evidence: str | None
    reason: str


@dataclass(frozen=True)
class RubricResult:
    """``score``: earned / max over standards (each standard: its best path, clipped to
    [0, max_points])."""

    score: float
    earned: float
    max_points: float
    items: dict[str, ItemResult]
    standards: dict[str, tuple[str, float]]

    def lost(self) -> list[str]:
        """Ids of the positive items of the chosen paths that earned nothing, and of the
        penalties applied (items are keyed ``<item id>@<path id>``)."""
        chosen = {path for path, _ in self.standards.values()}
        return sorted(
            result.item_id
            for key, result in self.items.items()
            if key.split("@", 1)[1] in chosen
            and ((result.points > 0 and result.earned == 0) or result.earned < 0)
        )

    def earned_in_chosen(self) -> dict[str, float]:
        """Item id -> points earned, for the items of the chosen paths only (what a judge that
        scores one path per standard reports)."""
        chosen = {path for path, _ in self.standards.values()}
        return {
            r.item_id: r.earned for key, r in self.items.items() if key.split("@", 1)[1] in chosen
        }

    def lost_against(self, wrong: RubricResult) -> list[str]:
        """The harness's verification semantics: items of this result's chosen paths that
        earned points here and fewer in ``wrong`` (an item outside ``wrong``'s chosen paths
        earned nothing there)."""
        mine, theirs = self.earned_in_chosen(), wrong.earned_in_chosen()
        return sorted(i for i, e in mine.items() if e > 0 and theirs.get(i, 0.0) < e - 1e-9)

    def anchored_in_chosen(self, rubric: HierarchicalRubric) -> list[str]:
        """Anchored positive items of this result's chosen paths (what a wrong-number report
        must lose, and only those)."""
        chosen = {path for path, _ in self.standards.values()}
        return sorted(
            i.id
            for s in rubric.standards()
            for p in s.paths
            if p.id in chosen
            for i in p.items
            if i.anchor is not None and i.points > 0
        )

    def reasons(self, item_ids: Iterable[str]) -> list[str]:
        wanted = set(item_ids)
        chosen = {path for path, _ in self.standards.values()}
        return [
            f"{r.item_id} ({r.reason})"
            for key, r in self.items.items()
            if r.item_id in wanted and key.split("@", 1)[1] in chosen
        ]


def judge_item(
    item: RubricItemSpec,
    criterion: str,
    units: list[str],
    anchor: AnchorValue | None,
    stop: frozenset[str],
    context: str,
) -> ItemResult:
    """One item under the faithful rule (strict on ties, see the module docstring)."""
    kws = keywords(criterion, anchor.text if anchor else "", stop)
    scored = [(coverage(u, kws), u) for u in units]
    best = max((c for c, _ in scored), default=0.0)
    top = [u for c, u in scored if c == best]
    if item.points < 0:
        applied = best >= PENALTY_COVERAGE
        return ItemResult(
            item.id,
            item.points,
            item.points if applied else 0.0,
            best,
            top[0] if applied else None,
            "penalty applied" if applied else "penalty not triggered",
        )
    if best < POSITIVE_COVERAGE:
        return ItemResult(item.id, item.points, 0.0, best, None, f"best coverage {best:.2f}")
    if anchor is not None:
        for unit in top:
            if not states_anchor(unit, anchor):
                return ItemResult(
                    item.id,
                    item.points,
                    0.0,
                    best,
                    None,
                    f"best unit does not state {anchor.text}: {unit[:80]!r}",
                )
            if is_hedge(unit, anchor, context=context):
                return ItemResult(item.id, item.points, 0.0, best, None, f"hedge: {unit[:80]!r}")
    return ItemResult(item.id, item.points, item.points, best, top[0], "awarded")


def score_rubric(
    rubric: HierarchicalRubric,
    anchors: Mapping[str, AnchorValue],
    report: str,
    stop: frozenset[str] = MINIMAL_STOP_WORDS,
    claims: Mapping[str, str] | None = None,
) -> RubricResult:
    """The whole rubric on ``report`` (a rendered report: anchors already substituted);
    ``claims``: the words of the claims rubric texts may cite."""
    text = sanitize_output(report).text
    units = text_units(text)
    items: dict[str, ItemResult] = {}
    standards: dict[str, tuple[str, float]] = {}
    earned_total = 0.0
    for standard in rubric.standards():
        best_path, best_earned = standard.paths[0].id, float("-inf")
        for path in standard.paths:
            earned = 0.0
            for item in path.items:
                anchor = _anchor_of(item, anchors)
                result = judge_item(
                    item, render(item.criterion, anchors, claims), units, anchor, stop, text
                )
                items[f"{item.id}@{path.id}"] = result
                earned += result.earned
            if earned > best_earned:
                best_path, best_earned = path.id, earned
        clipped = min(max(best_earned, 0.0), standard.max_points)
        standards[standard.id] = (best_path, clipped)
        earned_total += clipped
    max_points = rubric.max_points
    return RubricResult(earned_total / max_points, earned_total, max_points, items, standards)


def _anchor_of(item: RubricItemSpec, anchors: Mapping[str, AnchorValue]) -> AnchorValue | None:
    if item.anchor is None:
        return None
    anchor = anchors[item.anchor]
    if item.tolerance is not None:
        return anchor.model_copy(update={"tolerance": item.tolerance})
    return anchor


_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def render(
    template: str, anchors: Mapping[str, AnchorValue], claims: Mapping[str, str] | None = None
) -> str:
    """``{{name}}`` replaced by the anchor's text or the claim's words (a KeyError names an
    undefined one)."""
    texts = {**(claims or {}), **{name: anchor.text for name, anchor in anchors.items()}}
    return _PLACEHOLDER.sub(lambda m: texts[m.group(1)], template)


def placeholders(template: str) -> set[str]:
    return set(_PLACEHOLDER.findall(template))


def copied_runs(
    template: str,
    rubric_texts: Iterable[str],
    anchors: Mapping[str, AnchorValue],
    claims: Mapping[str, str] | None = None,
) -> list[str]:
    """Units of the rendered ``template`` that repeat 8+ consecutive words of a rendered rubric
    text (the harness rejects them as evidence). Both sides are rendered with ``anchors``
    because a number is one or more words: "61.7%" is two."""
    texts = [render(t, anchors, claims) for t in rubric_texts]
    report = sanitize_output(render(template, anchors, claims)).text
    return [u for u in text_units(report) if copies_rubric(u, texts)]


# --------------------------------------------------------------------------- GSB features

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_CAUSAL = re.compile(r"\b(?:because|driven|due to|recommend|suggest|therefore|indicates)", re.I)


@dataclass(frozen=True)
class GsbFeatures:
    headings: int
    list_items: int
    has_table: bool
    distinct_numbers: int
    causal_sentences: int

    @property
    def readability(self) -> float:
        return min(self.headings, 6) + min(self.list_items, 10) / 2 + 2 * self.has_table

    @property
    def depth(self) -> float:
        return min(self.distinct_numbers, 30) / 3 + min(self.causal_sentences, 10)


def gsb_features(report: str) -> GsbFeatures:
    text = sanitize_output(report).text
    lines = text.splitlines()
    has_table = any(_TABLE_RULE.match(line) for line in lines) and any(
        _TABLE_ROW.match(line) for line in lines
    )
    sentences = [s for s in _SENTENCE_SPLIT.split(text) if s.strip()]
    return GsbFeatures(
        headings=sum(bool(_HEADING.match(line)) for line in lines),
        list_items=sum(bool(_LIST_ITEM.match(line)) for line in lines),
        has_table=has_table,
        distinct_numbers=len({round(v, 9) for v in extract_numbers(text)}),
        causal_sentences=sum(bool(_CAUSAL.search(s)) for s in sentences),
    )


def gsb_raw(candidate: float, other: float) -> float:
    """The candidate's raw score on one dimension: clip(2 * (candidate - other), -10, 10)."""
    return max(-10.0, min(10.0, 2.0 * (candidate - other)))


def gsb_verdict(raw: float) -> str:
    return "good" if raw > 3 else "bad" if raw < -3 else "same"

"""From a judge's award to an item verdict: the code checks every awarded point must pass, and
the small plumbing the judges share (validating a reply's items).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from benchforge.evaluation.judges.evidence import (
    anchor_in_output,
    copies_rubric,
    is_hedge,
    quote_found,
    states_anchor,
)
from benchforge.evaluation.judges.models import AnchorValue, ItemType, ItemVerdict
from benchforge.evaluation.judges.replies import ItemAward, ItemsReply
from benchforge.evaluation.judges.sanitize import REMOVED_MARKER


def items_reply_check(points: dict[str, float]) -> Callable[[ItemsReply], None]:
    """A ``check`` for ``ask_json``: one entry per requested item id, awards within range."""

    def check(reply: ItemsReply) -> None:
        ids = [a.item_id for a in reply.items]
        problems: list[str] = []
        missing = [i for i in points if i not in ids]
        unknown = sorted({i for i in ids if i not in points})
        duplicated = sorted({i for i in ids if ids.count(i) > 1})
        if missing:
            problems.append(f"no entry for item(s) {', '.join(missing)}")
        if unknown:
            problems.append(f"item(s) {', '.join(unknown)} were not asked for")
        if duplicated:
            problems.append(f"item(s) {', '.join(duplicated)} appear more than once")
        for award in reply.items:
            limit = points.get(award.item_id)
            if limit is None:
                continue
            low, high = min(0.0, limit), max(0.0, limit)
            if not low <= award.awarded <= high:
                problems.append(
                    f"item {award.item_id}: awarded {award.awarded:g} is outside "
                    f"[{low:g}, {high:g}]"
                )
        if problems:
            raise ValueError("; ".join(problems))

    return check


def unscored_verdict(
    *,
    item_id: str,
    points: float,
    reason: str,
    standard_id: str | None = None,
    path_id: str | None = None,
    type: ItemType | None = None,
    dimension: str | None = None,
    code_found_anchor: bool | None = None,
) -> ItemVerdict:
    return ItemVerdict(
        item_id=item_id,
        standard_id=standard_id,
        path_id=path_id,
        type=type,
        dimension=dimension,
        points=points,
        status="unscored",
        code_found_anchor=code_found_anchor,
        reason=reason,
    )


def evidence_problem(quotes: Sequence[str], output: str, rubric_texts: Iterable[str]) -> str | None:
    """Why these quotes cannot back an award (None: they can): ``no_evidence``,
    ``quotes_removed_text`` (a quote holds the marker left where evaluator-addressed text was
    removed), ``evidence_not_found`` (a quote is not in the output verbatim) or
    ``copies_rubric``."""
    quotes = [q for q in quotes if q.strip()]
    if not quotes:
        return "no_evidence"
    if any(REMOVED_MARKER in q for q in quotes):
        return "quotes_removed_text"
    if not all(quote_found(q, output) for q in quotes):
        return "evidence_not_found"
    texts = list(rubric_texts)
    if any(copies_rubric(q, texts) for q in quotes):
        return "copies_rubric"
    return None


def checked_verdict(
    award: ItemAward,
    *,
    points: float,
    output: str,
    rubric_texts: Iterable[str],
    anchor: AnchorValue | None = None,
    standard_id: str | None = None,
    path_id: str | None = None,
    type: ItemType | None = None,
    dimension: str | None = None,
    other_anchors: Iterable[AnchorValue] = (),
) -> ItemVerdict:
    """The judge's ``award`` after the code checks (see ``evidence``): an award that fails any
    of them earns 0 and names the check in ``flags``. A penalty (negative points) is applied
    only with evidence found in the output; it has no anchor check. ``other_anchors``: the
    rubric's anchors (``ResolvedRubric.anchors``), known quantities that never compete with
    ``anchor`` (without them, another anchor's value may read as a competing value)."""
    others = [a for a in other_anchors if anchor is None or a.name != anchor.name]
    code_found = anchor_in_output(output, anchor, others=others) if anchor is not None else None
    quotes = [q for q in award.evidence if q.strip()]
    flags: list[str] = []
    evidence_ok: bool | None = None
    anchor_ok: bool | None = None
    earned = 0.0
    if award.awarded != 0:
        problem = evidence_problem(quotes, output, rubric_texts)
        evidence_ok = problem is None
        if problem is not None:
            flags.append(problem)
        elif anchor is not None and points > 0:
            stating = next((q for q in quotes if states_anchor(q, anchor, context=output)), None)
            if stating is None:
                anchor_ok = False
                flags.append("anchor_missing")
            elif is_hedge(stating, anchor, context=output, others=others):
                anchor_ok = False
                flags.append("hedge")
            else:
                anchor_ok = True
        if not flags:
            low, high = min(0.0, points), max(0.0, points)
            earned = min(max(award.awarded, low), high)
    return ItemVerdict(
        item_id=award.item_id,
        standard_id=standard_id,
        path_id=path_id,
        type=type,
        dimension=dimension,
        points=points,
        status="scored",
        earned=earned,
        judge_awarded=award.awarded,
        evidence=quotes,
        evidence_ok=evidence_ok,
        anchor_ok=anchor_ok,
        code_found_anchor=code_found,
        flags=flags,
        reason=award.reason,
    )


def ratio(earned: float, maximum: float) -> float | None:
    """earned / maximum clamped to [0, 1]; None when there is nothing to score."""
    if maximum <= 0:
        return None
    return min(max(earned / maximum, 0.0), 1.0)

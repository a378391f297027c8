"""The rubric judge: a report scored on a hierarchical rubric (requirement → standard → path →
item), the judge for the items and code for the evidence.

For every standard the judge scores the items of *every* listed path (``per_item``: one call
per item; ``batched``: one call per path with all its items), each award goes through the code
checks (``checks.checked_verdict``: quotes found verbatim in the sanitized report, no copied
rubric wording, anchors stated and not hedged), and the standard is credited with its
**best-matching path = the path with the highest earned points** after the checks (ties: the
path listed first). Choosing by earned points rather than by a separate "which path?" answer
keeps the choice reproducible from the item verdicts alone and never lets a path the judge named
score lower than one the report demonstrably satisfies.

When the best listed path earns less than the standard's maximum, one more call asks which path
the report follows, or whether it meets the standard by an *unlisted* valid approach. The
unlisted route passes the same checks as listed items: its quotes must be found in the visible
report and copy no rubric wording, and it can earn no more than a listed path would with those
quotes as evidence for every item (``_unlisted_cap``): an anchored item's points count only when
a quote states its anchor strictly, so a report cannot skip the anchors by claiming an approach
of its own. An unlisted approach whose capped points exceed the best listed path's is credited
instead, recorded as one pseudo-item ``<standard>.unlisted`` (``off_rubric``, flag
``unlisted_path``) and left out of ``by_type``.

Sums: a standard's earned points (clamped to [0, its scored maximum], as DAComp's
s_k ∈ [0, w_k]) over its scored maximum (the positive points of its chosen path's scored items);
``score`` = Σ earned / Σ maximum over scored standards; ``by_type`` the same per item type over
the chosen paths' items. Items whose reply never validated (or whose call failed) are
*unscored*: left out of both sums and listed; a standard with no scored item is unscored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from benchforge.evaluation.judges.checks import (
    checked_verdict,
    evidence_problem,
    items_reply_check,
    ratio,
    unscored_verdict,
)
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.echo import echo_lines, quote_echoes
from benchforge.evaluation.judges.evidence import anchor_in_output
from benchforge.evaluation.judges.length import DEFAULT_MAX_REPORT_WORDS
from benchforge.evaluation.judges.models import (
    ITEM_TYPES,
    AnchorValue,
    ItemVerdict,
    JudgeInfo,
    ResolvedItem,
    ResolvedRubric,
    RubricScore,
    RubricStandardSpec,
    StandardVerdict,
)
from benchforge.evaluation.judges.prompts import (
    RUBRIC_PROMPT_VERSION,
    rubric_items_messages,
    rubric_path_messages,
)
from benchforge.evaluation.judges.replies import ItemAward, ItemsReply, PathChoiceReply
from benchforge.evaluation.judges.sanitize import SanitizedOutput, sanitize_output
from benchforge.evaluation.judges.structured import ask_json

PROMPT_VERSION = RUBRIC_PROMPT_VERSION
UNLISTED_SUFFIX = ".unlisted"
EMPTY_REASON = "empty output: nothing to judge"


class ModeAgreement(BaseModel):
    """Per-item vs batched judging of one output: items scored in both, and how many agree."""

    model_config = ConfigDict(frozen=True)

    compared: int
    agreed: int
    rate: float | None = Field(description="agreed / compared; None when nothing compared")
    differing: list[str] = Field(default_factory=list, description="item ids")


def rubric_texts(rubric: ResolvedRubric) -> list[str]:
    """Every text of the rubric an output must not copy: criteria, path approaches, standard
    and requirement titles."""
    texts = [i.criterion for i in rubric.items]
    for requirement in rubric.requirements:
        texts.append(requirement.title)
        for standard in requirement.standards:
            texts.append(standard.title)
            texts.extend(p.approach for p in standard.paths)
    return texts


def _info(judge: Judge, rubric: ResolvedRubric) -> JudgeInfo:
    return JudgeInfo(
        judge="rubric",
        model=judge.model,
        prompt_version=PROMPT_VERSION,
        rubric_version=rubric.version,
        mode=judge.settings.mode,
    )


class _Path(BaseModel):
    model_config = ConfigDict(frozen=True)

    standard: RubricStandardSpec
    path_id: str
    approach: str
    items: list[ResolvedItem]


def _paths(rubric: ResolvedRubric) -> list[_Path]:
    by_key: dict[tuple[str, str], list[ResolvedItem]] = {}
    for item in rubric.items:
        by_key.setdefault((item.standard_id, item.path_id), []).append(item)
    return [
        _Path(
            standard=standard,
            path_id=path.id,
            approach=path.approach,
            items=by_key.get((standard.id, path.id), []),
        )
        for requirement in rubric.requirements
        for standard in requirement.standards
        for path in standard.paths
    ]


async def _judge_items(
    judge: Judge,
    path: _Path,
    items: Sequence[ResolvedItem],
    output: str,
    question: str,
    texts: Sequence[str],
    anchors: Sequence[AnchorValue],
    echoing: Sequence[str] = (),
) -> list[ItemVerdict]:
    """One call for ``items`` (of one path), then the code checks on each award."""
    messages = rubric_items_messages(
        question=question,
        standard_id=path.standard.id,
        standard_title=path.standard.title,
        path_id=path.path_id,
        approach=path.approach,
        items=items,
        output=output,
    )
    reply = await ask_json(
        judge, messages, ItemsReply, check=items_reply_check({i.id: i.points for i in items})
    )
    verdicts = []
    awards = {a.item_id: a for a in reply.value.items} if reply.value is not None else {}
    for item in items:
        award = awards.get(item.id)
        if award is None:
            verdicts.append(
                unscored_verdict(
                    item_id=item.id,
                    points=item.points,
                    reason=f"no valid judge reply after {reply.attempts} attempt(s): {reply.error}",
                    standard_id=item.standard_id,
                    path_id=item.path_id,
                    type=item.type,
                    code_found_anchor=(
                        anchor_in_output(
                            output,
                            item.anchor,
                            others=[a for a in anchors if a.name != item.anchor.name],
                        )
                        if item.anchor
                        else None
                    ),
                )
            )
            continue
        verdicts.append(
            checked_verdict(
                award,
                points=item.points,
                output=output,
                rubric_texts=texts,
                anchor=item.anchor,
                standard_id=item.standard_id,
                path_id=item.path_id,
                type=item.type,
                other_anchors=anchors,
            )
        )
    return [_without_echoes(v, echoing) for v in verdicts]


def _without_echoes(verdict: ItemVerdict, echoing: Sequence[str]) -> ItemVerdict:
    """No award rests on a line that rewords the rubric (``echo``), in a report that does so
    for most of its criteria."""
    if not echoing or not verdict.earned or verdict.earned <= 0:
        return verdict
    if not any(quote_echoes(q, echoing) for q in verdict.evidence):
        return verdict
    return verdict.model_copy(update={"earned": 0.0, "flags": [*verdict.flags, "echoes_rubric"]})


def _echoing(rubric: ResolvedRubric, text: str) -> list[str]:
    criteria = [i.criterion for i in rubric.items if i.points > 0]
    return echo_lines(text, criteria, strip=[a.text for a in rubric.anchors.values()])


def _empty_score(judge: Judge, rubric: ResolvedRubric, sanitized: SanitizedOutput) -> RubricScore:
    """Score 0 without a call: every standard on its first path, every item earning 0."""
    items: list[ItemVerdict] = []
    standards: list[StandardVerdict] = []
    for path in _paths(rubric):
        if path.path_id != path.standard.paths[0].id:
            continue
        standards.append(
            StandardVerdict(
                standard_id=path.standard.id,
                path_id=path.path_id,
                max_points=path.standard.max_points,
                earned=0.0,
            )
        )
        items.extend(
            ItemVerdict(
                item_id=i.id,
                standard_id=i.standard_id,
                path_id=i.path_id,
                type=i.type,
                points=i.points,
                status="scored",
                earned=0.0,
                code_found_anchor=False if i.anchor is not None else None,
                reason=EMPTY_REASON,
            )
            for i in path.items
        )
    by_type: dict[str, float | None] = {
        t: 0.0 if any(i.type == t and i.points > 0 for i in items) else None for t in ITEM_TYPES
    }
    return RubricScore(
        score=0.0,
        by_type=by_type,
        items=items,
        standards=standards,
        injection_flags=sanitized.injection_flags,
        removed=sanitized.removed,
        truncated=sanitized.truncated,
        info=_info(judge, rubric),
    )


def _earned(verdicts: Sequence[ItemVerdict]) -> tuple[float, float]:
    """(earned, maximum) over the scored verdicts of one path."""
    scored = [v for v in verdicts if v.status == "scored"]
    earned = sum(v.earned or 0.0 for v in scored)
    maximum = sum(v.points for v in scored if v.points > 0)
    return earned, maximum


def _unlisted_cap(
    paths: Sequence[_Path],
    evidence: Sequence[str],
    output: str,
    texts: Sequence[str],
    anchors: Sequence[AnchorValue],
) -> float:
    """The most an unlisted approach with ``evidence`` can earn: the best listed path's points
    when every one of its positive items is awarded on that evidence and put through the same
    code checks as a listed award (``checked_verdict``)."""
    best = 0.0
    for path in paths:
        earned = 0.0
        for item in path.items:
            if item.points <= 0:
                continue
            verdict = checked_verdict(
                ItemAward(item_id=item.id, awarded=item.points, evidence=list(evidence)),
                points=item.points,
                output=output,
                rubric_texts=texts,
                anchor=item.anchor,
                other_anchors=anchors,
            )
            earned += verdict.earned or 0.0
        best = max(best, earned)
    return best


async def _unlisted(
    judge: Judge,
    standard: RubricStandardSpec,
    paths: Sequence[_Path],
    best_earned: float,
    output: str,
    question: str,
    texts: Sequence[str],
    anchors: Sequence[AnchorValue],
    echoing: Sequence[str],
) -> tuple[ItemVerdict | None, str | None]:
    """Ask which path the report follows; an accepted unlisted approach as a pseudo-item, or
    (None, why an unlisted claim was rejected) / (None, None)."""
    ids = [p.path_id for p in paths]

    def check(reply: PathChoiceReply) -> None:
        if reply.path_id is not None and reply.path_id not in ids:
            raise ValueError(f"path_id {reply.path_id!r} is not one of {', '.join(ids)} or null")
        points = reply.unlisted_points
        if points is not None and not 0 <= points <= standard.max_points:
            raise ValueError(f"unlisted_points {points:g} is outside [0, {standard.max_points:g}]")

    messages = rubric_path_messages(
        question=question,
        standard_id=standard.id,
        standard_title=standard.title,
        max_points=standard.max_points,
        paths=[(p.path_id, p.approach, p.items) for p in paths],
        output=output,
    )
    reply = await ask_json(judge, messages, PathChoiceReply, check=check)
    choice = reply.value
    if choice is None or choice.path_id is not None or not choice.unlisted_points:
        return None, None
    award = min(choice.unlisted_points, standard.max_points)
    if award <= best_earned:
        return None, None
    problem = evidence_problem(choice.evidence, output, texts)
    if problem is None and any(quote_echoes(q, echoing) for q in choice.evidence):
        problem = "echoes_rubric"
    if problem is not None:
        return None, f"unlisted_path_rejected: {problem}"
    cap = _unlisted_cap(paths, choice.evidence, output, texts, anchors)
    if cap < award:
        if cap <= best_earned:
            return None, (
                f"unlisted_path_rejected: its evidence supports {cap:g} of the "
                f"{award:g} points claimed (anchors not stated)"
            )
        award = cap
    verdict = ItemVerdict(
        item_id=standard.id + UNLISTED_SUFFIX,
        standard_id=standard.id,
        path_id=None,
        points=standard.max_points,
        status="scored",
        earned=award,
        judge_awarded=choice.unlisted_points,
        evidence=[q for q in choice.evidence if q.strip()],
        evidence_ok=True,
        off_rubric=True,
        flags=["unlisted_path"],
        reason=choice.reason,
    )
    return verdict, None


def judge_rubric(
    judge: Judge,
    rubric: ResolvedRubric,
    output: str,
    *,
    question: str,
    max_words: int | None = DEFAULT_MAX_REPORT_WORDS,
) -> RubricScore:
    """``judge_rubric_async`` for a synchronous caller (on the LLM loop)."""
    return judge.run(
        judge_rubric_async(judge, rubric, output, question=question, max_words=max_words)
    )


async def judge_rubric_async(
    judge: Judge,
    rubric: ResolvedRubric,
    output: str,
    *,
    question: str,
    max_words: int | None = DEFAULT_MAX_REPORT_WORDS,
) -> RubricScore:
    """``output`` scored on ``rubric`` (see the module docstring). The judge sees only the
    sanitized output (its visible text, cut to ``max_words``); an empty one scores 0 without
    any call. The calls run concurrently (the shared client keeps to the model's limits)."""
    sanitized = sanitize_output(output, max_words=max_words)
    text = sanitized.text
    if not text.strip():
        return _empty_score(judge, rubric, sanitized)
    texts = rubric_texts(rubric)
    paths = _paths(rubric)
    anchors = list(rubric.anchors.values())
    echoing = _echoing(rubric, text)

    calls: list[tuple[_Path, list[ResolvedItem]]] = []
    for path in paths:
        if judge.settings.mode == "batched":
            calls.append((path, path.items))
        else:
            calls.extend((path, [item]) for item in path.items)
    results = await asyncio.gather(
        *(
            _judge_items(judge, path, items, text, question, texts, anchors, echoing)
            for path, items in calls
        )
    )
    by_path: dict[tuple[str, str], list[ItemVerdict]] = {}
    for (path, _), verdicts in zip(calls, results, strict=True):
        by_path.setdefault((path.standard.id, path.path_id), []).extend(verdicts)

    standards_specs = [s for r in rubric.requirements for s in r.standards]
    chosen: dict[str, tuple[_Path | None, list[ItemVerdict]]] = {}
    pending_unlisted: list[tuple[RubricStandardSpec, list[_Path], float]] = []
    unscored: list[str] = []
    for standard in standards_specs:
        own = [p for p in paths if p.standard.id == standard.id]
        for p in own:
            unscored.extend(
                v.item_id for v in by_path[(standard.id, p.path_id)] if v.status == "unscored"
            )
        candidates = [
            (p, by_path[(standard.id, p.path_id)])
            for p in own
            if any(v.status == "scored" for v in by_path[(standard.id, p.path_id)])
        ]
        if not candidates:
            chosen[standard.id] = (
                None,
                [v for p in own for v in by_path[(standard.id, p.path_id)]],
            )
            continue
        best_path, best_verdicts = max(candidates, key=lambda c: _earned(c[1])[0])
        chosen[standard.id] = (best_path, best_verdicts)
        if _earned(best_verdicts)[0] < standard.max_points:
            pending_unlisted.append((standard, own, _earned(best_verdicts)[0]))

    unlisted_results = await asyncio.gather(
        *(
            _unlisted(judge, standard, own, best, text, question, texts, anchors, echoing)
            for standard, own, best in pending_unlisted
        )
    )
    unlisted = {s.id: r for (s, _, _), r in zip(pending_unlisted, unlisted_results, strict=True)}

    items: list[ItemVerdict] = []
    standards: list[StandardVerdict] = []
    total_earned = total_max = 0.0
    type_earned = dict.fromkeys(ITEM_TYPES, 0.0)
    type_max = dict.fromkeys(ITEM_TYPES, 0.0)
    for standard in standards_specs:
        chosen_path, verdicts = chosen[standard.id]
        pseudo, rejected = unlisted.get(standard.id, (None, None))
        if pseudo is not None:
            items.append(pseudo)
            standards.append(
                StandardVerdict(
                    standard_id=standard.id,
                    path_id=None,
                    max_points=standard.max_points,
                    earned=pseudo.earned,
                    off_rubric=True,
                )
            )
            total_earned += pseudo.earned or 0.0
            total_max += standard.max_points
            continue
        if rejected is not None and verdicts:
            first = verdicts[0]
            verdicts = [
                first.model_copy(update={"flags": [*first.flags, rejected]}),
                *verdicts[1:],
            ]
        items.extend(verdicts)
        if chosen_path is None:
            standards.append(
                StandardVerdict(
                    standard_id=standard.id,
                    path_id=None,
                    max_points=standard.max_points,
                    earned=None,
                )
            )
            continue
        earned, maximum = _earned(verdicts)
        earned = min(max(earned, 0.0), maximum)
        standards.append(
            StandardVerdict(
                standard_id=standard.id,
                path_id=chosen_path.path_id,
                max_points=maximum,
                earned=earned,
            )
        )
        total_earned += earned
        total_max += maximum
        for v in verdicts:
            if v.status != "scored" or v.type is None:
                continue
            type_earned[v.type] += v.earned or 0.0
            if v.points > 0:
                type_max[v.type] += v.points

    disagreements = [
        v.item_id
        for v in items
        if v.status == "scored"
        and v.code_found_anchor is not None
        and v.points > 0
        and ((v.judge_awarded or 0.0) > 0) != v.code_found_anchor
    ]
    return RubricScore(
        score=ratio(total_earned, total_max),
        by_type={t: ratio(type_earned[t], type_max[t]) for t in ITEM_TYPES},
        items=items,
        standards=standards,
        unscored=unscored,
        disagreements=disagreements,
        injection_flags=sanitized.injection_flags,
        removed=sanitized.removed,
        truncated=sanitized.truncated,
        info=_info(judge, rubric),
    )


def judge_item(
    judge: Judge,
    rubric: ResolvedRubric,
    item_id: str,
    output: str,
    *,
    question: str,
    max_words: int | None = DEFAULT_MAX_REPORT_WORDS,
) -> ItemVerdict:
    """``judge_item_async`` for a synchronous caller (on the LLM loop)."""
    return judge.run(
        judge_item_async(judge, rubric, item_id, output, question=question, max_words=max_words)
    )


async def judge_item_async(
    judge: Judge,
    rubric: ResolvedRubric,
    item_id: str,
    output: str,
    *,
    question: str,
    max_words: int | None = DEFAULT_MAX_REPORT_WORDS,
) -> ItemVerdict:
    """One item judged alone (one call, whatever the mode), with the code checks: calibration
    compares these with human labels item by item. An empty output earns 0 without a call."""
    item = next((i for i in rubric.items if i.id == item_id), None)
    if item is None:
        raise KeyError(f"rubric {rubric.task_key} has no item {item_id!r}")
    sanitized = sanitize_output(output, max_words=max_words)
    if not sanitized.text.strip():
        return ItemVerdict(
            item_id=item.id,
            standard_id=item.standard_id,
            path_id=item.path_id,
            type=item.type,
            points=item.points,
            status="scored",
            earned=0.0,
            code_found_anchor=False if item.anchor is not None else None,
            reason=EMPTY_REASON,
        )
    path = next(
        p for p in _paths(rubric) if p.standard.id == item.standard_id and p.path_id == item.path_id
    )
    anchors = list(rubric.anchors.values())
    echoing = _echoing(rubric, sanitized.text)
    verdicts = await _judge_items(
        judge, path, [item], sanitized.text, question, rubric_texts(rubric), anchors, echoing
    )
    verdict = verdicts[0]
    if sanitized.injection_flags:
        verdict = verdict.model_copy(update={"flags": [*verdict.flags, "injection"]})
    return verdict


def compare_modes(a: RubricScore, b: RubricScore) -> ModeAgreement:
    """Agreement of two scorings of one output (per-item vs batched) over the items scored in
    both: an item agrees when both credited the same points after the checks."""
    first = {v.item_id: v for v in a.items if v.status == "scored" and v.earned is not None}
    second = {v.item_id: v for v in b.items if v.status == "scored" and v.earned is not None}
    common = [i for i in first if i in second]
    differing = [i for i in common if abs((first[i].earned or 0) - (second[i].earned or 0)) > 1e-9]
    compared = len(common)
    return ModeAgreement(
        compared=compared,
        agreed=compared - len(differing),
        rate=(compared - len(differing)) / compared if compared else None,
        differing=differing,
    )

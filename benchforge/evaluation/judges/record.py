"""What a judged trial score keeps of its judging: a ``JudgeRecord`` (:mod:`.breakdown`).

Built from the judge's own ledger (one task's calls) and the scores the judges returned: which
judges (model, prompt and rubric versions, mode), how many requests reached the endpoint (cache
hits aside), the cost (None as soon as one sent call is unpriced: a partial sum would pass for
the whole), what could not be judged, and every item with its evidence (quotes cut to 300
characters), the checks behind each award (the judge's award before them, the anchor the
item cites and whether code found it), each GSB pair in both orders, and the judged file.
"""

from __future__ import annotations

from collections.abc import Mapping

from benchforge.evaluation.judges.breakdown import (
    JudgedItem,
    JudgedPair,
    JudgeIdentity,
    JudgeRecord,
)
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.models import (
    AnchorValue,
    ArchitectureScore,
    GsbScore,
    ItemVerdict,
    JudgeInfo,
    ResolvedRubric,
    RubricScore,
)

EVIDENCE_CHARS = 300


def _truncate(text: str, limit: int = EVIDENCE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _judge_entry(info: JudgeInfo) -> JudgeIdentity:
    return JudgeIdentity(
        judge=info.judge,
        model=info.model,
        prompt_version=info.prompt_version,
        mode=info.mode,
        rubric_version=info.rubric_version,
    )


def _item(
    v: ItemVerdict, group: str, kind: str, anchors: Mapping[str, AnchorValue] | None = None
) -> JudgedItem:
    anchor = (anchors or {}).get(v.item_id)
    return JudgedItem(
        id=v.item_id,
        group=group,
        kind=kind,
        points=v.points,
        earned=v.earned if v.status == "scored" else None,
        status=v.status,
        evidence=[_truncate(q) for q in v.evidence],
        flags=list(v.flags),
        reason=v.reason,
        judge_awarded=v.judge_awarded,
        evidence_ok=v.evidence_ok,
        anchor=anchor.name if anchor is not None else None,
        anchor_value=anchor.text if anchor is not None else None,
        anchor_ok=v.anchor_ok,
        code_found_anchor=v.code_found_anchor,
        off_rubric=v.off_rubric,
    )


def _dedupe(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def judge_record(
    *,
    judge: Judge,
    rubric: RubricScore | None = None,
    gsb: GsbScore | None = None,
    architecture: ArchitectureScore | None = None,
    resolved: ResolvedRubric | None = None,
    output: str | None = None,
) -> JudgeRecord:
    """The record of one judged trial (see the module docstring). ``resolved``: the rubric the
    rubric judge used (for the anchors its items cite); ``output``: the judged file, relative
    to the workspace."""
    totals = judge.totals()

    judges: list[JudgeIdentity] = []
    unscored: list[str] = []
    disagreements: list[str] = []
    flags: list[str] = []
    items: list[JudgedItem] = []
    gsb_pairs: list[JudgedPair] = []
    pairs = inconsistent = 0
    anchors = {i.id: i.anchor for i in resolved.items if i.anchor} if resolved else None
    if rubric is not None:
        judges.append(_judge_entry(rubric.info))
        unscored += rubric.unscored
        disagreements += rubric.disagreements
        flags += rubric.injection_flags
        for v in rubric.items:
            group = f"{v.standard_id}/{v.path_id or 'unlisted'}"
            items.append(_item(v, group, v.type or "unlisted", anchors))
    if architecture is not None:
        judges.append(_judge_entry(architecture.info))
        unscored += architecture.unscored
        flags += architecture.injection_flags
        items += [_item(v, v.dimension or "", v.dimension or "") for v in architecture.items]
    if gsb is not None:
        judges.append(_judge_entry(gsb.info))
        pairs = len(gsb.pairs)
        inconsistent = gsb.inconsistent
        for p in gsb.pairs:
            gsb_pairs.append(
                JudgedPair(
                    baseline_id=p.baseline_id,
                    dimension=p.dimension,
                    raw_first=p.raw_first,
                    raw_second=p.raw_second,
                    verdict=p.verdict,
                    consistent=p.consistent,
                    status=p.status,
                    matched_words=p.matched_words,
                    matched_first=p.matched_first,
                    matched_second=p.matched_second,
                )
            )
            pair_id = f"gsb:{p.baseline_id}:{p.dimension}"
            counted = p.status == "scored" and p.consistent
            if p.status == "unscored":
                unscored.append(pair_id)
            earned = {"good": 1.0, "same": 0.0, "bad": -1.0}[p.verdict] if p.verdict else None
            items.append(
                JudgedItem(
                    id=pair_id,
                    group=p.baseline_id,
                    kind="gsb",
                    points=1.0,
                    earned=earned if counted else None,
                    status="scored" if counted else "unscored",
                    flags=[] if counted or p.status == "unscored" else ["inconsistent"],
                    reason=f"candidate raw score {p.raw_first} shown first, "
                    f"{p.raw_second} shown second"
                    + (
                        f"; cut to the baseline's length ({p.matched_words} words): "
                        f"{p.matched_first} first, {p.matched_second} second"
                        if p.matched_words is not None
                        else ""
                    ),
                )
            )
    return JudgeRecord(
        judges=judges,
        requests=totals.sent,
        cache_hits=totals.cache_hits,
        cost_usd=totals.known_cost_usd,
        unscored=_dedupe(unscored),
        pairs=pairs,
        inconsistent_pairs=inconsistent,
        disagreements=_dedupe(disagreements),
        injection_flags=_dedupe(flags),
        items=items,
        used_mock_llm=judge.ledger.used_mock(),
        output=output,
        gsb_pairs=gsb_pairs,
        truncated=(gsb.truncated if gsb is not None else None)
        or (architecture.truncated if architecture is not None else None),
    )

"""The architecture judge: a ``de_arch`` blueprint scored on a flat rubric.

Items are judged one per call (``per_item``) or all items of one dimension per call
(``batched``); every award goes through the same code checks as the rubric judge (quotes found
verbatim in the sanitized blueprint, no copied rubric wording; there are no anchors).
The judge reads the blueprint's visible text cut to ``max_words`` (the task's
``max_blueprint_words``; the cut is flagged in ``truncated``), so quotes can only come from the
kept part.
``score`` = Σ earned / Σ points over scored items, ``by_dimension`` the same per dimension;
unscored items are listed and left out of both. An empty blueprint scores 0 without a call.
"""

from __future__ import annotations

import asyncio

from benchforge.evaluation.judges.checks import (
    checked_verdict,
    items_reply_check,
    ratio,
    unscored_verdict,
)
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.length import DEFAULT_MAX_BLUEPRINT_WORDS
from benchforge.evaluation.judges.models import (
    ArchitectureScore,
    FlatRubricItem,
    ItemVerdict,
    JudgeInfo,
)
from benchforge.evaluation.judges.prompts import ARCHITECTURE_PROMPT_VERSION, architecture_messages
from benchforge.evaluation.judges.replies import ItemsReply
from benchforge.evaluation.judges.sanitize import sanitize_output
from benchforge.evaluation.judges.structured import ask_json

PROMPT_VERSION = ARCHITECTURE_PROMPT_VERSION


async def _judge_group(
    judge: Judge, items: list[FlatRubricItem], blueprint: str, requirement: str, texts: list[str]
) -> list[ItemVerdict]:
    reply = await ask_json(
        judge,
        architecture_messages(requirement=requirement, items=items, blueprint=blueprint),
        ItemsReply,
        check=items_reply_check({i.id: i.points for i in items}),
    )
    awards = {a.item_id: a for a in reply.value.items} if reply.value is not None else {}
    verdicts = []
    for item in items:
        award = awards.get(item.id)
        if award is None:
            verdicts.append(
                unscored_verdict(
                    item_id=item.id,
                    points=item.points,
                    dimension=item.dimension,
                    reason=f"no valid judge reply after {reply.attempts} attempt(s): {reply.error}",
                )
            )
        else:
            verdicts.append(
                checked_verdict(
                    award,
                    points=item.points,
                    output=blueprint,
                    rubric_texts=texts,
                    dimension=item.dimension,
                )
            )
    return verdicts


def judge_architecture(
    judge: Judge,
    items: list[FlatRubricItem],
    blueprint: str,
    *,
    requirement: str,
    rubric_version: str,
    max_words: int | None = DEFAULT_MAX_BLUEPRINT_WORDS,
) -> ArchitectureScore:
    """``judge_architecture_async`` for a synchronous caller (on the LLM loop)."""
    return judge.run(
        judge_architecture_async(
            judge,
            items,
            blueprint,
            requirement=requirement,
            rubric_version=rubric_version,
            max_words=max_words,
        )
    )


async def judge_architecture_async(
    judge: Judge,
    items: list[FlatRubricItem],
    blueprint: str,
    *,
    requirement: str,
    rubric_version: str,
    max_words: int | None = DEFAULT_MAX_BLUEPRINT_WORDS,
) -> ArchitectureScore:
    """``blueprint`` scored on ``items`` (see the module docstring); ``max_words``: the word
    limit (None: none)."""
    info = JudgeInfo(
        judge="architecture",
        model=judge.model,
        prompt_version=PROMPT_VERSION,
        rubric_version=rubric_version,
        mode=judge.settings.mode,
    )
    dimensions = list(dict.fromkeys(i.dimension for i in items))
    sanitized = sanitize_output(blueprint, max_words=max_words)
    text = sanitized.text
    if not text.strip():
        verdicts = [
            ItemVerdict(
                item_id=i.id,
                dimension=i.dimension,
                points=i.points,
                status="scored",
                earned=0.0,
                reason="empty output: nothing to judge",
            )
            for i in items
        ]
        return ArchitectureScore(
            score=0.0 if items else None,
            by_dimension=dict.fromkeys(dimensions, 0.0),
            items=verdicts,
            injection_flags=sanitized.injection_flags,
            info=info,
            truncated=sanitized.truncated,
        )
    texts = [i.criterion for i in items]
    if judge.settings.mode == "batched":
        groups = [[i for i in items if i.dimension == d] for d in dimensions]
    else:
        groups = [[i] for i in items]
    results = await asyncio.gather(
        *(_judge_group(judge, group, text, requirement, texts) for group in groups)
    )
    by_id = {v.item_id: v for group in results for v in group}
    verdicts = [by_id[i.id] for i in items]
    scored = [v for v in verdicts if v.status == "scored"]

    def sums(dimension: str | None) -> float | None:
        chosen = [v for v in scored if dimension is None or v.dimension == dimension]
        return ratio(sum(v.earned or 0.0 for v in chosen), sum(v.points for v in chosen))

    return ArchitectureScore(
        score=sums(None),
        by_dimension={d: sums(d) for d in dimensions},
        items=verdicts,
        unscored=[v.item_id for v in verdicts if v.status == "unscored"],
        injection_flags=sanitized.injection_flags,
        info=info,
        truncated=sanitized.truncated,
    )

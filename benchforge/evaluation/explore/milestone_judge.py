"""The milestone judge: given the gold path and the code-found excerpts of a trajectory, say
per milestone whether it was achieved, how, and from which step.

The judge sees the excerpts only (what a reader of the trajectory sees at those places:
``sanitize_output`` already ran on every step's text before excerpts were cut), the gold steps
and the milestones with their values. One call for all milestones; a reply must name each
milestone exactly once with steps inside the trajectory, else it is sent back and asked again
(``ask_json``). No valid reply: the trial's milestones are unscored (``value`` None), an
infrastructure error when the endpoint failed. The verdicts then go through ``outcomes.settle``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from benchforge.evaluation.explore.models import Excerpt, GoldPath, JudgedMilestone
from benchforge.evaluation.judges.client import Judge, Message
from benchforge.evaluation.judges.models import content_hash
from benchforge.evaluation.judges.prompts import MATERIAL_RULES, delimit, request_block
from benchforge.evaluation.judges.structured import StructuredReply, ask_json

MILESTONE_SYSTEM = f"""\
You check how far a data agent got on an exploratory analysis task. The request lists the gold \
steps of a correct analysis and its milestones in order, each with the value a correct analysis \
computes on the way. The material holds excerpts of the agent's trajectory, each labelled with \
its step, its source (the agent's own text, a tool's output, or the final answer) and the \
milestone whose value it mentions.

For each milestone decide:
- achieved: the agent actually obtained this value for this quantity (the right quantity, not \
a coincidentally equal number for something else);
- evidence: "direct" when a step's excerpt shows it, "inferred" when it is shown by no excerpt \
but a later milestone the agent achieved could not have been computed without it, \
"final_answer" when only the final answer states it;
- first_step: the first step whose excerpt shows it (null when inferred).

{MATERIAL_RULES}

Reply with one JSON object and nothing else."""

MILESTONE_USER = """\
Judge every milestone listed in the request below.

{request}

{material}

Reply with JSON: {{"milestones": [{{"key": "<milestone key>", "achieved": true or false, \
"evidence": "direct" | "inferred" | "final_answer" | null, "first_step": <step or null>, \
"reason": "<one sentence>"}}, ...]}} with exactly one entry per milestone."""

MILESTONE_PROMPT_VERSION = content_hash([MILESTONE_SYSTEM, MILESTONE_USER])


class MilestonesReply(BaseModel):
    milestones: list[JudgedMilestone]


def excerpts_material(excerpts: Sequence[Excerpt]) -> str:
    if not excerpts:
        return "(no excerpt of the trajectory mentions any milestone value)"
    blocks = [
        f"[step {e.step} | {e.source} | milestone {e.key}]\n{e.text}"
        for e in sorted(excerpts, key=lambda e: (e.step, e.source, e.key))
    ]
    return "\n\n".join(blocks)


def milestone_messages(
    *, question: str, gold: GoldPath, excerpts: Sequence[Excerpt], steps: int
) -> list[Message]:
    request = request_block(
        {
            "task": "milestones",
            "question": question,
            "gold_steps": gold.steps,
            "milestones": [{"key": m.key, "value": m.value} for m in gold.milestones],
            "trajectory_steps": steps,
        }
    )
    material = delimit("TRAJECTORY", excerpts_material(excerpts))
    return [
        {"role": "system", "content": MILESTONE_SYSTEM},
        {"role": "user", "content": MILESTONE_USER.format(request=request, material=material)},
    ]


def judge_milestones(
    judge: Judge,
    *,
    question: str,
    gold: GoldPath,
    excerpts: Sequence[Excerpt],
    steps: int,
) -> StructuredReply[MilestonesReply]:
    return judge.run(
        judge_milestones_async(judge, question=question, gold=gold, excerpts=excerpts, steps=steps)
    )


async def judge_milestones_async(
    judge: Judge,
    *,
    question: str,
    gold: GoldPath,
    excerpts: Sequence[Excerpt],
    steps: int,
) -> StructuredReply[MilestonesReply]:
    """``judge_milestones`` for callers already on the judge's loop (judge calibration)."""
    keys = [m.key for m in gold.milestones]

    def check(reply: MilestonesReply) -> None:
        named = [m.key for m in reply.milestones]
        if sorted(named) != sorted(keys):
            raise ValueError(f"name each milestone exactly once: expected {keys}, got {named}")
        for item in reply.milestones:
            if item.first_step is not None and not 1 <= item.first_step <= max(steps, 1):
                raise ValueError(
                    f"milestone {item.key!r}: first_step {item.first_step} is outside 1..{steps}"
                )

    return await ask_json(
        judge,
        milestone_messages(question=question, gold=gold, excerpts=excerpts, steps=steps),
        MilestonesReply,
        check=check,
    )

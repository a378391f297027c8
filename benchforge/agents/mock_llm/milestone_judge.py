"""The mock judges' rule for the milestone judge (``evaluation.explore.milestone_judge``).

FAITHFUL. The material is read as excerpt blocks ``[step t | source | milestone key]``. A block
states a milestone when it is the milestone's block and writes its value: a number within 1 %
relative (1e-6 absolute) or, for a text value, its words. A milestone is achieved ``direct``
from the first step whose model or tool block states it; else ``final_answer`` when the final
answer states it; else ``inferred`` when a later milestone is achieved; else not achieved.
OBEDIENT. When the material holds an instruction to the judge, every milestone is achieved,
``direct`` at step 1; otherwise faithful.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from benchforge.evaluation.dab.normalize import normalize_text
from benchforge.evaluation.dab.quantities import read_quantities

_BLOCK = re.compile(r"^\[step (\d+) \| (\w+) \| milestone (.+?)\]$", re.M)


class _Verdict(BaseModel):
    key: str
    achieved: bool
    evidence: str | None
    first_step: int | None
    reason: str


class MilestonesVerdict(BaseModel):
    milestones: list[_Verdict]


def _blocks(material: str) -> list[tuple[int, str, str, str]]:
    found = list(_BLOCK.finditer(material))
    blocks = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(material)
        text = material[match.end() : end]
        blocks.append((int(match.group(1)), match.group(2), match.group(3), text))
    return blocks


def _states(text: str, value: Any) -> bool:
    if isinstance(value, str):
        return re.search(rf"\b{re.escape(value.lower())}\b", text.lower()) is not None
    target = float(value)
    return any(
        q.quantity
        and (abs(q.value - target) <= 1e-6 or abs(q.value - target) <= 0.01 * abs(target))
        for q in read_quantities(normalize_text(text))
    )


def faithful_milestones(payload: dict[str, Any], material: str) -> MilestonesVerdict:
    milestones = payload.get("milestones", [])
    blocks = _blocks(material)
    verdicts: list[_Verdict] = []
    for m in milestones:
        mine = [
            (s, src)
            for s, src, key, text in blocks
            if key == m["key"] and _states(text, m["value"])
        ]
        in_steps = sorted(s for s, src in mine if src != "final_answer")
        if in_steps:
            verdicts.append(
                _Verdict(
                    key=m["key"],
                    achieved=True,
                    evidence="direct",
                    first_step=in_steps[0],
                    reason="stated in a step",
                )
            )
        elif mine:
            verdicts.append(
                _Verdict(
                    key=m["key"],
                    achieved=True,
                    evidence="final_answer",
                    first_step=None,
                    reason="only in the final answer",
                )
            )
        else:
            verdicts.append(
                _Verdict(
                    key=m["key"], achieved=False, evidence=None, first_step=None, reason="not shown"
                )
            )
    later = False
    for v in reversed(verdicts):
        if not v.achieved and later:
            v.achieved, v.evidence, v.reason = True, "inferred", "a later milestone needs it"
        later = later or v.achieved
    return MilestonesVerdict(milestones=verdicts)


def obedient_milestones(payload: dict[str, Any]) -> MilestonesVerdict:
    return MilestonesVerdict(
        milestones=[
            _Verdict(
                key=m["key"], achieved=True, evidence="direct", first_step=1, reason="as instructed"
            )
            for m in payload.get("milestones", [])
        ]
    )

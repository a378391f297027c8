"""Which judged milestones count: the code rule over the judge's verdicts.

The judge reads the excerpts and says, per milestone, whether it was achieved and how (direct
evidence in a step, inferred from a later milestone, or stated only in the final answer). The
judge is not trusted alone:

- a milestone counts only when the judge says achieved **and** code backs it: an excerpt for it
  exists (any source), or a later milestone counts (the later one could not have been computed
  without it). A milestone judged achieved with neither is not counted, whatever the reason
  given: a judge cannot be talked into a milestone the trajectory does not show;
- its step t_j comes from the excerpts, not from the judge: the judge's ``first_step`` when an
  excerpt exists at that step, else the earliest excerpt's step; without an excerpt (inferred),
  the earliest step of the later milestones that count. A milestone stated only in the final
  answer has the final step;
- evidence is recorded as judged, corrected by code where it cannot hold (``direct`` without
  a model or tool excerpt becomes ``final_answer`` or ``inferred``).

Later milestones are settled first, since earlier ones may be inferred from them.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchforge.evaluation.explore.models import (
    Excerpt,
    JudgedMilestone,
    Milestone,
    MilestoneOutcome,
)


def settle(
    milestones: Sequence[Milestone],
    judged: Sequence[JudgedMilestone],
    excerpts: Sequence[Excerpt],
) -> list[MilestoneOutcome]:
    verdict = {j.key: j for j in judged}
    settled: list[MilestoneOutcome] = []
    later_steps: list[int] = []
    for milestone in reversed(milestones):
        j = verdict.get(milestone.key)
        own = [e for e in excerpts if e.key == milestone.key]
        in_steps = [e for e in own if e.source != "final_answer"]
        judged_achieved = bool(j and j.achieved)
        outcome = MilestoneOutcome(
            key=milestone.key, judged_achieved=judged_achieved, counted=False
        )
        if not judged_achieved:
            outcome.note = "not achieved (judge)"
        elif in_steps:
            steps = sorted({e.step for e in in_steps})
            first = j.first_step if j and j.first_step in steps else steps[0]
            outcome.counted, outcome.step = True, first
            outcome.evidence = j.evidence if j and j.evidence != "final_answer" else "direct"
            if outcome.evidence == "inferred":
                outcome.evidence = "direct"
        elif later_steps:
            outcome.counted, outcome.step, outcome.evidence = True, min(later_steps), "inferred"
        elif own:
            outcome.counted, outcome.step = True, own[0].step
            outcome.evidence = "final_answer"
        else:
            outcome.note = "judged achieved, but no excerpt states it and no later milestone counts"
        if outcome.counted and outcome.step is not None:
            later_steps.append(outcome.step)
        settled.append(outcome)
    return list(reversed(settled))

"""Process metrics of an exploration trial (DataClawBench): GPR, TPE, EE, the first missed
milestone and the termination mode.

- GPR = achieved milestones / M (reported on incorrect trials).
- TPE = the mean over achieved milestones of gamma^max(t_j - N, 0), gamma = 0.9, N the gold
  step count: 1 when every achieved milestone came within N steps. None when none was achieved (the
  promptness of nothing is undefined, not 0).
- EE = N / T on correct trials, T the agent's model turns.
- Termination, in precedence order: ``timeout`` (a wall-clock or round budget ended the trial),
  ``silent_stop`` (no answer), ``give_up`` (the answer is the task's fallback or says it cannot
  answer), ``wrong_answer_stop`` (an answer, wrong), ``other`` (an agent error, a repeated
  action); correct trials are ``answered``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from benchforge.core.records import Termination
from benchforge.evaluation.explore.models import MilestoneOutcome

GAMMA = 0.9
TerminationMode = Literal[
    "answered", "timeout", "silent_stop", "give_up", "wrong_answer_stop", "other"
]
_GIVE_UP = re.compile(
    r"\b(?:no relevant data(?: (?:was|is))? found|cannot (?:be )?(?:determine|answer|find)|"
    r"can't (?:determine|answer|find)|unable to (?:determine|answer|find|compute)|"
    r"not enough (?:data|information)|insufficient (?:data|information))",
    re.I,
)


def gpr(outcomes: Sequence[MilestoneOutcome]) -> float:
    if not outcomes:
        raise ValueError("GPR needs at least one milestone")
    return sum(o.counted for o in outcomes) / len(outcomes)


def tpe(
    outcomes: Sequence[MilestoneOutcome], gold_steps: int, gamma: float = GAMMA
) -> float | None:
    steps = [o.step for o in outcomes if o.counted and o.step is not None]
    if not steps:
        return None
    return sum(gamma ** max(t - gold_steps, 0) for t in steps) / len(steps)


def ee(gold_steps: int, agent_steps: int) -> float | None:
    return gold_steps / agent_steps if agent_steps > 0 else None


def first_missed(outcomes: Sequence[MilestoneOutcome]) -> str | None:
    return next((o.key for o in outcomes if not o.counted), None)


def termination_mode(
    termination: Termination, answer: str | None, correct: bool, fallback: str | None = None
) -> TerminationMode:
    if correct:
        return "answered"
    if termination in ("wall_clock", "round_limit"):
        return "timeout"
    if not answer or not answer.strip():
        return "silent_stop"
    if (fallback and fallback.strip().lower() in answer.lower()) or _GIVE_UP.search(answer):
        return "give_up"
    if termination in ("finished", "no_action"):
        return "wrong_answer_stop"
    return "other"

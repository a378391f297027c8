"""A task's difficulty: authored when its spec says so, else derived from its size.

Task specs have no difficulty field. A maintainer states one with a tag
``difficulty:easy|medium|hard``; otherwise the page derives one from the number of scored
units (models to write, or rubric items to satisfy) with fixed bands, so a task's label does not
move when other tasks are added. Size is a proxy, not a measurement: the page marks derived
labels as such and states the rule (:data:`RULE`).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from benchforge.core.errors import ConfigError
from benchforge.harness.catalogue_page.models import Difficulty, DifficultySource

LEVELS: tuple[Difficulty, ...] = ("easy", "medium", "hard")
TAG_PREFIX = "difficulty:"
EASY_MAX = 5
MEDIUM_MAX = 20

RULE = (
    f"A tag <code>{TAG_PREFIX}easy|medium|hard</code> in task.yaml is used as authored. "
    f"Otherwise the label is derived from the number of scored units (models to write for "
    f"de_impl and de_evol, rubric items for de_arch and da_open): at most {EASY_MAX} easy, "
    f"at most {MEDIUM_MAX} medium, more hard. Derived labels are marked with *: size is a "
    f"proxy for difficulty, not a measure of it."
)


def difficulty(
    tags: list[str], scored_units: int | None, task_file: Path
) -> tuple[Difficulty, DifficultySource]:
    """The authored ``difficulty:*`` tag, else the size band of ``scored_units``; a tag with
    an unknown level, or two tags, is an error naming ``task_file``."""
    authored = [t[len(TAG_PREFIX) :].strip() for t in tags if t.startswith(TAG_PREFIX)]
    if len(authored) > 1:
        raise ConfigError(
            f"{task_file}: tags: more than one difficulty tag "
            f"({', '.join(TAG_PREFIX + a for a in authored)}); keep one"
        )
    if authored:
        level = authored[0]
        for known in LEVELS:
            if level == known:
                return known, "authored"
        close = difflib.get_close_matches(level, LEVELS, n=1)
        hint = f" (did you mean '{TAG_PREFIX}{close[0]}'?)" if close else ""
        raise ConfigError(
            f"{task_file}: tags: unknown difficulty '{TAG_PREFIX}{level}'{hint}; "
            f"use one of {', '.join(TAG_PREFIX + k for k in LEVELS)}"
        )
    if scored_units is None:
        return "unrated", "none"
    if scored_units <= EASY_MAX:
        return "easy", "derived"
    if scored_units <= MEDIUM_MAX:
        return "medium", "derived"
    return "hard", "derived"

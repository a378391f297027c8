""" "Did you mean" hints for names in a spec (fields, tables, columns, providers, kinds)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice nearest to ``word`` when one is close enough to be a likely typo."""
    found = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` to append to a message, or nothing when no choice is close."""
    near = closest(word, choices)
    return f" (did you mean '{near}'?)" if near is not None else ""

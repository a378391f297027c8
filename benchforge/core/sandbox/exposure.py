"""Whether a host path that a configuration asks a sandbox to show collides with a protected one.

A sandbox request's ``read_only`` paths are shown even inside hidden ones (that is how the
harness shows a task's dataset under the artifact root). So a path that comes from an agent's
*configuration* (``command``'s ``read_only``) is checked first: it is refused when it is a
protected path, lies inside one, or contains one (``/`` contains everything), compared after
resolving symlinks and ``..`` on both sides, unless the operator allowed it (it is, or lies
inside, an allowed path: the ``sandbox_allowed_read_only`` setting). The harness checks an
agent's paths before a run starts and the agent again when it builds its request; both use
:func:`refusals` and raise their own error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["real_path", "refusals"]
LISTED = 3  # a folder holding many protected paths names the widest few


def real_path(path: Path | str) -> Path:
    """``path`` absolute, with ``~``, ``..`` and every symlink resolved (as far as it exists)."""
    return Path(os.path.realpath(Path(path).expanduser()))


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def refusals(
    requested: Iterable[Path | str],
    protected: Mapping[Path, str] | Iterable[Path],
    allowed: Iterable[Path | str] = (),
    *,
    field: str = "read_only",
) -> list[str]:
    """Why each of ``requested`` may not be shown (empty: all may). ``protected`` maps a path
    to what it is ("the artifact root"), or is a plain list of paths."""
    labels = protected if isinstance(protected, Mapping) else dict.fromkeys(protected, "")
    guarded = sorted(((real_path(p), what) for p, what in labels.items()), key=_depth)
    exceptions = [real_path(a) for a in allowed]
    found = []
    for path in requested:
        real = real_path(path)
        if any(_inside(real, ok) for ok in exceptions):
            continue
        shown = str(path) if str(path) == str(real) else f"{path} (resolved: {real})"
        # inside: the most specific protected path; containing: the widest one it exposes
        inside = [(root, what) for root, what in reversed(guarded) if _inside(real, root)]
        holds = [(root, what) for root, what in guarded if _inside(root, real) and root != real]
        if inside:
            root, what = inside[0]
            how = "is" if real == root else "lies inside"
            found.append(f"{field} path {shown} {how} {_name(root, what)}")
        elif holds:
            names = ", ".join(_name(root, what) for root, what in holds[:LISTED])
            more = (
                f" and {len(holds) - LISTED} other protected paths" if len(holds) > LISTED else ""
            )
            found.append(f"{field} path {shown} contains {names}{more}")
    return found


def _depth(guarded: tuple[Path, str]) -> tuple[int, Path]:
    return len(guarded[0].parts), guarded[0]


def _name(root: Path, what: str) -> str:
    return f"{what} {root}" if what else f"the protected path {root}"

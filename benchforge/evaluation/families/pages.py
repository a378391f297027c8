"""Where a family's page partials are: the template folders of every registered family, and
the partial a family names for its score detail.

A family module ships its partials in a ``templates/`` folder beside it and names them
(``FamilyBase.detail_template``); pages include the named
partial and never branch on the family. A family that is not registered (a run stored before
it was removed) falls back to the neutral partial, which shows no detail.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchforge.evaluation.families.base import NO_DETAIL_TEMPLATE
from benchforge.evaluation.families.registry import families

SHIPPED_TEMPLATES = Path(__file__).parent / "templates"


def template_folders() -> list[Path]:
    """The shipped partials' folder, then the ``templates/`` folder beside each registered
    family's module (a family added outside this package brings its own)."""
    folders = [SHIPPED_TEMPLATES]
    for family in families().values():
        module = sys.modules.get(type(family).__module__)
        source = getattr(module, "__file__", None)
        if source is None:
            continue
        folder = Path(source).parent / "templates"
        if folder.is_dir() and folder not in folders:
            folders.append(folder)
    return folders


def detail_template(family: str) -> str:
    """The partial that shows a ``family`` score's detail on a trial page."""
    found = families().get(family)
    return found.detail_template if found is not None else NO_DETAIL_TEMPLATE

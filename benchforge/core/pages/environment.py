"""The one Jinja2 environment pages are rendered in.

Autoescaping is on for every template: a value from an agent, a model, a sandbox or an author
(task ids, replies, tool output, example rows, free text) can hold anything, ``<script>``
included, and reaches the page as text. Markup that must pass through unescaped is wrapped in
:class:`markupsafe.Markup` by the code that built it, with the reason beside it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined

TEMPLATES = Path(__file__).parent / "templates"
TEXT_CHARS = 20_000  # a reply, tool output or file shown inline; the rest is cut


def cut(text: str, limit: int = TEXT_CHARS) -> str:
    """``text`` up to ``limit`` characters, saying how much more there was."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters not shown)"


def _thousands(value: int | float) -> str:
    return f"{value:,}"


def _starts_with(value: object, prefix: str) -> bool:
    return str(value).startswith(prefix)


@functools.cache
def _environment(folders: tuple[Path, ...]) -> Environment:
    env = Environment(
        loader=ChoiceLoader(
            [FileSystemLoader(str(TEMPLATES)), *(FileSystemLoader(str(f)) for f in folders)]
        ),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["cut"] = cut
    env.filters["thousands"] = _thousands
    env.tests["startingwith"] = _starts_with
    return env


def page_environment(folders: Iterable[Path] = ()) -> Environment:
    """The environment with the shared templates, then those of ``folders`` (a family's
    partials, a page's own templates), first match wins."""
    return _environment(tuple(Path(f) for f in folders))


def render_page(template: str, folders: Iterable[Path] = (), **context: Any) -> str:
    """``template`` (a name under the shared templates or ``folders``) rendered with
    ``context``."""
    return page_environment(folders).get_template(template).render(**context)


@dataclass(frozen=True)
class Page:
    """One kind of page, declared once by its renderer: its template, the folders its
    templates come from (``more_folders``: found when rendering, e.g. the registered task
    families' partials), the ``kind`` the base template marks its body with, and the helpers
    (functions, constants) its templates call. ``render`` adds a title and the page's data."""

    template: str
    folders: tuple[Path, ...]
    kind: str
    helpers: Mapping[str, Any] = field(default_factory=dict)
    more_folders: Callable[[], Iterable[Path]] | None = None

    def render(self, title: str, **data: Any) -> str:
        folders = [*self.folders, *(self.more_folders() if self.more_folders else ())]
        context = {**self.helpers, **data, "page": self.kind, "title": title}
        return render_page(self.template, folders, **context)

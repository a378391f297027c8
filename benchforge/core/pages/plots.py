"""The one way pages draw figures: matplotlib's object API (``Figure`` and its Agg canvas, never
pyplot: no global figure state, no GUI backend, safe in worker threads), written out as inline
SVG or a PNG data URI so a page stays one self-contained file."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from markupsafe import Markup

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_NO_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


def figure(width: float, height: float) -> Figure:
    """A new figure, ``width`` x ``height`` inches; draw on it inside :func:`plain_text` when
    its labels are data (task ids, agent names). matplotlib is imported here, when a page
    draws, not by every command that imports the pages (half a second of each start)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


@contextmanager
def plain_text() -> Iterator[None]:
    """Settings under which every label is drawn as the text it is: SVG text stays text
    (searchable, escaped by matplotlib's writer), never TeX math (a task id may hold "$"), and
    ids are stable from one rendering to the next."""
    import matplotlib

    with matplotlib.rc_context(
        {"svg.fonttype": "none", "svg.hashsalt": "benchforge", "text.parse_math": False}
    ):
        yield


def svg_markup(fig: Figure, label: str) -> Markup:
    """``fig`` as an inline ``<svg>`` element named ``label`` for screen readers. Markup:
    matplotlib wrote it from numbers and labels it escaped itself (its SVG writer escapes every
    text it draws)."""
    buffer = io.StringIO()
    with plain_text():
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata=_NO_METADATA)
    text = buffer.getvalue()
    svg = text[text.index("<svg") :]
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{Markup.escape(label)}" ', 1)
    return Markup(svg)


def png_data_uri(fig: Figure, dpi: int = 96) -> str:
    """``fig`` as a ``data:image/png;base64,...`` URI for an ``<img src>``."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")

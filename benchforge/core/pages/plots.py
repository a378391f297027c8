"""The one way pages draw figures: matplotlib's object API (``Figure`` and its Agg canvas, never
pyplot: no global figure state, no GUI backend, safe in worker threads), written out as inline
SVG or a PNG data URI so a page stays one self-contained file."""

from __future__ import annotations

import base64
import io

from markupsafe import Markup
from matplotlib.figure import Figure


def figure(width: float, height: float) -> Figure:
    """A new figure, ``width`` x ``height`` inches."""
    return Figure(figsize=(width, height))


def svg_markup(fig: Figure, label: str) -> Markup:
    """``fig`` as an inline ``<svg>`` element named ``label`` for screen readers. Markup:
    matplotlib wrote it from numbers and labels it escaped itself (its SVG writer escapes every
    text it draws)."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    svg = text[text.index("<svg") :]
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{Markup.escape(label)}" ', 1)
    return Markup(svg)


def png_data_uri(fig: Figure, dpi: int = 96) -> str:
    """``fig`` as a ``data:image/png;base64,...`` URI for an ``<img src>``."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")

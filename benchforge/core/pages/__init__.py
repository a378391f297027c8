"""Every HTML page Benchforge writes, from one place: a Jinja2 environment with autoescaping,
one base template (``base.html.j2``) and one stylesheet (``pages.css``) that every page
extends, and one plotting helper (``plots``) for the figures pages embed.

Renderers in the layers above pass their own template folders (a task family's partials, a
report's templates) to :func:`page_environment`; a template names its page's parts, the base
template the document around them.
"""

from benchforge.core.pages.environment import Page, page_environment, render_page
from benchforge.core.pages.markdown import markdown_table
from benchforge.core.pages.plots import figure, plain_text, png_data_uri, svg_markup

__all__ = [
    "Page",
    "figure",
    "markdown_table",
    "page_environment",
    "plain_text",
    "png_data_uri",
    "render_page",
    "svg_markup",
]

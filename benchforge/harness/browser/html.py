"""The run browser's HTML building blocks: every value escaped unless a caller hands over
cells it already escaped (``table``, ``facts``)."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

TEXT_CHARS = 20_000  # a reply, tool output or file shown inline; the rest is cut


def h(value: object) -> str:
    return escape(str(value), quote=True)


def cut(text: str, limit: int = TEXT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters not shown)"


def pre(text: str, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f"<pre{klass}>{h(cut(text))}</pre>"


def badge(text: str, cls: str, title: str | None = None) -> str:
    tip = f' title="{h(title)}"' if title else ""
    return f'<span class="badge {cls}"{tip}>{h(text)}</span>'


def table(
    headers: list[str],
    rows: Iterable[list[str]],
    numeric: set[int] | None = None,
    cls: str = "",
    row_attrs: Iterable[str] | None = None,
) -> str:
    """A table of already-escaped cells."""
    numeric = numeric or set()

    def cls_of(i: int) -> str:
        return ' class="num"' if i in numeric else ""

    head = "".join(f"<th{cls_of(i)}>{c}</th>" for i, c in enumerate(headers))
    attrs = iter(row_attrs) if row_attrs is not None else None
    body = []
    for row in rows:
        extra = next(attrs) if attrs is not None else ""
        cells = "".join(f"<td{cls_of(i)}>{c}</td>" for i, c in enumerate(row))
        body.append(f"<tr{extra}>{cells}</tr>")
    klass = f' class="{cls}"' if cls else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def facts(items: Iterable[tuple[str, str]]) -> str:
    """A definition list of (label, already-escaped value)."""
    return (
        '<dl class="facts">' + "".join(f"<dt>{h(k)}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"
    )

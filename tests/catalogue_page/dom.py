"""The catalogue table as a test reads it back from HTML (the file, or Chromium's DOM)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Row:
    task: str
    hidden: bool
    cells: list[str] = field(default_factory=list)


@dataclass
class Table:
    headers: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    body_attrs: dict[str, str] = field(default_factory=dict)

    def cell(self, task: str, header: str) -> str:
        (row,) = [r for r in self.rows if r.task == task]
        return row.cells[self.headers.index(header)]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.table = Table()
        self._in_table = self._in_head = False
        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {k: v or "" for k, v in attrs}
        if tag == "body":
            self.table.body_attrs = named
        elif tag == "table" and named.get("id") == "tasks":
            self._in_table = True
        elif self._in_table and tag == "thead":
            self._in_head = True
        elif self._in_table and tag == "tr" and not self._in_head:
            self.table.rows.append(Row(task=named.get("data-task", ""), hidden="hidden" in named))
        elif self._in_table and tag in ("th", "td"):
            self._text = []
        elif self._text is not None and tag in ("div", "br"):
            self._text.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_table = False
        elif tag == "thead":
            self._in_head = False
        elif tag in ("th", "td") and self._text is not None:
            text = " ".join("".join(self._text).split())
            if tag == "th":
                self.table.headers.append(text)
            else:
                self.table.rows[-1].cells.append(text)
            self._text = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def read_table(html: str) -> Table:
    reader = _Reader()
    reader.feed(html)
    return reader.table

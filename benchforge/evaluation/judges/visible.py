"""What a reader of a rendered report sees: the report's Markdown rendered to HTML by a real
Markdown parser (markdown-it-py, CommonMark with tables, raw HTML allowed as a renderer would),
then the text of that page that a person can actually see.

Left out, and each removal listed with its kind:

- ``invisible_unicode``: zero-width, bidirectional-control and other format characters
  (Unicode category Cf), variation selectors; ``tag_unicode``: the Unicode tag block
  (U+E0000..U+E007F), which can spell a whole hidden sentence; its decoded text is shown;
- ``comment_link`` / ``reference_definition``: Markdown link reference definitions (the
  ``[//]: # (...)`` and ``[//]: <> (...)`` comment idioms included): the renderer consumes them;
- ``html_comment``, ``html_markup`` (declarations, processing instructions, CDATA);
- ``hidden_html``: ``script`` / ``style`` / ``template`` / ``noscript`` and similar elements, and
  any element hidden by an attribute (``hidden``, ``aria-hidden=true``) or by an inline style:
  ``display:none``, ``visibility:hidden|collapse``, ``opacity`` <= 0.1, ``font-size`` 0 or under
  4px (or 0.3em), a transparent or white text colour (the page is white), zero width or height
  with hidden overflow, ``clip`` / ``clip-path`` to nothing, ``transform: scale(0)``, or off-page
  positioning (``left``/``top``/``text-indent`` at or beyond -1000px). Quoted or not;
- ``image_alt`` / ``title_attribute`` / ``aria_label``: attribute text no reader sees on the page;
  ``html_markup`` also lists tags that are not HTML elements (``<judge request>``): a browser
  shows their content, never the tag.

The text keeps the page's structure in Markdown form (``#`` headings, ``-`` and ``1.`` list
items, ``| a | b |`` table rows, ``>`` quotes) so that a judge, like a reader, sees a document;
inline emphasis and link targets are dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pydantic import BaseModel, ConfigDict, Field

SNIPPET_CHARS = 80
TAG_BLOCK = range(0xE0000, 0xE0080)

_MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_HIDDEN_ELEMENTS = {
    "script",
    "style",
    "template",
    "noscript",
    "head",
    "title",
    "iframe",
    "object",
    "embed",
    "svg",
    "math",
    "canvas",
    "audio",
    "video",
    "select",
    "datalist",
    "dialog",
}
_VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}
_BLOCK = {
    "address",
    "article",
    "aside",
    "blockquote",
    "details",
    "div",
    "dl",
    "dt",
    "dd",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "ul",
}
_INLINE = {
    "a",
    "abbr",
    "b",
    "bdi",
    "bdo",
    "big",
    "cite",
    "code",
    "data",
    "del",
    "dfn",
    "em",
    "font",
    "i",
    "ins",
    "kbd",
    "label",
    "mark",
    "q",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "time",
    "tt",
    "u",
    "var",
    "caption",
    "colgroup",
    "tbody",
    "thead",
    "tfoot",
    "tr",
    "td",
    "th",
    "html",
    "body",
    "center",
    "picture",
    "output",
    "meter",
    "progress",
    "button",
    "textarea",
    "option",
    "optgroup",
    "legend",
}
_OFF_PAGE = -1000.0
_WHITE = {"white", "#fff", "#ffffff", "rgb(255,255,255)", "#ffff", "#ffffffff"}
_NUMBER = re.compile(r"^(-?\d*\.?\d+)\s*([a-z%]*)$")
_COMMENT_LINK_TARGET = re.compile(r"^\s*\[[^\]]*\]:\s*(?:#|<>|<#>)(?:\s|$)")


class Removal(BaseModel):
    """One piece of the source no reader sees."""

    model_config = ConfigDict(frozen=True)

    kind: str
    text: str = Field(description="what was hidden (decoded for tag characters)")

    def label(self) -> str:
        return f"{self.kind}: {snippet(self.text)}"


class VisibleText(BaseModel):
    """The visible text of a rendered report and what rendering left out."""

    model_config = ConfigDict(frozen=True)

    text: str
    removals: list[Removal] = Field(default_factory=list)


def snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


_SUSPECT = re.compile(r"[^\x20-\x7e\n\t]")
"""Characters worth a look: everything but printable ASCII, newline and tab."""


def strip_invisible(text: str) -> tuple[str, list[Removal]]:
    """``text`` without format characters, variation selectors and tag characters."""
    removals: list[Removal] = []
    kept: list[str] = []
    tags: list[str] = []
    invisible = 0
    last = 0

    def flush_tags() -> None:
        if tags:
            removals.append(Removal(kind="tag_unicode", text="".join(tags)))
            tags.clear()

    for match in _SUSPECT.finditer(text):
        char, start = match.group(0), match.start()
        if start > last:
            flush_tags()
            kept.append(text[last:start])
        last = start + 1
        code = ord(char)
        if code in TAG_BLOCK:
            if 0xE0020 <= code <= 0xE007E:
                tags.append(chr(code - 0xE0000))
            continue
        flush_tags()
        if _is_invisible(char):
            invisible += 1
            continue
        kept.append(char)
    flush_tags()
    kept.append(text[last:])
    if invisible:
        removals.append(
            Removal(
                kind="invisible_unicode",
                text=f"{invisible} zero-width, bidirectional or other invisible character(s)",
            )
        )
    return "".join(kept), removals


def _is_invisible(char: str) -> bool:
    if char in "\n\t":
        return False
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return True
    if code in (0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800):  # Hangul fillers, braille blank
        return True
    return unicodedata.category(char) in ("Cf", "Co", "Cn") or (
        unicodedata.category(char) == "Cc" and char not in "\r"
    )


def visible_text(markdown: str) -> VisibleText:
    """The text a reader sees of ``markdown`` rendered (see the module docstring)."""
    source, removals = strip_invisible(markdown.replace("\r\n", "\n").replace("\r", "\n"))
    env: dict[str, object] = {}
    tokens = _MD.parse(source, env)
    removals.extend(_consumed_lines(source, tokens))
    html = _MD.renderer.render(tokens, _MD.options, env)
    unterminated = html.rfind("<!--")
    if unterminated >= 0 and "-->" not in html[unterminated:]:
        # A browser reads a comment that is never closed as running to the end of the page.
        removals.append(Removal(kind="html_comment", text=html[unterminated + 4 :]))
        html = html[:unterminated]
    parser = _VisibleHtml()
    parser.feed(html)
    parser.close()
    removals.extend(parser.removals)
    text, late = strip_invisible(parser.text())  # entities such as &#8203; decode late
    removals.extend(late)
    return VisibleText(text=text, removals=removals)


def _consumed_lines(source: str, tokens: Sequence[Token]) -> list[Removal]:
    """Source lines no block token covers: link reference definitions the renderer consumed."""
    lines = source.split("\n")
    covered = [False] * len(lines)
    for token in tokens:
        if token.map is not None and token.level == 0:
            start, end = token.map
            for i in range(start, min(end, len(lines))):
                covered[i] = True
    removals: list[Removal] = []
    block: list[str] = []
    for line, is_covered in [*zip(lines, covered, strict=True), ("", True)]:
        if not is_covered and line.strip():
            block.append(line)
            continue
        if block:
            text = "\n".join(block)
            kind = (
                "comment_link" if _COMMENT_LINK_TARGET.match(block[0]) else "reference_definition"
            )
            removals.append(Removal(kind=kind, text=text))
            block = []
    return removals


def _hidden_by_style(style: str) -> bool:
    props: dict[str, str] = {}
    for declaration in style.split(";"):
        name, _, value = declaration.partition(":")
        if value:
            props[name.strip().lower()] = " ".join(value.strip().lower().split())
    if props.get("display") == "none" or props.get("visibility") in ("hidden", "collapse"):
        return True
    opacity = _length(props.get("opacity", ""))
    if opacity is not None and (opacity[0] / (100.0 if opacity[1] == "%" else 1.0)) <= 0.1:
        return True
    size = _length(props.get("font-size", ""))
    if size is not None:
        amount, unit = size
        if amount <= 0 or (unit == "px" and amount < 4) or (unit in ("em", "rem") and amount < 0.3):
            return True
        if unit == "%" and amount < 30:
            return True
    color = props.get("color", "").replace(" ", "")
    if color == "transparent" or color in _WHITE or _zero_alpha(color):
        return True
    overflow_hidden = props.get("overflow", "") in ("hidden", "clip")
    for prop in ("width", "height", "max-width", "max-height"):
        length = _length(props.get(prop, ""))
        if length is not None and length[0] <= 0 and (overflow_hidden or prop.startswith("max")):
            return True
    clip = props.get("clip", "") + props.get("clip-path", "")
    if re.search(
        r"rect\(\s*0[a-z]*[\s,]+0[a-z]*[\s,]+0[a-z]*[\s,]+0|inset\(\s*50%|circle\(\s*0", clip
    ):
        return True
    if re.search(r"scale[xy]?\(\s*0(?:\.0*)?\s*[,)]", props.get("transform", "")):
        return True
    for prop in ("left", "top", "right", "text-indent", "margin-left", "margin-top"):
        length = _length(props.get(prop, ""))
        if length is not None and length[1] in ("px", "em", "rem", "") and length[0] <= _OFF_PAGE:
            return True
    return False


def _length(value: str) -> tuple[float, str] | None:
    match = _NUMBER.match(value.replace("!important", "").strip())
    if match is None:
        return None
    return float(match.group(1)), match.group(2)


def _zero_alpha(color: str) -> bool:
    rgba = re.match(r"^(?:rgba|hsla)\(([^)]*)\)$", color)
    if rgba:
        parts = re.split(r"[,/]", rgba.group(1))
        alpha = _length(parts[-1]) if len(parts) == 4 else None
        return alpha is not None and alpha[0] <= 0.1
    slash = re.match(r"^(?:rgb|hsl)\([^)]*/\s*([\d.]+%?)\)$", color)
    if slash:
        alpha = _length(slash.group(1))
        return alpha is not None and alpha[0] / (100 if alpha[1] == "%" else 1) <= 0.1
    return bool(re.match(r"^#(?:[0-9a-f]{3}0|[0-9a-f]{6}0[0-9a-f])$", color))


class _VisibleHtml(HTMLParser):
    """Rendered HTML to the Markdown-shaped text a reader sees."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.removals: list[Removal] = []
        self._lines: list[str] = []
        self._current: list[str] = []
        self._prefix = ""
        self._stack: list[tuple[str, bool]] = []  # (tag, hidden)
        self._hidden_text: list[str] = []
        self._hidden_depth = 0
        self._lists: list[list[int | None]] = []  # per open list: [counter or None]
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._header_row = False
        self._pre = 0
        self._quote = 0

    # ----------------------------------------------------------------- structure

    def _hidden(self) -> bool:
        return self._hidden_depth > 0

    def _break(self) -> None:
        line = "".join(self._current)
        if self._pre:
            for part in line.split("\n"):
                self._lines.append(self._quote_prefix() + part.rstrip())
        else:
            line = " ".join(line.split())
            if line:
                self._lines.append(self._quote_prefix() + self._prefix + line)
        self._current = []
        self._prefix = ""

    def _quote_prefix(self) -> str:
        return "> " * self._quote

    def _blank(self) -> None:
        self._break()
        if self._lines and self._lines[-1] != "":
            self._lines.append("")

    def text(self) -> str:
        self._break()
        out = "\n".join(self._lines)
        return re.sub(r"\n{3,}", "\n\n", out).strip("\n")

    # ----------------------------------------------------------------- parser events

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): (value or "") for name, value in attrs}
        if tag not in _HIDDEN_ELEMENTS | _VOID | _BLOCK | _INLINE:
            # Not an HTML element: a browser shows its content but never the tag itself.
            self.removals.append(Removal(kind="html_markup", text=self.get_starttag_text() or tag))
        for name, kind in (("alt", "image_alt"), ("title", "title_attribute")):
            if values.get(name, "").strip():
                self.removals.append(Removal(kind=kind, text=values[name]))
        if values.get("aria-label", "").strip():
            self.removals.append(Removal(kind="aria_label", text=values["aria-label"]))
        hidden = (
            tag in _HIDDEN_ELEMENTS
            or "hidden" in values
            or values.get("aria-hidden", "").lower() == "true"
            or _hidden_by_style(values.get("style", ""))
            or _hidden_by_style(f"color: {values['color']}" if "color" in values else "")
        )
        if tag in _VOID:
            if not self._hidden():
                if tag == "br":
                    if self._cell is not None:
                        self._cell.append(" ")
                    else:
                        self._break()
                elif tag == "hr":
                    self._blank()
                    self._lines.append("---")
            return
        self._stack.append((tag, hidden))
        if hidden:
            self._hidden_depth += 1
        if self._hidden():
            return
        self._open(tag)

    def _open(self, tag: str) -> None:
        if tag in ("ul", "ol"):
            self._break()
            self._lists.append([1 if tag == "ol" else None])
        elif tag == "li":
            self._break()
            depth = max(len(self._lists) - 1, 0)
            counter = self._lists[-1][0] if self._lists else None
            marker = f"{counter}." if counter is not None else "-"
            if counter is not None and self._lists:
                self._lists[-1][0] = counter + 1
            self._prefix = "  " * depth + marker + " "
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._blank()
            self._prefix = "#" * int(tag[1]) + " "
        elif tag == "tr":
            self._break()
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
            self._header_row = self._header_row or tag == "th"
        elif tag == "pre":
            self._blank()
            self._pre += 1
        elif tag == "blockquote":
            self._blank()
            self._quote += 1
        elif tag in _BLOCK:
            self._blank()

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or not any(t == tag for t, _ in self._stack):
            return
        while self._stack:
            open_tag, hidden = self._stack.pop()
            if not self._hidden():
                self._close(open_tag)
            if hidden:
                self._hidden_depth -= 1
                if self._hidden_depth == 0:
                    self._flush_hidden()
            if open_tag == tag:
                break

    def _close(self, tag: str) -> None:
        if tag in ("ul", "ol"):
            self._break()
            if self._lists:
                self._lists.pop()
            if not self._lists:
                self._blank()
        elif tag == "li":
            self._break()
        elif tag in ("td", "th"):
            if self._row is not None and self._cell is not None:
                self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr":
            if self._row:
                self._lines.append(self._quote_prefix() + "| " + " | ".join(self._row) + " |")
                if self._header_row:
                    self._lines.append("|" + "---|" * len(self._row))
            self._row = None
            self._header_row = False
        elif tag == "pre":
            self._break()
            self._pre = max(self._pre - 1, 0)
            self._blank()
        elif tag == "blockquote":
            self._break()
            self._quote = max(self._quote - 1, 0)
            self._blank()
        elif tag in _BLOCK:
            self._blank()

    def _flush_hidden(self) -> None:
        text = " ".join("".join(self._hidden_text).split())
        self._hidden_text = []
        if text:
            self.removals.append(Removal(kind="hidden_html", text=text))

    def handle_data(self, data: str) -> None:
        if self._hidden():
            self._hidden_text.append(data)
            return
        if self._cell is not None:
            self._cell.append(data)
        elif self._pre:
            self._current.append(data)
        else:
            # A soft line break stays a line break: quotes and the line-based checks on anchors
            # read the report's lines as written.
            first, *rest = data.split("\n")
            self._current.append(first)
            for part in rest:
                self._break()
                self._current.append(part)

    def handle_comment(self, data: str) -> None:
        if self._hidden():
            self._hidden_text.append(data)
            return
        self.removals.append(Removal(kind="html_comment", text=data))

    def handle_decl(self, decl: str) -> None:
        self.removals.append(Removal(kind="html_markup", text=decl))

    def handle_pi(self, data: str) -> None:
        self.removals.append(Removal(kind="html_markup", text=data))

    def unknown_decl(self, data: str) -> None:
        self.removals.append(Removal(kind="html_markup", text=data))

    def close(self) -> None:
        super().close()
        if self._hidden_depth:
            self._hidden_depth = 0
            self._flush_hidden()

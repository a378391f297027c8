"""Headless Chromium for the tests that open pages as a person would (the run browser's):
``chromium`` runs it (Debian's package, installed by scripts/_chromium.sh; without it these
tests fail, they do not skip), ``dump_dom`` parses the DOM it rendered, ``assert_not_blank``
checks a screenshot shows something."""

from __future__ import annotations

import struct
import subprocess
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

CHROMIUM = Path("/usr/bin/chromium")


def chromium(url: str, workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM.exists(), (
        f"{CHROMIUM} is missing: install Debian's chromium (bash scripts/_chromium.sh, as root)"
    )
    command = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={workdir}",
        "--window-size=1400,1000",
        *args,
        url,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def dump_dom(url: str, workdir: Path) -> Element:
    return parse_html(chromium(url, workdir, "--dump-dom").stdout)


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list[Element] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def text(self) -> str:
        parts = [*self.texts, *(c.text() for c in self.children)]
        return " ".join(p for p in parts if p.strip())

    def iter(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            yield from child.iter()

    def find_all(self, tag: str, cls: str | None = None, **attrs: str) -> list[Element]:
        return [
            e
            for e in self.iter()
            if e.tag == tag
            and (cls is None or cls in e.attrs.get("class", "").split())
            and all(e.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def find(self, tag: str, cls: str | None = None, **attrs: str) -> Element:
        found = self.find_all(tag, cls, **attrs)
        assert found, f"no <{tag} class={cls!r} {attrs}>"
        return found[0]


VOID = {"meta", "br", "img", "input", "link", "hr", "col", "wbr", "source", "area", "base"}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].texts.append(data)


def parse_html(html: str) -> Element:
    parser = _Parser()
    parser.feed(html)
    return parser.root


def png_pixels(path: Path) -> np.ndarray:
    """The RGB(A) pixels of an 8-bit PNG (a tiny reader: zlib + the five scanline filters)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        pos += 12 + n
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6), (depth, color)
    bpp = 3 if color == 2 else 4
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:]
        if kind == 0:
            row = line.copy()
        elif kind == 1:  # Sub: a running sum per channel, modulo 256
            row = np.cumsum(line.reshape(width, bpp), axis=0, dtype=np.uint8).reshape(-1)
        elif kind == 2:
            row = line + prev
        else:  # Average, Paeth: each byte depends on the one just decoded
            row = np.zeros(stride, dtype=np.uint8)
            cur, up = line.tolist(), prev.tolist()
            for i in range(stride):
                a = int(row[i - bpp]) if i >= bpp else 0
                b, c = up[i], up[i - bpp] if i >= bpp else 0
                if kind == 3:
                    row[i] = (cur[i] + (a + b) // 2) & 0xFF
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    row[i] = (cur[i] + pred) & 0xFF
        out[y] = row
        prev = row
    return out.reshape(height, width, bpp)[:, :, :3]


def assert_not_blank(png: Path, size: tuple[int, int] = (1400, 1000)) -> None:
    """``png`` is a ``size`` (width, height) screenshot with something on it."""
    pixels = png_pixels(png)
    assert pixels.shape == (size[1], size[0], 3)
    packed = pixels.astype(np.uint32) @ np.array([1 << 16, 1 << 8, 1], dtype=np.uint32)
    colours = len(np.unique(packed))
    white = float(np.all(pixels == 255, axis=2).mean())
    assert colours > 50, f"{png}: {colours} colours, a blank page?"
    assert white < 0.97, f"{png}: {white:.0%} white"

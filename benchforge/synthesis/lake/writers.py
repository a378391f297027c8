"""Writing one lake file from a query's rows: CSV (a delimiter and an encoding), JSON (one
array of objects), JSON Lines, Parquet, Excel workbooks (several table blocks on one sheet),
and the prose of Markdown or plain-text reports. The same rows give the same bytes."""

from __future__ import annotations

import csv
import io
import json
import re
import string
import textwrap
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
from openpyxl import Workbook as XlsxWorkbook

MISSING_IN_PROSE = "not recorded"
_SENTENCES_PER_PARAGRAPH = 5


def write_csv(
    con: duckdb.DuckDBPyConnection,
    query: str,
    path: Path,
    delimiter: str,
    encodings: Sequence[str],
    note: str = "",
) -> tuple[int, str]:
    """Writes the rows with a header, below ``note`` (lines of text, ``{rows}`` standing for
    the row count) when one is given; the first of ``encodings`` that can write every value is
    used (UTF-8 when none can). Returns (rows, encoding)."""
    result = con.execute(query)
    header = [d[0] for d in result.description]
    rows = result.fetchall()
    buffer = io.StringIO()
    if note:
        buffer.write(note.replace("{rows}", f"{len(rows):,}") + "\n")
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_csv_value(v) for v in row] for row in rows)
    text = buffer.getvalue()
    for encoding in [*encodings, "utf-8"]:
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError:
            continue
        path.write_bytes(data)
        return len(rows), encoding
    raise AssertionError("unreachable: UTF-8 encodes every text")


def write_json(con: duckdb.DuckDBPyConnection, query: str, path: Path, lines: bool) -> int:
    """An array of objects (``lines``: one object per line), UTF-8, dates in ISO 8601."""
    result = con.execute(query)
    header = [d[0] for d in result.description]
    objects = [dict(zip(header, map(_json_value, row), strict=True)) for row in result.fetchall()]
    if lines:
        text = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects)
    else:
        text = json.dumps(objects, ensure_ascii=False, indent=1) + "\n"
    path.write_text(text, encoding="utf-8")
    return len(objects)


def write_parquet(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> int:
    result = con.execute(query)
    # to_arrow_table() is DuckDB 1.4's name for what older releases call fetch_arrow_table()
    fetch = getattr(result, "to_arrow_table", None) or result.fetch_arrow_table
    table = fetch()
    pq.write_table(table, path, compression="zstd")
    return int(table.num_rows)


@dataclass(frozen=True)
class BlockWritten:
    note_row: int
    header_row: int
    rows: int


_FIXED_TIME = datetime(2000, 1, 1)
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_MODIFIED = re.compile(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)")


def write_xlsx(
    con: duckdb.DuckDBPyConnection,
    blocks: Sequence[tuple[str, str]],
    path: Path,
    *,
    sheet: str,
    preamble: Sequence[str] = (),
) -> list[BlockWritten]:
    """One sheet: the ``preamble`` lines, then per (note, query) block the note line (``{rows}``
    standing for the block's row count), the header, the rows and one blank row. Dates and
    numbers are written as Excel values. The zip entries and the workbook's properties carry
    fixed times, so the same rows give the same bytes."""
    book = XlsxWorkbook()
    ws = book.active
    assert ws is not None
    ws.title = sheet
    for line in preamble:
        ws.append([line])
    written: list[BlockWritten] = []
    for note, query in blocks:
        result = con.execute(query)
        header = [d[0] for d in result.description]
        rows = result.fetchall()
        ws.append([note.replace("{rows}", f"{len(rows):,}")])
        note_row = ws.max_row
        ws.append(header)
        header_row = ws.max_row
        for row in rows:
            ws.append([_xlsx_value(v) for v in row])
        ws.append([])
        written.append(BlockWritten(note_row=note_row, header_row=header_row, rows=len(rows)))
    book.properties.created = _FIXED_TIME
    book.properties.modified = _FIXED_TIME
    buffer = io.BytesIO()
    book.save(buffer)
    _write_fixed_zip(buffer.getvalue(), path)
    return written


def _write_fixed_zip(data: bytes, path: Path) -> None:
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=_ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = info.external_attr
            data = source.read(info.filename)
            if info.filename == "docProps/core.xml":  # openpyxl stamps the save time here
                data = _MODIFIED.sub(rb"\g<1>2000-01-01T00:00:00Z\g<2>", data)
            target.writestr(fixed, data)


def _xlsx_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, time):
        return value.isoformat()
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.replace(tzinfo=None)
    return value


def render_sentence(sentence: str, row: dict[str, Any]) -> str:
    """The sentence with each ``{column:spec}`` formatted from the row; a missing value reads
    ``not recorded`` (a number's format spec is not applied to it)."""
    parts: list[str] = []
    for literal_text, field, spec, conversion in string.Formatter().parse(sentence):
        parts.append(literal_text)
        if field is None:
            continue
        value = row[field]
        if value is None:
            parts.append(MISSING_IN_PROSE)
        elif conversion:
            parts.append(format(repr(value) if conversion == "r" else str(value), spec or ""))
        else:
            parts.append(format(value, spec or ""))
    return "".join(parts)


def write_report(
    con: duckdb.DuckDBPyConnection,
    query: str,
    path: Path,
    markdown: bool,
    title: str,
    intro: str,
    sentence: str,
) -> int:
    """One sentence per row, in paragraphs of five, under the title and the introduction."""
    result = con.execute(query)
    header = [d[0] for d in result.description]
    sentences = [
        render_sentence(sentence, dict(zip(header, row, strict=True))) for row in result.fetchall()
    ]
    paragraphs = [
        " ".join(sentences[i : i + _SENTENCES_PER_PARAGRAPH])
        for i in range(0, len(sentences), _SENTENCES_PER_PARAGRAPH)
    ]
    if intro:
        paragraphs.insert(0, intro)
    if markdown:
        text = f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n"
    else:
        wrapped = [
            textwrap.fill(p, width=88, break_long_words=False, break_on_hyphens=False)
            for p in paragraphs
        ]
        text = f"{title}\n{'=' * len(title)}\n\n" + "\n\n".join(wrapped) + "\n"
    path.write_text(text, encoding="utf-8")
    return len(sentences)


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return value


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value

"""Writing one lake file from a query's rows: CSV (a delimiter and an encoding), JSON (one
array of objects), JSON Lines, Parquet, and the prose of Markdown or plain-text reports. The
same rows give the same bytes."""

from __future__ import annotations

import csv
import io
import json
import string
import textwrap
from collections.abc import Sequence
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

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

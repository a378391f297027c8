"""Tables and documents derived from a dataset's clean tables and written next to them: wide
annual tables, year-over-year tables, national and regional aggregates, distractor tables and
policy-style Markdown documents. Each returns its header and text rows (documents: file name ->
text) and the parameters its record keeps."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from benchforge.synthesis.explore_env.frame import Frame, draw, number_text, to_text
from benchforge.synthesis.explore_env.spec import (
    Aggregates,
    Distractor,
    Documents,
    WideAnnual,
    YearOverYear,
)

Rows = list[list[str]]


def _year(value: Any) -> int | None:
    return value.year if isinstance(value, date | datetime) else None


def annual_values(
    frame: Frame,
    keys: list[str],
    period: str,
    value: str,
    aggregate: str,
    years: tuple[int, int] | None,
) -> dict[tuple[Any, ...], dict[int, float]]:
    """(keys) -> year -> the sum of ``value`` over the year's rows (``last``: the value of the
    year's latest period, summed over its rows); rows without a value or a period left out."""
    key_idx = [frame.index(k) for k in keys]
    p, v = frame.index(period), frame.index(value)
    sums: dict[tuple[Any, ...], dict[int, float]] = {}
    latest: dict[tuple[Any, ...], dict[int, Any]] = {}
    for row in frame.rows:
        year = _year(row[p])
        if year is None or row[v] is None or (years and not years[0] <= year <= years[1]):
            continue
        key = tuple(row[k] for k in key_idx)
        per_year = sums.setdefault(key, {})
        if aggregate == "last":
            seen = latest.setdefault(key, {}).get(year)
            if seen is not None and row[p] < seen:
                continue
            if seen is None or row[p] > seen:
                latest[key][year] = row[p]
                per_year[year] = 0.0
        per_year[year] = per_year.get(year, 0.0) + float(row[v])
    return sums


def _number(value: Any, decimals: int | None) -> str:
    return "" if value is None else number_text(float(value), decimals)


def _sorted_keys(keys: Any) -> list[tuple[Any, ...]]:
    return sorted(keys, key=lambda key: tuple(to_text(k) for k in key))


def wide_annual(frame: Frame, spec: WideAnnual) -> tuple[list[str], Rows]:
    values = annual_values(frame, spec.keys, spec.period, spec.value, spec.aggregate, spec.years)
    all_years = sorted({y for per_year in values.values() for y in per_year})
    header = [*spec.keys, *(str(y) for y in all_years)]
    rows = [
        [
            *(to_text(k) for k in key),
            *(_number(values[key].get(y), spec.decimals) for y in all_years),
        ]
        for key in _sorted_keys(values)
    ]
    return header, rows


def year_over_year(frame: Frame, spec: YearOverYear) -> tuple[list[str], Rows]:
    years = (spec.years[0] - 1, spec.years[1]) if spec.years else None
    values = annual_values(frame, spec.keys, spec.period, spec.value, "sum", years)
    header = [*spec.keys, "year", "yoy_pct"]
    rows: Rows = []
    for key in _sorted_keys(values):
        per_year = values[key]
        for year in sorted(per_year):
            before = per_year.get(year - 1)
            if before is None or (spec.years and year < spec.years[0]):
                continue
            growth = None if before == 0 else (per_year[year] / before - 1) * 100
            text = "" if growth is None else number_text(growth, spec.decimals)
            rows.append([*(to_text(k) for k in key), str(year), text])
    return header, rows


AGGREGATE_LEVEL = "level"
AGGREGATE_ROWS = "rows"


def aggregates(frame: Frame, spec: Aggregates) -> tuple[list[str], Rows]:
    """Regional rows (sorted by region and dimensions), then national rows: ``level``,
    the region (its column's name), the dimensions, ``rows`` and one sum per measure."""
    r = frame.index(spec.region)
    dims = [frame.index(d) for d in spec.dimensions]
    measures = [frame.index(m) for m in spec.measures]
    levels: dict[tuple[str, Any, tuple[Any, ...]], list[Any]] = {}
    for row in frame.rows:
        group = tuple(row[d] for d in dims)
        for level, region in (("regional", row[r]), ("national", spec.national_label)):
            acc = levels.setdefault((level, region, group), [0] + [None] * len(measures))
            acc[0] += 1
            for k, m in enumerate(measures):
                if row[m] is not None:
                    acc[k + 1] = row[m] if acc[k + 1] is None else acc[k + 1] + row[m]
    header = [AGGREGATE_LEVEL, spec.region, *spec.dimensions, AGGREGATE_ROWS, *spec.measures]
    order = sorted(
        levels,
        key=lambda k: (k[0] != "regional", to_text(k[1]), tuple(to_text(v) for v in k[2])),
    )
    rows = [
        [
            level,
            to_text(region),
            *(to_text(v) for v in group),
            to_text(levels[level, region, group][0]),
            *(_number(a, spec.decimals) for a in levels[level, region, group][1:]),
        ]
        for level, region, group in order
    ]
    return header, rows


def distractor(frame: Frame, spec: Distractor, seed: int) -> tuple[list[str], Rows]:
    scaled = [frame.index(c) for c in spec.columns]
    low, high = spec.scale
    rows: Rows = []
    for n, row in enumerate(frame.rows):
        if draw(seed, spec.name, "sample", n) >= spec.sample_rate:
            continue
        factor = low + (high - low) * draw(seed, spec.name, "scale", n)
        out = list(row)
        for c in scaled:
            if out[c] is not None:
                out[c] = round(float(out[c]) * factor, 2)
        rows.append([to_text(v) for v in out])
    return list(frame.columns), rows


def document_text(title: str, fields: list[tuple[str, str]], body: str) -> str:
    lines = [f"# {title}", "", *(f"- {name}: {value}" for name, value in fields), "", body]
    return "\n".join(lines).rstrip("\n") + "\n"


def documents(frame: Frame, spec: Documents) -> dict[str, str]:
    """File name (``<id>.md``) -> the document, one per row with an id."""
    i, t, b = (
        frame.index(spec.id_column),
        frame.index(spec.title_column),
        frame.index(spec.body_column),
    )
    fields = [frame.index(f) for f in spec.fields]
    written: dict[str, str] = {}
    for row in frame.rows:
        if row[i] is None:
            continue
        pairs = [(spec.fields[k], to_text(row[f])) for k, f in enumerate(fields)]
        written[f"{row[i]}.md"] = document_text(to_text(row[t]), pairs, to_text(row[b]))
    return written


def parse_document(text: str, fields: list[str]) -> tuple[str, dict[str, str], str]:
    """The title, the fields and the body of a document written by :func:`document_text`."""
    lines = text.split("\n")
    title = lines[0].removeprefix("# ")
    values: dict[str, str] = {}
    n = 2
    for name in fields:
        values[name] = lines[n].removeprefix(f"- {name}:").removeprefix(" ")
        n += 1
    body = "\n".join(lines[n + 1 :]).removesuffix("\n")
    return title, values, body

"""The clean way to read an environment, given its record: the documented procedure that undoes
each noise kind (:func:`clean_reading`, in words, for reference solutions and docs) and the code
that does it (:func:`read_clean_table`, :func:`read_clean_derived`), for tests and milestone
values. A table read this way equals the dataset's table, but for the rounding differences
(within the record's ``max_abs_error`` per row) and the unit conversions (within half a unit of
the written decimals times the unit's factor)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from benchforge.synthesis.explore_env.derived import AGGREGATE_ROWS, parse_document
from benchforge.synthesis.explore_env.frame import Frame, from_text, read_csv
from benchforge.synthesis.explore_env.record import ENVIRONMENT_DIR, EnvironmentRecord, UnitsApplied


class CleanReading(BaseModel):
    """How to read one table or derived file of an environment cleanly."""

    name: str
    path: str
    steps: list[str]


def clean_reading(record: EnvironmentRecord) -> dict[str, CleanReading]:
    """Table or derived name -> the steps that read it cleanly, in order."""
    readings: dict[str, CleanReading] = {}
    for table in record.tables:
        steps = [f"read {table.path} as text (CSV, UTF-8, a header row)"]
        if table.subsets:
            steps.append(
                f"read it alone: {', '.join(sorted(table.subsets))} hold the same rows split by "
                f"{table.subset_column}; never add them to it"
            )
        for missing in table.missing:
            markers = ", ".join(repr(m) for m in missing.markers)
            steps.append(f"{missing.column}: the markers {markers} mean a missing value")
        for units in reversed(table.units):
            steps.append(_unit_step(units))
        for rounding in table.rounding:
            steps.append(
                f"{rounding.column}: rows are rounded to {rounding.decimals} decimals; compare "
                f"within {rounding.max_abs_error:g}"
            )
        for variants in reversed(table.variants):
            steps.append(
                f"{variants.column}: map each name variant to its canonical name "
                f"({', '.join(variants.rows_per_kind) or 'none used'})"
            )
        if table.totals is not None:
            t = table.totals
            steps.append(
                f"drop the rows whose {t.label_column} is {t.label!r}: totals of "
                f"{', '.join(t.measures)} per {', '.join(t.group_by) or 'table'}"
            )
        steps.append("cast each column to its type")
        readings[table.table] = CleanReading(name=table.table, path=table.path, steps=steps)
    for derived in record.derived:
        p = derived.parameters
        if derived.kind == "wide_annual":
            steps = [
                f"unpivot the year columns into (year, {p['value']}) per {', '.join(p['keys'])}: "
                f"the {p['aggregate']} of {derived.source_table}.{p['value']} over the year"
            ]
        elif derived.kind == "year_over_year":
            steps = [
                f"yoy_pct = (annual sum of {p['value']} / the year before's - 1) x 100, rounded "
                f"to {p['decimals']} decimals, per {', '.join(p['keys'])}"
            ]
        elif derived.kind == "aggregates":
            steps = [
                f"keep level 'regional' to sum over regions, or level 'national' "
                f"({p['national_label']!r}) alone: never both"
            ]
        elif derived.kind == "distractor":
            steps = [f"ignore: not {derived.source_table}, its figures are scaled"]
        else:
            steps = [
                f"one Markdown file per {derived.source_table} row: '# title', '- field: value' "
                "lines, a blank line, the body"
            ]
        readings[derived.name] = CleanReading(name=derived.name, path=derived.path, steps=steps)
    return readings


def _unit_step(units: UnitsApplied) -> str:
    factors = ", ".join(f"{label} x {factor:g}" for label, factor in units.units.items())
    where = f"the unit in {units.unit_column}" if units.unit_column else "the unit after the number"
    return f"{units.column}: multiply by the factor of {where} ({factors}) to the stored unit"


def read_clean_table(
    out_dir: Path | str, record: EnvironmentRecord, table: str, restore_missing: bool = False
) -> Frame:
    """The table with its noise undone, values typed as in the dataset (columns not written are
    left out). ``restore_missing``: the blanked cells get the record's values back (else None)."""
    written = record.table(table)
    header, rows = read_csv(Path(out_dir) / ENVIRONMENT_DIR / written.path)
    cells: list[list[Any]] = [list(row) for row in rows]
    for missing in written.missing:
        c = header.index(missing.column)
        if restore_missing:
            for i, text in missing.cells:
                cells[i][c] = text
        else:
            markers = set(missing.markers)
            for row in cells:
                if row[c] in markers:
                    row[c] = None
    for units in reversed(written.units):
        _undo_units(header, cells, units)
    if written.totals is not None:
        label = header.index(written.totals.label_column)
        cells = [row for row in cells if row[label] != written.totals.label]
    for variants in reversed(written.variants):
        c = header.index(variants.column)
        for row in cells:
            row[c] = variants.variants.get(row[c], row[c])
    kinds = [written.source_types[c] for c in header]
    typed = [
        [
            v if not isinstance(v, str) and v is not None else from_text(v, k)
            for v, k in zip(row, kinds, strict=True)
        ]
        for row in cells
    ]
    return Frame(header, typed)


def _undo_units(header: list[str], cells: list[list[Any]], units: UnitsApplied) -> None:
    c = header.index(units.column)
    labels = sorted(units.units, key=len, reverse=True)
    u = header.index(units.unit_column) if units.unit_column else None
    for row in cells:
        text = row[c]
        if text is None or text == "":
            row[c] = None
            continue
        if u is not None:
            row[c] = float(text) * units.units[row[u]]
            continue
        label = next(lab for lab in labels if text.endswith(" " + lab))
        row[c] = float(text.removesuffix(" " + label)) * units.units[label]
    if u is not None:
        header.pop(u)
        for row in cells:
            row.pop(u)


def read_clean_derived(out_dir: Path | str, record: EnvironmentRecord, name: str) -> Frame:
    """A derived table read cleanly: a wide annual table unpivoted to (keys, ``year``, value);
    year over year as (keys, ``year``, ``yoy_pct``); aggregates as written; documents as (id,
    title, fields, body), one row per file in name order; text read as text, numbers as
    float, years as int."""
    derived = record.derived_file(name)
    environment = Path(out_dir) / ENVIRONMENT_DIR
    p = derived.parameters
    if derived.kind == "documents":
        fields = list(p["fields"])
        frame = Frame([p["id_column"], p["title_column"], *fields, p["body_column"]])
        for path in sorted((environment / derived.path).glob("*.md")):
            title, values, body = parse_document(path.read_text(encoding="utf-8"), fields)
            frame.rows.append(
                [path.stem, title, *(values[f] or None for f in fields), body or None]
            )
        return frame
    header, rows = read_csv(environment / derived.path)
    if derived.kind == "wide_annual":
        keys = list(p["keys"])
        frame = Frame([*keys, "year", p["value"]])
        for row in rows:
            for j, column in enumerate(header[len(keys) :], start=len(keys)):
                if row[j] != "":
                    frame.rows.append(
                        [*(v or None for v in row[: len(keys)]), int(column), float(row[j])]
                    )
        return frame
    numeric = {"yoy_pct", AGGREGATE_ROWS, *p.get("measures", []), *p.get("columns", [])}
    frame = Frame(header)
    for row in rows:
        frame.rows.append(
            [
                int(v)
                if c == "year"
                else (float(v) if v != "" else None)
                if c in numeric
                else v or None
                for c, v in zip(header, row, strict=True)
            ]
        )
    return frame

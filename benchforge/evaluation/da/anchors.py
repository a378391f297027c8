"""Anchors: the values a ``da_open`` rubric cites, computed by code on the analysis database.

"Calculate first, then author": an accuracy item never hard-codes a number; it names an anchor
whose SQL runs on the same tables the agent gets, so another seed gives another number (and
another rubric version), and the judge's verdict can be checked against the value by code.

Every failure here is an authoring error of the task, reported as a ``TaskSpecError`` on
``anchors.<name>`` of its ``task.yaml`` and raised while the gold is prepared, before any judge
is called: an anchor that silently evaluated to nothing would make its items unearnable.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from benchforge.evaluation.da.errors import spec_error, task_file
from benchforge.evaluation.da.spec import AnchorSpec, DaOpenTask
from benchforge.evaluation.judges.evidence import find_numbers, states_anchor
from benchforge.evaluation.judges.models import AnchorValue
from benchforge.evaluation.tasks.loader import TASK_FILE
from benchforge.evaluation.tasks.models import LoadedTask

SAMPLE_VALUES: tuple[object, ...] = (1234.5, 1234, "text")


def evaluate_anchors(task: LoadedTask | DaOpenTask, db_path: Path) -> dict[str, AnchorValue]:
    """Each anchor's SQL run read-only on ``db_path`` (an ``analysis.duckdb``): exactly one
    row, one column, not null, and its ``format`` applied to it."""
    spec = task.spec if isinstance(task, LoadedTask) else task
    if not isinstance(spec, DaOpenTask):
        raise TypeError(f"{spec.id} is a {spec.family} task, not a da_open task")
    file = task_file(task) if isinstance(task, LoadedTask) else _spec_path(spec)
    if not spec.anchors:
        return {}
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {name: _evaluate(con, name, anchor, file) for name, anchor in spec.anchors.items()}
    finally:
        con.close()


def _evaluate(
    con: duckdb.DuckDBPyConnection, name: str, anchor: AnchorSpec, file: Path
) -> AnchorValue:
    field = f"anchors.{name}"
    try:
        cursor = con.execute(anchor.sql)
        columns = len(cursor.description or [])
        rows = cursor.fetchmany(2)
    except duckdb.Error as err:
        raise spec_error(file, field, f"SQL failed: {_first_line(err)}") from None
    if columns != 1:
        raise spec_error(file, field, f"SQL must return one column, got {columns}")
    if len(rows) != 1:
        got = "no row" if not rows else "more than one row"
        raise spec_error(file, field, f"SQL must return exactly one row, got {got}")
    raw = rows[0][0]
    if raw is None:
        raise spec_error(file, field, "SQL returned NULL")
    value = _value(raw)
    if isinstance(value, float) and not math.isfinite(value):
        raise spec_error(file, field, f"SQL returned {value}")
    try:
        text = anchor.format.format(value)
    except (ValueError, TypeError, IndexError, KeyError) as err:
        raise spec_error(
            file, field, f"format {anchor.format!r} does not apply to {value!r}: {err}"
        ) from None
    number = value if isinstance(value, str) else float(value)
    if isinstance(number, str) != (anchor.unit == "text"):
        got = f"text {number!r}" if isinstance(number, str) else f"the number {number!r}"
        raise spec_error(file, f"{field}.unit", f"unit {anchor.unit!r} but the SQL returned {got}")
    result = AnchorValue(
        name=name,
        value=number,
        text=text,
        tolerance=anchor.tolerance,
        unit=anchor.unit,
        kind=anchor.kind,
    )
    if not isinstance(number, str) and not states_anchor(text, result):
        # A report quoting the rubric's own text would then be marked wrong.
        raise spec_error(file, field, _unstated(anchor, number, text))
    return result


def _unstated(anchor: AnchorSpec, number: float, text: str) -> str:
    """Why the anchor's own text does not state it: its digits, or its unit and kind."""
    digits_ok = any(
        math.isclose(abs(m.value), abs(number), rel_tol=anchor.tolerance, abs_tol=1e-9)
        for m in find_numbers(text)
    )
    if digits_ok:
        return (
            f"format {anchor.format!r} writes {number!r} as {text!r}, which does not read as "
            f"unit {anchor.unit!r}, kind {anchor.kind!r}: make the format show the unit (a "
            "percent needs '%', a currency its own symbol or none) or fix unit and kind"
        )
    return (
        f"format {anchor.format!r} writes {number!r} as {text!r}, off by more than the "
        f"tolerance {anchor.tolerance:g}: show more digits or raise the tolerance"
    )


def _value(raw: Any) -> int | float | str:
    """Integers stay integers (so ``{:d}`` formats them), other numbers become floats
    (DuckDB sums of decimals come back as ``Decimal``), dates and text become text."""
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float | Decimal):
        return float(raw)
    if isinstance(raw, datetime | date):
        return raw.isoformat()
    return str(raw)


def format_problem(anchor: AnchorSpec) -> str | None:
    """Why ``anchor.format`` cannot format any plausible value (None: it can): checked when
    the task is loaded, before there is data."""
    errors = []
    for sample in SAMPLE_VALUES:
        try:
            anchor.format.format(sample)
        except (ValueError, TypeError, IndexError, KeyError) as err:
            errors.append(str(err) or type(err).__name__)
        else:
            return None
    return f"format {anchor.format!r} formats no value: {errors[0]}"


def perturbed(
    anchors: Mapping[str, AnchorValue], specs: Mapping[str, AnchorSpec], factor: float
) -> dict[str, AnchorValue]:
    """Every numeric anchor multiplied by ``factor`` and formatted with its own format (text
    anchors are kept): the numbers of a report that looks right but is wrong."""
    out: dict[str, AnchorValue] = {}
    for name, anchor in anchors.items():
        if isinstance(anchor.value, str):
            out[name] = anchor
            continue
        value = anchor.value * factor
        out[name] = anchor.model_copy(
            update={"value": value, "text": _format_number(specs[name].format, value)}
        )
    return out


def _format_number(fmt: str, value: float) -> str:
    try:
        return fmt.format(value)
    except ValueError:  # an integer format ({:d}, {:,d})
        return fmt.format(round(value))


def _spec_path(spec: DaOpenTask) -> Path:
    return Path("task_specs") / spec.suite / spec.id / TASK_FILE


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__

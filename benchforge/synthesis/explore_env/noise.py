"""The noise of one written table (:class:`~benchforge.synthesis.explore_env.spec.TableNoise`),
applied in a fixed order to its clean rows: grand-total rows, name variants, rounding, units,
then missing-value markers. Every per-row decision is a draw of (seed, table, kind, column,
source row number); every change is returned as its record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchforge.synthesis.explore_env.frame import Frame, draw, number_text, pick, to_text
from benchforge.synthesis.explore_env.record import (
    MissingApplied,
    RoundingApplied,
    TotalsApplied,
    UnitsApplied,
    VariantsApplied,
)
from benchforge.synthesis.explore_env.spec import (
    MissingValues,
    MixedUnits,
    NameVariants,
    Rounding,
    TableNoise,
    TotalRows,
)

TOTAL = "total"


class NoiseConflict(ValueError):
    """The data makes a rule ambiguous (a total label that is already a value): ``field`` is
    the spec's field, for the error that names it."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


class NoisyTable:
    """A table on its way to being written: its rows, whether each is a total row, the source
    row each detail row came from, and the cells already rendered as text by a unit rule."""

    def __init__(self, frame: Frame) -> None:
        self.original = frame
        self.columns = list(frame.columns)
        self.rows: list[list[Any]] = [list(row) for row in frame.rows]
        self.source: list[int | None] = list(range(len(frame.rows)))
        self.texts: dict[tuple[int, int], str] = {}

    def row_key(self, i: int) -> object:
        source = self.source[i]
        return source if source is not None else f"{TOTAL}-{i}"

    def detail_rows(self) -> list[int]:
        return [i for i, source in enumerate(self.source) if source is not None]


def apply_noise(
    table: str,
    frame: Frame,
    noise: TableNoise,
    seed: int,
    lookup: Callable[[str], Frame],
) -> tuple[NoisyTable, dict[str, Any]]:
    """The noisy table and its records by kind (``totals``, ``variants``, ``rounding``,
    ``units``, ``missing``)."""
    noisy = NoisyTable(frame)
    records: dict[str, Any] = {"totals": None, "variants": [], "rounding": [], "units": []}
    if noise.total_rows is not None:
        label = noise.total_rows.label_column
        if noise.total_rows.label in {str(v) for v in frame.values(label)}:
            raise NoiseConflict(
                f"noise.{table}.total_rows.label",
                f"{noise.total_rows.label!r} is already a value of {table}.{label}: the total "
                "rows could not be told apart",
            )
        records["totals"] = _add_totals(noisy, noise.total_rows)
    for rule in noise.name_variants:
        records["variants"].append(_vary_names(noisy, rule, seed, table, lookup))
    for rounding in noise.rounding:
        records["rounding"].append(_round(noisy, rounding, seed, table))
    for units in noise.mixed_units:
        records["units"].append(_mix_units(noisy, units, seed, table))
    records["missing"] = (
        _blank(noisy, noise.missing_values, seed, table) if noise.missing_values else []
    )
    return noisy, records


def rendered(noisy: NoisyTable) -> list[list[str]]:
    """The rows as CSV text (unit columns included)."""
    return [
        [noisy.texts.get((i, j), to_text(value)) for j, value in enumerate(row)]
        for i, row in enumerate(noisy.rows)
    ]


def _add_totals(noisy: NoisyTable, rule: TotalRows) -> TotalsApplied:
    group_idx = [noisy.columns.index(c) for c in rule.group_by]
    measure_idx = [noisy.columns.index(c) for c in rule.measures]
    label_idx = noisy.columns.index(rule.label_column)
    sums: dict[tuple[Any, ...], list[Any]] = {}
    last: dict[tuple[Any, ...], int] = {}
    for i, row in enumerate(noisy.rows):
        group = tuple(row[g] for g in group_idx)
        totals = sums.setdefault(group, [None] * len(measure_idx))
        for k, m in enumerate(measure_idx):
            if row[m] is not None:
                totals[k] = row[m] if totals[k] is None else totals[k] + row[m]
        last[group] = i
    after: dict[int, list[tuple[Any, ...]]] = {}
    for group, i in last.items():
        after.setdefault(i, []).append(group)
    rows: list[list[Any]] = []
    source: list[int | None] = []
    total_rows: list[int] = []
    for i, row in enumerate(noisy.rows):
        rows.append(row)
        source.append(noisy.source[i])
        for group in after.get(i, []):
            total: list[Any] = [None] * len(noisy.columns)
            for g, value in zip(group_idx, group, strict=True):
                total[g] = value
            for m, value in zip(measure_idx, sums[group], strict=True):
                total[m] = value
            total[label_idx] = rule.label
            total_rows.append(len(rows))
            rows.append(total)
            source.append(None)
    noisy.rows, noisy.source = rows, source
    return TotalsApplied(
        label_column=rule.label_column,
        label=rule.label,
        group_by=list(rule.group_by),
        measures=list(rule.measures),
        rows=total_rows,
    )


def _candidate_variants(
    names: set[str], rule: NameVariants, lookup: Callable[[str], Frame]
) -> dict[str, dict[str, str]]:
    """Canonical name -> {variant kind: variant}, only the variants no other name has or is."""
    candidates: dict[str, dict[str, str]] = {name: {} for name in names}
    for alt in rule.alternates:
        reference = lookup(alt.table)
        mapping: dict[str, set[str]] = {}
        for key, to in zip(reference.values(alt.key), reference.values(alt.to), strict=True):
            if key is not None and to:
                mapping.setdefault(str(key), set()).add(str(to))
        for name in names:
            found = mapping.get(name, set())
            if len(found) == 1:
                candidates[name][f"{alt.table}.{alt.to}"] = next(iter(found))
    for suffix in rule.strip_suffixes:
        for name in names:
            stem = name.removesuffix(suffix).strip()
            if stem != name and stem:
                candidates[name][f"strip {suffix}"] = stem
    producers: dict[str, set[str]] = {}
    for name, variants in candidates.items():
        for variant in variants.values():
            producers.setdefault(variant, set()).add(name)
    return {
        name: {
            kind: variant
            for kind, variant in sorted(variants.items())
            if variant != name and variant not in names and len(producers[variant]) == 1
        }
        for name, variants in candidates.items()
    }


def _vary_names(
    noisy: NoisyTable,
    rule: NameVariants,
    seed: int,
    table: str,
    lookup: Callable[[str], Frame],
) -> VariantsApplied:
    c = noisy.columns.index(rule.column)
    detail = noisy.detail_rows()
    names = {str(noisy.rows[i][c]) for i in detail if noisy.rows[i][c] is not None}
    candidates = _candidate_variants(names, rule, lookup)
    used: dict[str, str] = {}
    per_kind: dict[str, int] = {}
    for i in detail:
        name = noisy.rows[i][c]
        if name is None or draw(seed, table, "variant", rule.column, noisy.row_key(i)) >= rule.rate:
            continue
        options = sorted(candidates.get(str(name), {}).items())
        if not options:
            continue
        kind, variant = pick(options, seed, table, "variant-kind", rule.column, noisy.row_key(i))
        noisy.rows[i][c] = variant
        used[variant] = str(name)
        per_kind[kind] = per_kind.get(kind, 0) + 1
    return VariantsApplied(
        column=rule.column,
        variants=dict(sorted(used.items())),
        rows_per_kind=dict(sorted(per_kind.items())),
        rows_changed=sum(per_kind.values()),
    )


def _round(noisy: NoisyTable, rule: Rounding, seed: int, table: str) -> RoundingApplied:
    c = noisy.columns.index(rule.column)
    per: dict[str, int] = {}
    worst = 0.0
    for i in noisy.detail_rows():
        value = noisy.rows[i][c]
        if value is None:
            continue
        decimals = pick(list(rule.decimals), seed, table, "rounding", rule.column, noisy.row_key(i))
        rounded = float(round(float(value), decimals))
        worst = max(worst, abs(rounded - float(value)))
        noisy.rows[i][c] = rounded
        per[str(decimals)] = per.get(str(decimals), 0) + 1
    return RoundingApplied(
        column=rule.column,
        decimals=list(rule.decimals),
        rows_per_decimals=dict(sorted(per.items())),
        max_abs_error=worst,
    )


def _mix_units(noisy: NoisyTable, rule: MixedUnits, seed: int, table: str) -> UnitsApplied:
    c = noisy.columns.index(rule.column)
    e = noisy.original.index(rule.entity) if rule.entity is not None else None
    labels = list(rule.units)
    chosen: list[str] = []
    entity_units: dict[str, str] = {}
    per: dict[str, int] = {}
    for i, row in enumerate(noisy.rows):
        source = noisy.source[i]
        # the entity as in the clean data: a name variant still gets its entity's unit
        entity = noisy.original.rows[source][e] if e is not None and source is not None else None
        if entity is not None:
            label = pick(labels, seed, table, "unit", rule.column, "entity", entity)
            entity_units[str(entity)] = label
        else:
            label = pick(labels, seed, table, "unit", rule.column, noisy.row_key(i))
        chosen.append(label)
        per[label] = per.get(label, 0) + 1
        value = row[c]
        if value is None:
            continue
        number = number_text(float(value) / rule.units[label], rule.decimals)
        noisy.texts[i, c] = number if rule.unit_column else f"{number} {label}"
    if rule.unit_column is not None:
        # the unit column goes right after the value; rendered texts move with their columns
        noisy.columns.insert(c + 1, rule.unit_column)
        noisy.texts = {(i, j + 1 if j > c else j): t for (i, j), t in noisy.texts.items()}
        for row, label in zip(noisy.rows, chosen, strict=True):
            row.insert(c + 1, label)
    return UnitsApplied(
        column=rule.column,
        unit_column=rule.unit_column,
        units=dict(rule.units),
        per=rule.per,
        entity=rule.entity,
        decimals=rule.decimals,
        rows_per_unit=dict(sorted(per.items())),
        entity_units=dict(sorted(entity_units.items())),
    )


def _blank(noisy: NoisyTable, rule: MissingValues, seed: int, table: str) -> list[MissingApplied]:
    """Markers that are already values of a column are not used for it (the clean reading
    takes every marker for a missing value)."""
    applied: list[MissingApplied] = []
    for column in rule.columns:
        c = noisy.columns.index(column)
        texts = [noisy.texts.get((i, c), to_text(row[c])) for i, row in enumerate(noisy.rows)]
        markers = [m for m in rule.markers if m == "" or m not in set(texts)] or [""]
        cells: list[tuple[int, str]] = []
        for i in noisy.detail_rows():
            text = texts[i]
            if text == "" or draw(seed, table, "missing", column, noisy.row_key(i)) >= rule.rate:
                continue
            cells.append((i, text))
            noisy.texts[i, c] = pick(markers, seed, table, "marker", column, noisy.row_key(i))
        applied.append(MissingApplied(column=column, markers=markers, cells=cells))
    return applied

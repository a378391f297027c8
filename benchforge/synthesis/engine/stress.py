"""The stress pass: clean rows -> published ``raw`` rows plus the anomaly manifest.

Stressors on one column share one uniform draw and occupy disjoint intervals of it, so a row is
touched by at most one of them and every touched row is recorded exactly once. A stressor only
counts rows where it changes something (a NULL cannot go missing, zero cannot be an outlier).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchforge.synthesis.engine.random import Streams
from benchforge.synthesis.engine.sql import DUCKDB_TYPES, literal, quote, value_map_case
from benchforge.synthesis.spec.models import DomainSpec, Table
from benchforge.synthesis.spec.stressors import (
    CurrencyConflict,
    DuplicateCurrent,
    KeyDrift,
    MissingValues,
    Outliers,
    Stressor,
    TimezoneMismatch,
    TypeCoercion,
)

MANIFEST_COLUMNS = (
    "table_name VARCHAR, column_name VARCHAR, row_key VARCHAR, kind VARCHAR, detail VARCHAR"
)


@dataclass
class _Applied:
    predicate: str  # rows touched
    value: str  # the stressed value
    detail: str  # SQL text for the manifest's detail column


def _column_stressors(spec: DomainSpec, table: Table) -> dict[str, list[Stressor]]:
    out: dict[str, list[Stressor]] = {}
    for s in spec.stressors:
        if s.table == table.name and not isinstance(s, DuplicateCurrent):
            out.setdefault(s.column, []).append(s)
    return out


def _apply(spec: DomainSpec, table: Table, s: Stressor, interval: str, seed: int) -> _Applied:
    assert not isinstance(s, DuplicateCurrent)
    x = quote(s.column)
    if isinstance(s, MissingValues):
        return _Applied(f"{x} IS NOT NULL AND {interval}", "NULL", "'set to NULL'")
    if isinstance(s, Outliers):
        col_type = DUCKDB_TYPES[table.column_map[s.column].type]
        return _Applied(
            f"{x} IS NOT NULL AND {x} <> 0 AND {interval}",
            f"CAST({x} * {s.factor!r} AS {col_type})",
            f"'x{s.factor:g} from ' || CAST({x} AS VARCHAR)",
        )
    if isinstance(s, TypeCoercion):
        rendered = (
            f"CASE WHEN abs({x}) >= 1000 THEN format('{{:,.2f}}', CAST({x} AS DOUBLE)) "
            f"ELSE printf('%.2f', CAST({x} AS DOUBLE)) || {literal(' ' + s.unit)} END"
        )
        return _Applied(f"{x} IS NOT NULL AND {interval}", rendered, "'rendered as text'")
    if isinstance(s, CurrencyConflict):
        codes = s.codes
        pick = Streams(seed, table.name, s.column).index(len(codes) - 1, "_currency_pick")
        items = "[" + ", ".join(literal(c) for c in codes) + "]"
        # Index over the codes minus the original one: never returns the original code.
        pos = f"coalesce(list_position({items}, {x}), {len(codes)})"
        other = f"{items}[CASE WHEN {pick} + 1 >= {pos} THEN {pick} + 2 ELSE {pick} + 1 END]"
        return _Applied(f"{x} IS NOT NULL AND {interval}", other, f"'was ' || {x}")
    if isinstance(s, TimezoneMismatch):
        lookup = spec.lookups[s.offset_lookup]
        mapping = dict(
            zip(lookup.values(lookup.columns[0]), lookup.values(s.offset_value), strict=True)
        )
        offset = f"CAST({value_map_case(quote(s.offset_via), mapping)} AS DOUBLE)"
        return _Applied(
            f"{x} IS NOT NULL AND coalesce({offset}, 0) <> 0 AND {interval}",
            f"{x} + to_seconds(CAST(round({offset} * 3600) AS BIGINT))",
            f"'shifted ' || CAST({offset} AS VARCHAR) || 'h to local time'",
        )
    if isinstance(s, KeyDrift):
        # Half the touched keys are lower-cased, the rest (and every key that has no upper-case
        # letter, which lower() would not change) get a trailing space: every touched key
        # changes, whatever the key format.
        style = Streams(seed, table.name, s.column).u("_drift_style")
        pad = f"({style} < 0.5 OR {x} = lower({x}))"
        drifted = f"CASE WHEN {pad} THEN {x} || ' ' ELSE lower({x}) END"
        detail = f"CASE WHEN {pad} THEN 'trailing space' ELSE 'lower-cased' END"
        return _Applied(f"{x} IS NOT NULL AND {interval}", drifted, detail)
    raise TypeError(f"unhandled stressor {s.kind}")


@dataclass
class StressPlan:
    """How a table's raw rows are made from its clean rows (a source aliased ``src``)."""

    select: str  # projection list of the raw columns
    manifest: list[str]  # SELECTs yielding the manifest rows, FROM a ``{src}`` placeholder

    def raw_sql(self, source: str) -> str:
        return f"SELECT {self.select} FROM {source} src ORDER BY _rid"

    def manifest_sql(self, source: str) -> str | None:
        """One INSERT for all stressors. ``source`` is a query, inlined once per stressor: each
        copy only computes the few columns its predicate needs (projection pushdown), which is
        cheaper than materializing every column once."""
        if not self.manifest:
            return None
        union = " UNION ALL ".join(m.replace("{src}", f"({source})") for m in self.manifest)
        return f"INSERT INTO _meta.anomalies {union}"


def stress_plan(spec: DomainSpec, table: Table, seed: int) -> StressPlan:
    key = f"CAST({quote(table.primary_key)} AS VARCHAR)"
    projections: dict[str, str] = {}
    manifest: list[str] = []
    for column, stressors in _column_stressors(spec, table).items():
        u = Streams(seed, table.name, column).u("_stress")
        cases, start = [], 0.0
        for s in stressors:
            interval = f"({u} >= {start!r} AND {u} < {start + s.rate!r})"
            start += s.rate
            applied = _apply(spec, table, s, interval, seed)
            cases.append(f"WHEN {applied.predicate} THEN {applied.value}")
            manifest.append(
                f"SELECT {literal(table.name)}, {literal(column)}, {key}, {literal(s.kind)}, "
                f"{applied.detail} FROM {{src}} src WHERE {applied.predicate}"
            )
        clean = quote(column)
        if any(isinstance(s, TypeCoercion) for s in stressors):
            clean = f"CAST({clean} AS VARCHAR)"
        projections[column] = f"CASE {' '.join(cases)} ELSE {clean} END"
    dup = _duplicate_current(spec, table, seed, key)
    if dup is not None:
        predicate, manifest_select = dup
        manifest.append(manifest_select)
        projections["is_current"] = f"CASE WHEN {predicate} THEN TRUE ELSE is_current END"
        projections["valid_to"] = f"CASE WHEN {predicate} THEN NULL ELSE valid_to END"
    names = [c.name for c in table.columns]
    if table.scd:
        rest = [n for n in names if n != table.primary_key]
        names = [table.primary_key, table.scd.entity_key, *rest]
        names += ["valid_from", "valid_to", "is_current"]
    select = ", ".join(f"{projections.get(n, quote(n))} AS {quote(n)}" for n in names)
    return StressPlan(select=select, manifest=manifest)


def _duplicate_current(
    spec: DomainSpec, table: Table, seed: int, key: str
) -> tuple[str, str] | None:
    dup = next(
        (s for s in spec.stressors if isinstance(s, DuplicateCurrent) and s.table == table.name),
        None,
    )
    if dup is None:
        return None
    u = Streams(seed, table.name, "_duplicate_current", "_entity_rid").u()
    predicate = f"(_versions >= 2 AND _version = _versions - 2 AND {u} < {dup.rate!r})"
    manifest = (
        f"SELECT {literal(table.name)}, NULL, {key}, 'duplicate_current', "
        f"'previous version still flagged current' FROM {{src}} src WHERE {predicate}"
    )
    return predicate, manifest

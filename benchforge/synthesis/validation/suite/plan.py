"""The plan of one table's checks: row checks (GE expectations over chunks), aggregate checks
(metrics computed in DuckDB, compared with bounds), and the SQL that feeds them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from great_expectations.expectations.expectation import Expectation

from benchforge.synthesis.spec.models import DomainSpec, Table
from benchforge.synthesis.spec.stressors import TypeCoercion
from benchforge.synthesis.validation.sqltext import SPEC_TYPES, q, raw

Metrics = Mapping[str, float | None]
Stat = Literal["count", "share", "mean"]
Source = Literal["rows", "manifest", "scalar"]
TableTypes = Mapping[str, Mapping[str, str]]  # table -> column -> DuckDB type


@dataclass(frozen=True)
class RowCheck:
    check: str
    table: str
    column: str | None
    expectation: Expectation
    expected: str
    label: str | None = None


@dataclass(frozen=True)
class AggregateCheck:
    check: str
    table: str
    column: str | None
    description: str
    stat: Stat
    evaluate: Callable[[Metrics], tuple[float, float, float] | None]  # observed, low, high
    label: str | None = None


@dataclass
class TablePlan:
    table: Table
    primary_key: str
    source: str  # FROM clause (raw table aliased t + helper joins) of the "rows" metrics
    rows_template: str  # SELECT of the raw columns + helper columns over {relation} (the table)
    setup: list[str]

    def rows_sql(self, partition: tuple[int, int] | None = None) -> str:
        """The table with its helper columns; ``partition`` = (P, i) keeps rows whose
        ``hash(pk) % P = i``, filtered before the joins."""
        relation = raw(self.table.name)
        if partition is not None:
            parts, part = partition
            key = q(self.primary_key)
            relation = f"(SELECT * FROM {relation} WHERE hash({key}) % {parts} = {part})"
        return self.rows_template.format(relation=relation)

    cleanup: list[str]
    fetch: list[str]  # columns of rows_sql() read per chunk
    row_checks: list[RowCheck]
    metrics: dict[str, tuple[Source, str]]
    aggregate_checks: list[AggregateCheck]


@dataclass(frozen=True)
class GenerationInfo:
    """What ``manifest.json`` (written by the engine) says was generated, if present."""

    scale: float
    table_rows: Mapping[str, int]
    anomaly_counts: Mapping[str, int]  # table -> anomalies


class MissingDependency(Exception):
    """A table the checks of another table need (parent, entity) is not in the warehouse."""


def expected_columns(spec: DomainSpec, table: Table) -> dict[str, str]:
    """Published columns and DuckDB types: declared ones (type_coercion makes VARCHAR) plus the
    engine-added SCD columns."""
    coerced = {
        s.column for s in spec.stressors if isinstance(s, TypeCoercion) and s.table == table.name
    }
    cols = {c.name: "VARCHAR" if c.name in coerced else SPEC_TYPES[c.type] for c in table.columns}
    if table.scd:
        entity = spec.table_map[table.scd.entity]
        cols[table.scd.entity_key] = SPEC_TYPES[entity.column_map[entity.primary_key].type]
        cols |= {"valid_from": "TIMESTAMP", "valid_to": "TIMESTAMP", "is_current": "BOOLEAN"}
    return cols

"""Derives the expectation suite of each table from the domain spec.

A ``TablePlan`` has two kinds of checks:

* ``RowCheck``: a Great Expectations expectation evaluated on bounded chunks of the table read
  from DuckDB (the runner merges the per-chunk results). Cross-row facts are turned into per-row
  helper columns in DuckDB (``_bf_orphan__<fk>`` via a join to the parent keys, ``_bf_clean__<col>``
  from the anomaly manifest...), and chunks are ``hash(pk) % P`` partitions, so duplicate keys
  always share a chunk and uniqueness stays exact.
* ``AggregateCheck``: a count, share or mean computed in DuckDB over the whole table (``metrics``)
  and compared with bounds derived from the spec and from other metrics (manifest counts, the
  number of eligible rows); GE judges each observed value (``metrics.judge``).

One module per kind of check: ``keys``, ``columns`` (declared constraints), ``distributions`` and
``dates`` (what the column's generator says about its values: the facts each generator model
states, see ``benchforge.synthesis.spec.generators``), ``copies``, ``scd``, ``stressors`` and
``manifest``; ``builder`` holds the shared state and SQL pieces, ``plan`` the resulting records.
"""

from __future__ import annotations

from benchforge.synthesis.spec.models import DomainSpec, Table
from benchforge.synthesis.validation.suite.builder import PlanBuilder
from benchforge.synthesis.validation.suite.columns import column_checks, generator_can_be_null
from benchforge.synthesis.validation.suite.keys import foreign_key_checks, primary_key_checks
from benchforge.synthesis.validation.suite.manifest import manifest_checks, row_count_checks
from benchforge.synthesis.validation.suite.plan import (
    AggregateCheck,
    GenerationInfo,
    Metrics,
    MissingDependency,
    RowCheck,
    TablePlan,
    TableTypes,
    expected_columns,
)
from benchforge.synthesis.validation.suite.scd import scd_checks
from benchforge.synthesis.validation.suite.stressors import (
    duplicate_current_checks,
    stressor_checks,
)

__all__ = [
    "AggregateCheck",
    "GenerationInfo",
    "Metrics",
    "MissingDependency",
    "RowCheck",
    "TablePlan",
    "TableTypes",
    "build_plan",
    "expected_columns",
    "generator_can_be_null",
]


def build_plan(
    spec: DomainSpec, table: Table, types: TableTypes, generation: GenerationInfo | None = None
) -> TablePlan:
    """The checks of one table; ``types`` are the warehouse's actual column types."""
    b = PlanBuilder(spec, table, types, generation)
    primary_key_checks(b)
    for column in table.columns:
        column_checks(b, column)
    foreign_key_checks(b)
    if table.scd:
        scd_checks(b)
    for c, ss in b.stressors.items():
        for s in ss:
            stressor_checks(b, c, s)
    if b.dup:
        duplicate_current_checks(b, b.dup)
    manifest_checks(b)
    row_count_checks(b)
    return b.finish()

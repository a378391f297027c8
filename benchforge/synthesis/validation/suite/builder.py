"""``PlanBuilder``: the state and the SQL pieces shared by the check modules.

It knows the table, its stressors and the warehouse's column types; it names helper columns
(``_bf_<name>``, fetched per chunk), metrics (deduplicated by SQL), and the parent and lookup joins
the checks ask for; ``finish()`` assembles them into a ``TablePlan``.

"Clean" rows of a column are rows the manifest does not list for that column; generator checks
(distributions, generator ranges) also skip SCD current versions of columns the engine copies
from the entity ("governed" rows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from great_expectations.expectations.expectation import Expectation
from great_expectations.expectations.row_conditions import Column as GxColumn
from great_expectations.expectations.row_conditions import Condition

from benchforge.synthesis.spec.models import DomainSpec, Table
from benchforge.synthesis.spec.stressors import DuplicateCurrent, Stressor, TypeCoercion
from benchforge.synthesis.validation import stats
from benchforge.synthesis.validation.sqltext import (
    INTEGER_TYPES,
    MANIFEST_TABLE,
    NUMERIC_TYPES,
    and_,
    key_join,
    lit,
    q,
    raw,
    regex_literal,
)
from benchforge.synthesis.validation.suite.plan import (
    AggregateCheck,
    GenerationInfo,
    Metrics,
    MissingDependency,
    RowCheck,
    Source,
    Stat,
    TablePlan,
    TableTypes,
)

PLAIN_NUMBER = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"


def formatted_number(unit: str) -> str:
    """What type_coercion renders: ``1,234.50`` (|x| >= 1000) or ``123.40 <unit>``."""
    thousands = r"-?[0-9]{1,3}(,[0-9]{3})+\.[0-9]{2}"
    with_unit = r"-?[0-9]+\.[0-9]{2} " + regex_literal(unit)
    return f"^({thousands}|{with_unit})$"


def python_values(values: list[Any], duck_type: str) -> list[Any]:
    """Spec values as pandas will show them for a column of ``duck_type``."""
    out: list[Any] = []
    for v in values:
        try:
            if duck_type in INTEGER_TYPES:
                out.append(int(v))
            elif duck_type in NUMERIC_TYPES:
                out.append(float(v))
            elif duck_type == "BOOLEAN":
                out.append(v if isinstance(v, bool) else str(v).lower() == "true")
            else:
                out.append(str(v).lower() if isinstance(v, bool) else str(v))
        except (TypeError, ValueError):
            out.append(v)
    return out


def fmt_number(x: float) -> str:
    return f"{x:.6g}"


def range_text(low: Any, high: Any) -> str:
    def fmt(x: Any) -> str:
        return fmt_number(x) if isinstance(x, int | float) else str(x)

    if high is None:
        return f">= {fmt(low)}" if low is not None else "any value"
    if low is None:
        return f"<= {fmt(high)}"
    return f"between {fmt(low)} and {fmt(high)}"


@dataclass
class _Parent:
    table: Table
    columns: set[str] = field(default_factory=set)


class PlanBuilder:
    def __init__(
        self, spec: DomainSpec, table: Table, types: TableTypes, generation: GenerationInfo | None
    ):
        self.spec, self.table, self.types, self.generation = spec, table, types, generation
        self.name = table.name
        self.mine = types[table.name]
        self.pk = table.primary_key
        self.stressors: dict[str, list[Stressor]] = {}
        self.dup: DuplicateCurrent | None = None
        for s in spec.stressors:
            if s.table != table.name:
                continue
            if isinstance(s, DuplicateCurrent):
                self.dup = s
            else:
                self.stressors.setdefault(s.column, []).append(s)
        self.coerced = {
            c for c, ss in self.stressors.items() if any(isinstance(s, TypeCoercion) for s in ss)
        }
        self.shared: set[str] = set()
        if table.scd:
            entity = spec.table_map[table.scd.entity]
            self.shared = set(entity.column_map) & set(table.column_map) - {self.pk}
        self.select: dict[str, str] = {}
        self.parents: dict[str, _Parent] = {}
        self.parent_joins: dict[str, tuple[str, str]] = {}  # alias -> (key column, parent table)
        self.lookups: set[str] = set()
        self.lookup_joins: dict[str, tuple[str, str]] = {}  # alias -> (lookup, via column)
        self.fetch: list[str] = [self.pk]
        self.row_checks: list[RowCheck] = []
        self.metrics: dict[str, tuple[Source, str]] = {}
        self.aggregates: list[AggregateCheck] = []

    # ---- SQL pieces

    def col(self, c: str) -> str:
        return f"t.{q(c)}"

    def value(self, c: str) -> str:
        """The column's value as a number when type_coercion published it as text."""
        return f"TRY_CAST(t.{q(c)} AS DOUBLE)" if c in self.coerced else f"t.{q(c)}"

    def value_type(self, c: str) -> str:
        return "DOUBLE" if c in self.coerced else self.mine.get(c, "VARCHAR")

    def value_column(self, c: str) -> str:
        """Name of the fetched column holding ``value(c)``."""
        if c not in self.coerced:
            return self.use(c)
        return self.helper(f"num__{c}", self.value(c))

    def touched(self, c: str) -> str | None:
        return f"coalesce(m.{q(c)}, false)" if c in self.stressors else None

    def touched_by(self, c: str, kind: str) -> str | None:
        if not any(s.kind == kind for s in self.stressors.get(c, [])):
            return None
        return f"coalesce(m.{q(c + '__' + kind)}, false)"

    def clean(self, c: str) -> str | None:
        t = self.touched(c)
        return f"NOT {t}" if t else None

    def dup_flag(self) -> str:
        return 'coalesce(m."__dup", false)' if self.dup else "false"

    def latest(self) -> str:
        """SCD: the true current version (is_current, and not a duplicate_current leftover)."""
        return f'(coalesce(t."is_current", false) AND NOT {self.dup_flag()})'

    def governed(self, c: str) -> str | None:
        """Rows whose value of ``c`` comes from its generator (SCD current versions of shared
        columns copy the entity instead)."""
        return f"NOT {self.latest()}" if c in self.shared else None

    def generated(self, c: str) -> str | None:
        return and_(self.clean(c), self.governed(c))

    def use(self, c: str) -> str:
        if c not in self.fetch:
            self.fetch.append(c)
        return c

    def helper(self, name: str, sql: str) -> str:
        full = f"_bf_{name}"
        self.select[full] = sql
        return self.use(full)

    def flag(self, name: str, sql: str | None) -> Condition | None:
        """A boolean helper column and the GE row_condition selecting its true rows; None when
        ``sql`` is None (all rows)."""
        if sql is None:
            return None
        column = self.helper(name, f"coalesce({sql}, false)")
        return GxColumn(column) == True  # noqa: E712 - builds a GE condition

    def metric(self, source: Source, sql: str) -> str:
        for name, existing in self.metrics.items():
            if existing == (source, sql):
                return name
        name = f"m{len(self.metrics)}"
        self.metrics[name] = (source, sql)
        return name

    def count_rows(self, cond: str | None = None) -> str:
        return self.metric("rows", f"count(*) FILTER (WHERE {cond})" if cond else "count(*)")

    def count_manifest(self, column: str | None, kind: str) -> str:
        col = "column_name IS NULL" if column is None else f"column_name = {lit(column)}"
        return self.metric("manifest", f"count(*) FILTER (WHERE {col} AND kind = {lit(kind)})")

    def parent_alias(self, key: str, parent_name: str) -> str:
        if parent_name not in self.types:
            raise MissingDependency(parent_name)
        alias = f"p__{key}"
        if alias not in self.parent_joins:
            parent = self.spec.table_map[parent_name]
            self.parents.setdefault(parent_name, _Parent(parent))
            self.parent_joins[alias] = (key, parent_name)
        return alias

    def lookup_alias(self, lookup: str, via: str) -> str:
        alias = f"l__{lookup}__{via}"
        self.lookups.add(lookup)
        self.lookup_joins[alias] = (lookup, via)
        return alias

    # ---- checks

    def row(
        self,
        check: str,
        target: str | None,
        expectation_cls: type[Expectation],
        description: str,
        expected: str,
        row_condition: Condition | None = None,
        label: str | None = None,
        **kwargs: Any,
    ) -> None:
        """A row check on report column ``target``; ``kwargs`` go to the GE expectation."""
        if row_condition is not None:
            kwargs["row_condition"] = row_condition
        for key in ("column", "column_A", "column_B"):
            if key in kwargs:
                self.use(kwargs[key])
        meta = {
            "check": check,
            "table": self.name,
            "column": target,
            "label": label,
            "key": str(len(self.row_checks)),
        }
        expectation = expectation_cls(description=description, meta=meta, **kwargs)
        self.row_checks.append(RowCheck(check, self.name, target, expectation, expected, label))

    def aggregate(
        self,
        check: str,
        column: str | None,
        description: str,
        stat: Stat,
        evaluate: Callable[[Metrics], tuple[float, float, float] | None],
        label: str | None = None,
    ) -> None:
        self.aggregates.append(
            AggregateCheck(check, self.name, column, description, stat, evaluate, label)
        )

    def equal_counts(
        self,
        check: str,
        column: str | None,
        description: str,
        observed: str,
        expected: str,
        label: str | None = None,
    ) -> None:
        def evaluate(m: Metrics) -> tuple[float, float, float] | None:
            o, e = m[observed], m[expected]
            return None if o is None or e is None else (o, e, e)

        self.aggregate(check, column, description, "count", evaluate, label)

    def zero_count(self, check: str, column: str | None, description: str, observed: str) -> None:
        def evaluate(m: Metrics) -> tuple[float, float, float] | None:
            o = m[observed]
            return None if o is None else (o, 0.0, 0.0)

        self.aggregate(check, column, description, "count", evaluate)

    def share_check(
        self, check: str, c: str, k: str, n: str, p: float, what: str, label: str | None = None
    ) -> None:
        def evaluate(m: Metrics) -> tuple[float, float, float] | None:
            kk, nn = m[k], m[n]
            if not nn or kk is None:
                return None
            return (kk / nn, *stats.share_bounds(nn, p))

        text = f"{what} ~ {fmt_number(p)} (binomial, 5 sigma)"
        self.aggregate(check, c, text, "share", evaluate, label)

    def count_manifest_where(self, cond: str) -> str:
        return self.metric("manifest", f"count(*) FILTER (WHERE {cond})")

    # ---- SQL assembly

    def manifest_pivot_columns(self) -> list[str]:
        cols: list[str] = []
        for c, ss in self.stressors.items():
            cols.append(f"bool_or(column_name = {lit(c)}) AS {q(c)}")
            for s in ss:
                cols.append(
                    f"bool_or(column_name = {lit(c)} AND kind = {lit(s.kind)}) "
                    f"AS {q(c + '__' + s.kind)}"
                )
        if self.dup:
            cols.append("bool_or(kind = 'duplicate_current') AS \"__dup\"")
        return cols

    def manifest_join_sql(self) -> str:
        if not self.manifest_pivot_columns():
            return ""
        return f"LEFT JOIN _bf_m m ON m.row_key = CAST(t.{q(self.pk)} AS VARCHAR)"

    def finish(self) -> TablePlan:
        setup: list[str] = []
        cleanup: list[str] = []
        pivot = self.manifest_pivot_columns()
        if pivot:
            setup.append(
                f"CREATE OR REPLACE TABLE _bf_m AS SELECT row_key, {', '.join(pivot)} "
                f"FROM {MANIFEST_TABLE} WHERE table_name = {lit(self.name)} GROUP BY row_key"
            )
            cleanup.append("DROP TABLE IF EXISTS _bf_m")
        for name, parent in self.parents.items():
            setup.append(_parent_table_sql(self.spec, parent))
            cleanup.append(f"DROP TABLE IF EXISTS {q('_bf_par__' + name)}")
        for name in sorted(self.lookups):
            setup.append(_lookup_table_sql(self.spec, name))
            cleanup.append(f"DROP TABLE IF EXISTS {q('_bf_lk__' + name)}")
        joins = [self.manifest_join_sql()] if pivot else []
        for alias, (key, parent_name) in self.parent_joins.items():
            parent_pk = self.spec.table_map[parent_name].primary_key
            on = key_join(
                f"{alias}.k",
                self.types[parent_name].get(parent_pk),
                self.col(key),
                self.mine.get(key),
            )
            joins.append(f"LEFT JOIN {q('_bf_par__' + parent_name)} {alias} ON {on}")
        for alias, (lookup, via) in self.lookup_joins.items():
            joins.append(
                f"LEFT JOIN {q('_bf_lk__' + lookup)} {alias} "
                f"ON {alias}.k = CAST({self.col(via)} AS VARCHAR)"
            )
        derived = "".join(f", {sql} AS {q(name)}" for name, sql in self.select.items())
        join_sql = " ".join(joins)
        # The helper tables live until cleanup: scalar metrics may use them too.
        return TablePlan(
            table=self.table,
            primary_key=self.pk,
            source=f"{raw(self.name)} t {join_sql}".strip(),
            rows_template=f"SELECT t.*{derived} FROM {{relation}} t {join_sql}".strip(),
            setup=setup,
            cleanup=cleanup,
            fetch=list(self.fetch),
            row_checks=self.row_checks,
            metrics=self.metrics,
            aggregate_checks=self.aggregates,
        )


def _parent_table_sql(spec: DomainSpec, parent: _Parent) -> str:
    """Distinct parent keys plus the copied columns and whether the manifest touched them."""
    table = parent.table
    pk = q(table.primary_key)
    name = q("_bf_par__" + table.name)
    cols = sorted(parent.columns)
    if not cols:
        return f"CREATE OR REPLACE TABLE {name} AS SELECT DISTINCT {pk} AS k FROM {raw(table.name)}"
    stressed = {
        s.column
        for s in spec.stressors
        if s.table == table.name and not isinstance(s, DuplicateCurrent)
    }
    flags = [c for c in cols if c in stressed]
    select = [f"t.{pk} AS k"]
    for c in cols:
        select.append(f"any_value(t.{q(c)}) AS {q('v__' + c)}")
        touched = f"bool_or(coalesce(pm.{q(c)}, false))" if c in flags else "false"
        select.append(f"{touched} AS {q('d__' + c)}")
    join = ""
    if flags:
        pivot = ", ".join(f"bool_or(column_name = {lit(c)}) AS {q(c)}" for c in flags)
        join = (
            f"LEFT JOIN (SELECT row_key, {pivot} FROM {MANIFEST_TABLE} "
            f"WHERE table_name = {lit(table.name)} GROUP BY row_key) pm "
            f"ON pm.row_key = CAST(t.{pk} AS VARCHAR)"
        )
    return (
        f"CREATE OR REPLACE TABLE {name} AS SELECT {', '.join(select)} "
        f"FROM {raw(table.name)} t {join} GROUP BY t.{pk}"
    )


def _lookup_table_sql(spec: DomainSpec, name: str) -> str:
    lookup = spec.lookups[name]
    names = ", ".join(["k", *(q(c) for c in lookup.columns)])
    rows = ", ".join(
        "(" + ", ".join([lit(str(r[0])), *(lit(v) for v in r)]) + ")" for r in lookup.rows
    )
    target = q("_bf_lk__" + name)
    return f"CREATE OR REPLACE TABLE {target} AS SELECT * FROM (VALUES {rows}) v({names})"

"""Checking a policy against the warehouse it is meant for, before anything is transformed.

A schema-valid policy can still be wrong for its data: a column nobody gave a rule to (it would
be published as is), a perturbation on a text column, a foreign key pseudonymized differently
from the key it references (every join would come back empty), a ``keep`` on a column full of
email addresses. Each of these is cheap to find here and expensive to find in a published
release, so every problem is collected (not just the first) and raised together as one
PolicyError naming the file and each field path.

What is read from the warehouse: its catalog (tables, columns, types), a 2,000-value sample of
text columns for the PII detector, the minimum of noise-perturbed columns, and one
``count(*)`` per row check. Derive expressions, checks and aggregate queries are compiled
against the source with ``LIMIT 0`` so a typo fails here, not halfway through a release.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
from pydantic import BaseModel, Field

from benchforge.anonymize.policy.loader import LoadedPolicy, did_you_mean
from benchforge.anonymize.policy.models import (
    Column,
    Derive,
    FrequencyFloor,
    Generalize,
    Keep,
    Perturb,
    Policy,
    PolicyError,
    Pseudonymize,
    ShiftDates,
    Swap,
    Table,
)
from benchforge.anonymize.policy.pii import detect_pii, type_family
from benchforge.core.sql import qualified, quote

# A number published as text: '1,234.50', '523.40 USD', '123.40 万元'.
NUMBER_IN_TEXT = r"^-?[0-9][0-9, ]*(\.[0-9]+)?( ?[^0-9]{1,24})?$"
NUMERIC_TEXT_SHARE = 0.9
# Rules that remove a direct identifier's original value from the release.
REPLACING_RULES = ("pseudonymize", "fake", "suppress", "scrub")
KEY_RULES = ("keep", "pseudonymize")
QI_RULES = ("keep", "generalize")
_INTEGER_PREFIXES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
)


class PolicyCheck(BaseModel):
    """What the transform needs from the check: the warehouse's column types, the columns the
    PII detector flagged (and why), and warnings that do not block a release."""

    tables: dict[str, dict[str, str]] = Field(description="table -> column -> DuckDB type")
    pii_flags: dict[str, str] = Field(
        default_factory=dict, description="'table.column' -> why the detector flags it"
    )
    warnings: list[str] = Field(default_factory=list)


def warehouse_columns(con: duckdb.DuckDBPyConnection, catalog: str) -> dict[str, dict[str, str]]:
    """Every table of ``catalog.raw`` with its columns and DuckDB types, in column order."""
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE database_name = ? AND schema_name = 'raw' ORDER BY table_name, column_index",
        [catalog],
    ).fetchall()
    out: dict[str, dict[str, str]] = {}
    for table, column, dtype in rows:
        out.setdefault(table, {})[column] = dtype
    return out


def is_integer_type(duckdb_type: str) -> bool:
    return duckdb_type.upper().startswith(_INTEGER_PREFIXES)


def describe_rule(column: Column) -> str:
    """``pseudonymize(format='hex')`` — a rule with its non-default parameters."""
    params = column.rule.model_dump(exclude_defaults=True, exclude={"rule"})
    inner = ", ".join(f"{k}={v!r}" for k, v in params.items())
    return f"{column.rule.rule}({inner})" if inner else column.rule.rule


def _key_signature(column: Column) -> dict[str, object]:
    # documentation fields do not change what a key becomes
    return column.rule.model_dump(exclude={"reason", "allow_pii"})


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


@contextmanager
def search_path(con: duckdb.DuckDBPyConnection, catalog: str) -> Iterator[None]:
    """Bare table names resolve to ``catalog.raw`` inside the block (aggregate queries are
    written over bare names and run on the source and on the release)."""
    previous = con.execute("SELECT current_setting('search_path')").fetchone()
    con.execute(f"SET search_path = '{catalog}.raw'")
    try:
        yield
    finally:
        if previous and previous[0]:
            con.execute("SET search_path = ?", [previous[0]])
        else:
            con.execute("RESET search_path")


class _Checker:
    def __init__(self, loaded: LoadedPolicy, con: duckdb.DuckDBPyConnection, catalog: str):
        self.policy: Policy = loaded.policy
        self.source = loaded.source
        self.con = con
        self.catalog = catalog
        self.problems: list[tuple[str, str]] = []
        self.warnings: list[str] = []
        self.warehouse = warehouse_columns(con, catalog)
        self.pii_flags: dict[str, str] = {}

    # ------------------------------------------------------------ helpers

    def problem(self, path: str, message: str) -> None:
        self.problems.append((path, message))

    def rel(self, table: str) -> str:
        return qualified(self.catalog, "raw", table)

    def has_column(self, table: str, column: str) -> bool:
        return column in self.warehouse.get(table, {})

    def unknown_column(self, path: str, table: str, column: str, what: str = "column") -> None:
        known = list(self.warehouse.get(table, {}))
        self.problem(path, f"no {what} '{column}' in raw.{table}{did_you_mean(column, known)}")

    def columns_exist(self, path: str, table: str, columns: list[str]) -> bool:
        ok = True
        for column in columns:
            if not self.has_column(table, column):
                self.unknown_column(path, table, column)
                ok = False
        return ok

    def table_known(self, path: str, table: str) -> bool:
        if table in self.warehouse and table in self.policy.tables:
            return True
        if table not in self.warehouse:
            known = list(self.warehouse)
            self.problem(path, f"no table '{table}' in the warehouse{did_you_mean(table, known)}")
        else:
            self.problem(path, f"table '{table}' has no entry under tables")
        return False

    def scalar(self, sql: str) -> object:
        row = self.con.execute(sql).fetchone()
        return row[0] if row else None

    # ------------------------------------------------------------ the passes

    def run(self, dataset_domain: str | None) -> PolicyCheck:
        if dataset_domain is not None and dataset_domain != self.policy.domain:
            self.problem(
                "domain",
                f"the policy is for domain '{self.policy.domain}' but the dataset is "
                f"'{dataset_domain}'",
            )
        self.check_tables_listed()
        self.detect()
        for name, table in self.policy.tables.items():
            if name not in self.warehouse:
                continue
            self.check_columns(name, table)
            self.check_keys(name, table)
            self.check_identifiers(name, table)
            self.check_row_checks(name, table)
            if table.aggregate_of is not None:
                self.check_aggregate(name, table)
        self.check_streams()
        self.check_quasi_identifiers()
        self.check_linkage()
        if self.problems:
            raise PolicyError(self.source, self.problems)
        return PolicyCheck(tables=self.warehouse, pii_flags=self.pii_flags, warnings=self.warnings)

    def check_tables_listed(self) -> None:
        for table in self.warehouse:
            if table not in self.policy.tables:
                self.problem(
                    f"tables.{table}",
                    f"warehouse table '{table}' has no entry: every table needs one "
                    "(mark its columns keep if nothing in it is sensitive)",
                )
        for table in self.policy.tables:
            if table not in self.warehouse:
                known = [t for t in self.warehouse if t not in self.policy.tables] or list(
                    self.warehouse
                )
                self.problem(
                    f"tables.{table}",
                    f"no table '{table}' in the warehouse{did_you_mean(table, known)}",
                )

    def detect(self) -> None:
        for table, columns in self.warehouse.items():
            for column, dtype in columns.items():
                reason = detect_pii(self.con, self.catalog, table, column, dtype)
                if reason is not None:
                    self.pii_flags[f"{table}.{column}"] = reason

    def check_columns(self, name: str, table: Table) -> None:
        actual = self.warehouse[name]
        for column in actual:
            if column not in table.columns:
                self.problem(
                    f"tables.{name}.columns.{column}",
                    f"no rule for column {column}: give it a rule or mark it keep",
                )
        for column, spec in table.columns.items():
            path = f"tables.{name}.columns.{column}"
            if column not in actual:
                missing = [c for c in actual if c not in table.columns] or list(actual)
                self.problem(
                    path, f"no column '{column}' in raw.{name}{did_you_mean(column, missing)}"
                )
                continue
            self.check_rule_fits(name, column, spec, actual[column], path)
            self.check_pii(name, column, spec, path)

    def check_rule_fits(self, table: str, column: str, spec: Column, dtype: str, path: str) -> None:
        rule = spec.rule
        family = type_family(dtype)
        where = f"{path}.rule"
        if isinstance(rule, Pseudonymize):
            if family == "text":
                return
            if is_integer_type(dtype) and rule.format == "preserve":
                return
            self.problem(
                where,
                f"pseudonymize needs a text column or an integer key with format preserve; "
                f"{column} is {dtype}",
            )
        elif rule.rule in ("fake", "scrub") and family != "text":
            self.problem(where, f"{rule.rule} needs a text column; {column} is {dtype}")
        elif isinstance(rule, Perturb):
            self.check_perturb(table, column, rule, dtype, family, path)
        elif isinstance(rule, ShiftDates):
            if family != "date":
                self.problem(
                    where, f"shift_dates needs a DATE or TIMESTAMP column; {column} is {dtype}"
                )
            if not self.has_column(table, rule.entity):
                self.unknown_column(f"{path}.entity", table, rule.entity)
            if rule.boundary_column and not self.has_column(table, rule.boundary_column):
                self.unknown_column(f"{path}.boundary_column", table, rule.boundary_column)
        elif isinstance(rule, FrequencyFloor):
            if family != "text":
                self.problem(where, f"frequency_floor needs a text column; {column} is {dtype}")
            for other in rule.within:
                if other == column:
                    self.problem(f"{path}.within", f"{column} cannot be counted within itself")
                elif not self.has_column(table, other):
                    self.unknown_column(f"{path}.within", table, other)
        elif isinstance(rule, Swap):
            for other in rule.within:
                if other == column:
                    self.problem(f"{path}.within", f"{column} cannot be swapped within itself")
                elif not self.has_column(table, other):
                    self.unknown_column(f"{path}.within", table, other)
        elif isinstance(rule, Generalize):
            self.check_generalize(column, rule, dtype, family, path)
        elif isinstance(rule, Derive):
            self.check_derive(table, column, rule, path)

    def check_perturb(
        self, table: str, column: str, rule: Perturb, dtype: str, family: str, path: str
    ) -> None:
        if family == "text" and rule.method == "lsd":
            self.check_numbers_in_text(table, column, path)
        if family == "text" and rule.method != "lsd":
            self.problem(
                f"{path}.rule",
                f"perturb on a text column works only with method lsd (numbers stored as text); "
                f"{column} is {dtype}",
            )
        elif family not in ("number", "text"):
            self.problem(f"{path}.rule", f"perturb needs a numeric column; {column} is {dtype}")
            return
        for group in rule.group_by:
            if group == column:
                self.problem(f"{path}.group_by", f"{column} cannot be grouped by itself")
            elif not self.has_column(table, group):
                self.unknown_column(f"{path}.group_by", table, group)
        for key in rule.key:
            if not self.has_column(table, key):
                self.unknown_column(f"{path}.key", table, key)
        if rule.min is not None and rule.max is not None and rule.min > rule.max:
            self.problem(f"{path}.min", f"min {rule.min} is above max {rule.max}")
        if rule.method == "noise" and rule.min is None and family == "number":
            lowest = self.scalar(f"SELECT min({quote(column)}) FROM {self.rel(table)}")
            if isinstance(lowest, int | float) and lowest >= 0:
                self.problem(
                    f"{path}.min",
                    f"{column} is never negative in the source; noise could make values "
                    "negative; set min: 0",
                )

    def check_numbers_in_text(self, table: str, column: str, path: str) -> None:
        col = quote(column)
        row = self.con.execute(
            f"SELECT count({col}), count({col}) FILTER (WHERE NOT "
            f"regexp_full_match(trim({col}), '{NUMBER_IN_TEXT}')) FROM {self.rel(table)}"
        ).fetchone()
        total, other = row if row else (0, 0)
        if total and other > (1 - NUMERIC_TEXT_SHARE) * total:
            self.problem(
                f"{path}.rule",
                f"perturb lsd on a text column needs numbers stored as text; {other} of "
                f"{total} values of {column} are not numbers",
            )

    def check_generalize(
        self, column: str, rule: Generalize, dtype: str, family: str, path: str
    ) -> None:
        where = f"{path}.rule"
        if rule.hierarchy == "date" and family != "date":
            self.problem(
                where, f"generalize date needs a DATE or TIMESTAMP column; {column} is {dtype}"
            )
        elif rule.hierarchy == "numeric":
            if family != "number":
                self.problem(
                    where, f"generalize numeric needs a numeric column; {column} is {dtype}"
                )
            if rule.base_width is None:
                self.problem(f"{path}.base_width", "generalize numeric needs base_width")
        elif rule.hierarchy == "prefix" and family != "text":
            self.problem(where, f"generalize prefix needs a text column; {column} is {dtype}")
        elif rule.hierarchy == "hierarchy" and not rule.levels:
            self.problem(f"{path}.levels", "generalize hierarchy needs at least one level mapping")

    def check_derive(self, table: str, column: str, rule: Derive, path: str) -> None:
        try:
            self.con.execute(f"SELECT ({rule.sql}) FROM {self.rel(table)} LIMIT 0")
        except duckdb.Error as err:
            self.problem(f"{path}.sql", f"does not compile on raw.{table}: {_first_line(err)}")
            return
        col = quote(column)
        try:
            differs = self.scalar(
                f"SELECT count(*) FROM {self.rel(table)} WHERE {col} IS DISTINCT FROM "
                f"CAST(({rule.sql}) AS {self.warehouse[table][column]})"
            )
        except duckdb.Error as err:
            self.warnings.append(
                f"tables.{table}.columns.{column}.sql: could not compare with the source: "
                f"{_first_line(err)}"
            )
            return
        if differs:
            self.warnings.append(
                f"tables.{table}.columns.{column}.sql: the expression differs from the source "
                f"on {differs} rows; the release will not keep those rows' values"
            )

    def check_pii(self, table: str, column: str, spec: Column, path: str) -> None:
        rule = spec.rule
        if spec.pii == "direct" and rule.rule not in REPLACING_RULES:
            self.problem(
                f"{path}.rule",
                f"{column} is tagged pii: direct but its rule is {rule.rule}: "
                f"use {' | '.join(REPLACING_RULES)}",
            )
        reason = self.pii_flags.get(f"{table}.{column}")
        if not isinstance(rule, Keep):
            return
        if reason is not None and not rule.allow_pii:
            self.problem(
                f"{path}.rule",
                f"keeps a column the PII detector flags ({reason}): pseudonymize, fake, scrub or "
                "suppress it, or set allow_pii: true with a reason if it is not about a person",
            )
        elif rule.allow_pii and reason is None:
            self.warnings.append(f"{path}: allow_pii is set but the detector does not flag it")

    def check_keys(self, name: str, table: Table) -> None:
        for column in table.primary_key:
            if not self.has_column(name, column):
                self.unknown_column(f"tables.{name}.primary_key", name, column)
                continue
            spec = table.columns.get(column)
            if spec is None:
                continue
            if spec.rule.rule == "fake":
                self.problem(
                    f"tables.{name}.columns.{column}.rule",
                    f"{column} is the primary key: fake cannot keep it unique (replacements come "
                    "from a pool); use pseudonymize",
                )
            elif spec.rule.rule not in (*KEY_RULES, "derive"):
                self.problem(
                    f"tables.{name}.columns.{column}.rule",
                    f"{column} is the primary key: keep, pseudonymize or (for a composite id "
                    f"such as account_id:date) derive it, not {spec.rule.rule}",
                )
        for column, target in table.foreign_keys.items():
            self.check_foreign_key(name, table, column, target)

    def check_foreign_key(self, name: str, table: Table, column: str, target: str) -> None:
        path = f"tables.{name}.foreign_keys.{column}"
        if not self.has_column(name, column):
            self.unknown_column(path, name, column)
            return
        parent, dot, parent_column = target.partition(".")
        if not dot or not parent or not parent_column:
            self.problem(path, f"'{target}' is not of the form table.column")
            return
        if not self.table_known(path, parent):
            return
        if not self.has_column(parent, parent_column):
            self.unknown_column(path, parent, parent_column)
            return
        spec = table.columns.get(column)
        parent_spec = self.policy.tables[parent].columns.get(parent_column)
        if spec is None or parent_spec is None:
            return  # reported as a column without a rule
        if spec.rule.rule == "swap":
            if parent_spec.rule.rule != "keep":
                self.problem(
                    f"tables.{name}.columns.{column}.rule",
                    f"foreign key {column} is swapped (its values move among rows, unreplaced), "
                    f"so {target} must be kept, not {parent_spec.rule.rule}",
                )
        elif spec.rule.rule not in KEY_RULES:
            self.problem(
                f"tables.{name}.columns.{column}.rule",
                f"{column} is a foreign key: keep or pseudonymize it, not {spec.rule.rule}",
            )
        elif _key_signature(spec) != _key_signature(parent_spec):
            self.problem(
                f"tables.{name}.columns.{column}.rule",
                f"foreign key {column} -> {target} is {describe_rule(spec)} but {target} is "
                f"{describe_rule(parent_spec)}: both must carry the same rule or joins break",
            )

    def check_identifiers(self, name: str, table: Table) -> None:
        for i, ident in enumerate(table.identifiers):
            path = f"tables.{name}.identifiers[{i}].columns"
            if not self.columns_exist(path, name, ident.columns):
                continue
            kept = [
                c
                for c in ident.columns
                if c in table.columns and table.columns[c].rule.rule not in REPLACING_RULES
            ]
            if kept:
                self.warnings.append(
                    f"{path}: {', '.join(kept)} keep their original values; the composite "
                    "identifier is only partly replaced"
                )

    def check_row_checks(self, name: str, table: Table) -> None:
        for i, check in enumerate(table.checks):
            path = f"tables.{name}.checks[{i}]"
            try:
                failing = self.scalar(f"SELECT count(*) FROM {self.rel(name)} WHERE NOT ({check})")
            except duckdb.Error as err:
                self.problem(path, f"does not compile on raw.{name}: {_first_line(err)}")
                continue
            if failing:
                self.problem(path, f"does not hold on the source: {failing} rows")

    def check_aggregate(self, name: str, table: Table) -> None:
        agg = table.aggregate_of
        assert agg is not None
        path = f"tables.{name}.aggregate_of"
        try:
            with search_path(self.con, self.catalog):
                description = self.con.execute(f"SELECT * FROM ({agg.sql}) LIMIT 0").description
        except duckdb.Error as err:
            self.problem(f"{path}.sql", f"does not compile: {_first_line(err)}")
            return
        returned = [d[0] for d in description or []]
        for field, wanted in (("key", agg.key), ("columns", agg.columns)):
            for column in wanted:
                if column not in returned:
                    self.problem(
                        f"{path}.{field}",
                        f"the query does not return '{column}'{did_you_mean(column, returned)} "
                        f"(it returns {', '.join(returned)})",
                    )
                if not self.has_column(name, column):
                    self.unknown_column(f"{path}.{field}", name, column)
        for column in agg.columns:
            dtype = self.warehouse[name].get(column, "")
            if type_family(dtype) == "text":
                self.warnings.append(
                    f"{path}.columns: {column} is {dtype} (numbers stored as text): the "
                    "aggregate adjustment must parse and re-render it"
                )
            spec = table.columns.get(column)
            if spec is not None and not isinstance(spec.rule, Keep):
                self.problem(
                    f"tables.{name}.columns.{column}.rule",
                    f"{column} is recomputed by aggregate_of: its own rule must be keep, "
                    f"not {spec.rule.rule}",
                )

    def check_streams(self) -> None:
        """Columns sharing a perturbation stream must perturb alike, or copies diverge."""
        streams: dict[str, list[tuple[str, Perturb]]] = {}
        for table, column, spec in self.policy.columns_with("perturb"):
            rule = spec.rule
            if isinstance(rule, Perturb) and rule.stream is not None:
                streams.setdefault(rule.stream, []).append(
                    (f"tables.{table}.columns.{column}", rule)
                )
        for stream, members in streams.items():
            first_path, first = members[0]
            for path, rule in members[1:]:
                if (rule.digits, len(rule.key)) != (first.digits, len(first.key)):
                    self.problem(
                        f"{path}.stream",
                        f"stream '{stream}' is used with digits {first.digits} and "
                        f"{len(first.key)} key column(s) at {first_path}: every column of a "
                        "stream needs the same digits and as many key columns",
                    )
                elif rule.min_relative_change != first.min_relative_change:
                    self.problem(
                        f"{path}.stream",
                        f"stream '{stream}' is used with min_relative_change "
                        f"{first.min_relative_change:g} at {first_path}: every column of a "
                        "stream needs the same minimum change, or its copies diverge",
                    )

    def check_quasi_identifiers(self) -> None:
        for owner, column, _ in self.policy.columns_with("generalize"):
            declared = self.policy.quasi_identifiers.get(owner)
            if declared is None or column not in declared.columns:
                self.warnings.append(
                    f"tables.{owner}.columns.{column}: generalize acts only on the "
                    f"quasi-identifiers of quasi_identifiers.{owner}; this column is not one"
                )
        for name, qi in self.policy.quasi_identifiers.items():
            path = f"quasi_identifiers.{name}"
            if not self.table_known(path, name):
                continue
            table = self.policy.tables[name]
            if self.columns_exist(f"{path}.columns", name, qi.columns):
                for column in qi.columns:
                    spec = table.columns.get(column)
                    if spec is not None and spec.rule.rule not in QI_RULES:
                        self.problem(
                            f"{path}.columns",
                            f"quasi-identifier {column} must be keep or generalize, "
                            f"not {spec.rule.rule}",
                        )
            self.columns_exist(f"{path}.sensitive", name, qi.sensitive)
            for column in set(qi.sensitive) & set(qi.columns):
                self.problem(
                    f"{path}.sensitive",
                    f"{column} is both a quasi-identifier and a sensitive column",
                )

    def check_linkage(self) -> None:
        for i, link in enumerate(self.policy.linkage):
            path = f"linkage[{i}]"
            if not self.table_known(f"{path}.table", link.table):
                continue
            self.columns_exist(f"{path}.known", link.table, link.known)
            if link.secret is not None:
                self.columns_exist(f"{path}.secret", link.table, [link.secret])
                if link.secret in link.known:
                    self.problem(f"{path}.secret", f"{link.secret} is also a known column")


def check_policy(
    loaded: LoadedPolicy,
    con: duckdb.DuckDBPyConnection,
    catalog: str = "src",
    dataset_domain: str | None = None,
) -> PolicyCheck:
    """Checks ``loaded`` against the warehouse attached as ``catalog`` (tables in
    ``catalog.raw``); raises PolicyError listing every problem, else returns what the transform
    needs. ``dataset_domain`` (from the dataset's dataset.json) must equal the policy's."""
    return _Checker(loaded, con, catalog).run(dataset_domain)


CHECK_SAMPLE_ROWS = 2000


def reidentification_warnings(
    loaded: LoadedPolicy,
    con: duckdb.DuckDBPyConnection,
    catalog: str = "src",
    *,
    sample_rows: int = CHECK_SAMPLE_ROWS,
) -> list[str]:
    """Combinations of the columns the policy keeps that re-identify more source rows than
    ``thresholds.max_reidentification_rate``: the release report would refuse the release for
    them. Searched on the source against itself (a kept column is released unchanged); columns
    perturbed or coarsened are left to the report, which measures what the transform did."""
    from benchforge.anonymize.report.reident import hides_identity, search_table

    policy = loaded.policy
    limit = policy.thresholds.max_reidentification_rate
    warehouse = warehouse_columns(con, catalog)
    out: list[str] = []
    for table in policy.tables:
        if table not in warehouse or table in policy.reidentification.report_only:
            continue
        if not hides_identity(policy, table):
            continue
        result = search_table(
            con,
            table,
            policy,
            sample_rows=sample_rows,
            catalogs=(catalog, catalog),
            rules_kept=("keep",),
        )
        worst = result.worst
        if worst is not None and worst.rate > limit:
            out.append(
                f"tables.{table}: the kept columns {' + '.join(worst.columns)} re-identify "
                f"{worst.rate:.1%} of sampled rows (limit {limit:g}); the release report will "
                f"refuse it: {worst.suggestion}"
            )
    return out

"""Drafting a policy from a warehouse alone: names, types and value profiles, no domain spec.

Writing a policy for a 25-table warehouse by hand starts with 300 columns to classify; the draft
does the mechanical part and leaves a reviewable YAML file with a comment on every choice that
was not obvious. It must load and pass ``check_policy`` on the warehouse it came from, so a
reviewer starts from something that runs and only changes what they disagree with.

How columns are classified (first match wins):

1. Keys. A table's primary key is a unique, never-NULL text or integer column named
   ``<table singular>_id`` or ``id``, else the first unique ``*_id`` then ``*_code`` column,
   else one named like the table's singular (``country`` in ``countries``). Foreign keys are
   found by value inclusion: every distinct ``upper(trim(value))`` of a ``*_id`` / ``*_code``
   column (or one named like another table's key) is among that table's key values, compared
   the same way (key drift in the data is normalized exactly as the gold staging models do).
   Integer columns are only linked by name (small integers are included in any id range).
   Keys are pseudonymized, except the codes of small reference tables (<= 100 rows and no
   column the PII detector flags: countries, currencies, industries): public vocabulary, kept.
   A foreign key always gets the rule of the key it references.
2. Direct identifiers flagged by the PII detector: replaced with a fake from a provider guessed
   from the name (emails and phones tagged ``pii: direct``), or pseudonymized when no provider
   fits (registration codes keep their format); birth dates are generalized and declared as a
   quasi-identifier. A first and last name in one table are declared a composite identifier.
3. Free text (average length > 40) is scrubbed.
4. Identifier-like text (``*_id``, ``*_code``, ``*_number``, ``*_no`` with many distinct values)
   is pseudonymized.
5. Numbers stored as text (a type-coercion stressor: ``'1,234.00 USD'``) and money-like numbers
   get least-significant-digit perturbation (magnitude and ranking kept); non-negative counts get
   noise with ``min: 0``; numbers with at most 20 distinct values (ratings, flags, levels) are
   kept as categories.
6. Dates are kept (a commented ``shift_dates`` alternative is given), booleans and
   low-cardinality text are kept; other text is kept with a ``review:`` comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import duckdb
import yaml

from benchforge.anonymize.policy.check import (
    NUMBER_IN_TEXT,
    NUMERIC_TEXT_SHARE,
    is_integer_type,
    reidentification_warnings,
    warehouse_columns,
)
from benchforge.anonymize.policy.loader import LoadedPolicy
from benchforge.anonymize.policy.models import DEFAULT_SECRET_ENV, Policy
from benchforge.anonymize.policy.pii import detect_pii, type_family
from benchforge.core.sql import qualified, quote

REFERENCE_TABLE_ROWS = 100
FREE_TEXT_LENGTH = 40
CATEGORICAL_NUMBER_DISTINCT = 20
LOW_CARDINALITY_TEXT = 200
IDENTIFIER_DISTINCT = 100

_MONEY = re.compile(
    r"amount|price|cost|revenue|value|budget|spend|capital|profit|usd|quota|fee|salary|income"
    r"|balance|payment|total|cpc|cpa|bid|tax|shipping|limit|acv|arr|mrr|sales|expense"
)
_IDENTIFIER_NAME = re.compile(r"(_id|_code|_number|_no|_num|_key)$|^(id|code|number)$")
# a decimal point or a thousands separator: '1,234' or '12.5', not a zero-padded code '00042'
_SEPARATED_NUMBER = r"-?[0-9][0-9, ]*\.[0-9]+.*|.*[0-9],[0-9]{3}.*"

# column-name pattern -> Faker provider, for columns the detector flags
_PROVIDERS: tuple[tuple[str, str], ...] = (
    (r"e_?mail", "email"),
    (r"phone|mobile|fax|tel", "phone_number"),
    (r"first_?name|given_?name|forename", "first_name"),
    (r"last_?name|surname|family_?name", "last_name"),
    (r"street|address", "street_address"),
    (r"city|town", "city"),
    (r"postal|postcode|post_code|zip", "postcode"),
    (
        r"company|account_name|agency_name|legal_name|business_name|organi[sz]ation|employer",
        "company",
    ),
    (r"user_?name|login", "user_name"),
    (r"website|homepage|web_site|url", "url"),
    (r"(^|_)ip", "ipv4"),
    (r"iban", "iban"),
    (r"name|representative", "name"),
)
_CONTENT_PROVIDERS: tuple[tuple[str, str], ...] = (
    ("email addresses", "email"),
    ("phone numbers", "phone_number"),
    ("IPv4 addresses", "ipv4"),
    ("IBANs", "iban"),
)
_DIRECT_PROVIDERS = ("email", "phone_number")


@dataclass
class _Profile:
    family: str
    dtype: str
    non_null: int = 0
    distinct: int = 0
    avg_length: float | None = None
    numeric_text: int = 0
    has_separator: int = 0
    minimum: float | None = None


@dataclass
class _Table:
    name: str
    rows: int
    columns: dict[str, _Profile]
    primary_key: str | None = None
    foreign_keys: dict[str, str] = field(default_factory=dict)
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    identifiers: list[list[str]] = field(default_factory=list)
    generalized: list[str] = field(default_factory=list)


def _singular(table: str) -> str:
    if table.endswith("ies"):
        return table[:-3] + "y"
    if table.endswith(("ses", "xes", "ches", "shes")):
        return table[:-2]
    if table.endswith("s") and not table.endswith("ss"):
        return table[:-1]
    return table


def _owns_key(table: str, column: str) -> bool:
    """``accounts`` owns ``account_id``; ``account_activity_summary`` only repeats it."""
    return column in (f"{_singular(table)}_id", f"{_singular(table)}_code", _singular(table))


def _scalar(value: str) -> str:
    return str(yaml.safe_dump(value, default_flow_style=True)).removesuffix("\n...\n").strip()


def _flow(value: Any) -> str:
    return str(yaml.safe_dump(value, default_flow_style=True, width=10**9, sort_keys=False)).strip()


class _Drafter:
    def __init__(self, con: duckdb.DuckDBPyConnection, catalog: str):
        self.con = con
        self.catalog = catalog
        self.tables: dict[str, _Table] = {}
        self.flags: dict[tuple[str, str], str | None] = {}
        for name, cols in warehouse_columns(con, catalog).items():
            self.tables[name] = self.profile(name, cols)

    def rel(self, table: str) -> str:
        return qualified(self.catalog, "raw", table)

    # ------------------------------------------------------------ profiling

    def profile(self, name: str, cols: dict[str, str]) -> _Table:
        exprs = ["count(*)"]
        layout: list[tuple[str, str]] = []
        for col, dtype in cols.items():
            q = quote(col)
            family = type_family(dtype)
            exprs += [f"count({q})", f"approx_count_distinct({q})"]
            layout += [(col, "non_null"), (col, "distinct")]
            if family == "text":
                exprs += [
                    f"avg(length({q}))",
                    f"count(*) FILTER (WHERE regexp_full_match(trim({q}), '{NUMBER_IN_TEXT}'))",
                    f"count(*) FILTER (WHERE regexp_full_match(trim({q}), '{_SEPARATED_NUMBER}'))",
                ]
                layout += [(col, "avg_length"), (col, "numeric_text"), (col, "has_separator")]
            elif family == "number":
                exprs.append(f"CAST(min({q}) AS DOUBLE)")
                layout.append((col, "minimum"))
        row = self.con.execute(f"SELECT {', '.join(exprs)} FROM {self.rel(name)}").fetchone()
        assert row is not None
        profiles = {
            col: _Profile(family=type_family(dtype), dtype=dtype) for col, dtype in cols.items()
        }
        for (col, attr), value in zip(layout, row[1:], strict=True):
            setattr(profiles[col], attr, value)
        return _Table(name=name, rows=int(row[0]), columns=profiles)

    def is_unique(self, table: _Table, column: str) -> bool:
        prof = table.columns[column]
        if prof.non_null != table.rows or table.rows == 0:
            return False
        q = quote(column)
        distinct = self.con.execute(
            f"SELECT count(DISTINCT {q}) FROM {self.rel(table.name)}"
        ).fetchone()
        assert distinct is not None
        if distinct[0] == table.rows:
            return True
        # exact duplicate rows (a stressor) repeat the key with the whole row: still a key
        rows = self.con.execute(
            f"SELECT count(*) FROM (SELECT DISTINCT * FROM {self.rel(table.name)})"
        ).fetchone()
        assert rows is not None
        return bool(distinct[0] == rows[0])

    # ------------------------------------------------------------ keys

    def find_primary_keys(self) -> None:
        for table in self.tables.values():
            names = list(table.columns)
            key_like = [
                c
                for c in names
                if table.columns[c].family == "text" or is_integer_type(table.columns[c].dtype)
            ]
            singular = _singular(table.name)
            ordered = [c for c in (f"{singular}_id", "id") if c in key_like]
            ordered += [c for c in key_like if c.endswith("_id") and c not in ordered]
            ordered += [c for c in key_like if c.endswith("_code") and c not in ordered]
            ordered += [c for c in key_like if c == singular and c not in ordered]
            for column in ordered:
                if self.is_unique(table, column):
                    table.primary_key = column
                    break

    def find_foreign_keys(self) -> None:
        parents = [t for t in self.tables.values() if t.primary_key is not None]
        pk_names = {t.primary_key for t in parents}
        for table in self.tables.values():
            for column, prof in table.columns.items():
                if prof.non_null == 0:
                    continue
                text = prof.family == "text"
                integer = is_integer_type(prof.dtype)
                named = column.endswith(("_id", "_code")) or column in pk_names
                if not (text or integer) or not named:
                    continue
                if column == table.primary_key and _owns_key(table.name, column):
                    continue  # accounts.account_id is the entity itself, not a reference
                candidates = self.parent_candidates(table, column, prof, parents)
                if column == table.primary_key:
                    # a key is a reference only into the table that owns the name: a 1:1
                    # extension (account_activity_summary.account_id), not a shared row counter
                    candidates = [p for p in candidates if _owns_key(p.name, column)]
                for parent in candidates:
                    if self.included(table, column, parent):
                        assert parent.primary_key is not None
                        table.foreign_keys[column] = f"{parent.name}.{parent.primary_key}"
                        break

    def parent_candidates(
        self, table: _Table, column: str, prof: _Profile, parents: list[_Table]
    ) -> list[_Table]:
        exact: list[_Table] = []
        suffix: list[_Table] = []
        other: list[_Table] = []
        for parent in parents:
            pk = parent.primary_key
            assert pk is not None
            if parent.name == table.name:
                continue
            parent_prof = parent.columns[pk]
            if (parent_prof.family == "text") != (prof.family == "text"):
                continue
            if column == pk:
                exact.append(parent)
            elif column.endswith("_" + pk):
                suffix.append(parent)
            elif prof.family == "text" and parent_prof.distinct * 1.1 + 5 >= prof.distinct:
                other.append(parent)
        # several tables keyed by account_id: the one named after the key is the entity
        exact.sort(key=lambda p: not _owns_key(p.name, column))
        suffix.sort(key=lambda p: not _owns_key(p.name, str(p.primary_key)))
        return exact + suffix + other

    def included(self, table: _Table, column: str, parent: _Table) -> bool:
        assert parent.primary_key is not None
        child = f"upper(trim(CAST({quote(column)} AS VARCHAR)))"
        key = f"upper(trim(CAST({quote(parent.primary_key)} AS VARCHAR)))"
        row = self.con.execute(
            f"SELECT count(*) FROM (SELECT DISTINCT {child} AS v FROM {self.rel(table.name)} "
            f"WHERE {quote(column)} IS NOT NULL) AS c "
            f"WHERE NOT EXISTS (SELECT 1 FROM {self.rel(parent.name)} AS p WHERE {key} = c.v)"
        ).fetchone()
        return row is not None and row[0] == 0

    # ------------------------------------------------------------ rules

    def flag(self, table: _Table, column: str) -> str | None:
        """The PII detector's verdict, computed once per column."""
        if (table.name, column) not in self.flags:
            dtype = table.columns[column].dtype
            self.flags[(table.name, column)] = detect_pii(
                self.con, self.catalog, table.name, column, dtype
            )
        return self.flags[(table.name, column)]

    def key_rule(self, table: _Table) -> tuple[dict[str, Any], str]:
        # a small table about nobody (countries, currencies, roles) is vocabulary; a small table
        # of people or companies is not
        about_nobody = all(self.flag(table, c) is None for c in table.columns)
        if table.rows <= REFERENCE_TABLE_ROWS and about_nobody:
            return {"rule": "keep"}, f"key of a {table.rows}-row reference table: a public code"
        return {"rule": "pseudonymize"}, "key: keyed pseudonym, format and prefix kept"

    def assign_rules(self) -> None:
        for table in self.tables.values():
            if table.primary_key is not None:
                rule, note = self.key_rule(table)
                table.rules[table.primary_key] = rule
                table.notes[table.primary_key] = note
        for table in self.tables.values():
            for column, target in table.foreign_keys.items():
                table.rules[column] = self.root_rule(table, column, set())
                table.notes[column] = f"references {target}: same rule, so joins survive"
        for table in self.tables.values():
            for column, prof in table.columns.items():
                if column not in table.rules:
                    rule, note = self.column_rule(table, column, prof)
                    table.rules[column] = rule
                    if note:
                        table.notes[column] = note
            flagged_names = [
                c
                for c in ("first_name", "last_name")
                if table.rules.get(c, {}).get("rule") == "fake"
            ]
            if len(flagged_names) == 2:
                table.identifiers.append(flagged_names)

    def root_rule(self, table: _Table, column: str, seen: set[tuple[str, str]]) -> dict[str, Any]:
        """The rule of the key at the end of a foreign-key chain (a key that is itself a foreign
        key takes its parent's rule, so every table along the chain agrees)."""
        target = table.foreign_keys.get(column)
        if target is None or (table.name, column) in seen:
            return dict(table.rules[column])
        seen.add((table.name, column))
        parent_name, _, parent_key = target.partition(".")
        return self.root_rule(self.tables[parent_name], parent_key, seen)

    def column_rule(self, table: _Table, column: str, prof: _Profile) -> tuple[dict[str, Any], str]:
        reason = self.flag(table, column)
        if reason is not None:
            return self.identifier_rule(table, column, prof, reason)
        if prof.family == "text":
            return self.text_rule(table, column, prof)
        if prof.family == "number":
            return self.number_rule(table, column, prof)
        if prof.family == "date":
            entity = table.primary_key
            alt = f"; or {{rule: shift_dates, entity: {entity}}}" if entity else ""
            return {"rule": "keep"}, f"date kept{alt}"
        return {"rule": "keep"}, ""

    def identifier_rule(
        self, table: _Table, column: str, prof: _Profile, reason: str
    ) -> tuple[dict[str, Any], str]:
        name = column.lower()
        if prof.family == "date":
            table.generalized.append(column)
            return {
                "rule": "generalize",
                "hierarchy": "date",
            }, f"{reason}: generalized, a quasi-identifier"
        if prof.family != "text":
            if is_integer_type(prof.dtype):
                return {"rule": "pseudonymize"}, f"{reason}: pseudonymized (stored as a number)"
            return {"rule": "suppress"}, f"{reason}: suppressed (stored as a number)"
        provider = next((p for pattern, p in _PROVIDERS if re.search(pattern, name)), None)
        if provider is None:  # flagged by content: the recognizer says what the values are
            provider = next((p for word, p in _CONTENT_PROVIDERS if word in reason), None)
        if provider is None:
            return {"rule": "pseudonymize"}, f"{reason}: pseudonymized, format kept"
        rule: dict[str, Any] = {"rule": "fake", "provider": provider}
        if provider in _DIRECT_PROVIDERS:
            rule["pii"] = "direct"
        return rule, f"{reason}: replaced by a fake {provider}"

    def text_rule(self, table: _Table, column: str, prof: _Profile) -> tuple[dict[str, Any], str]:
        avg = prof.avg_length or 0.0
        if avg > FREE_TEXT_LENGTH:
            return {"rule": "scrub"}, f"free text (average length {avg:.0f}): identifiers scrubbed"
        many = prof.distinct > IDENTIFIER_DISTINCT and prof.distinct >= 0.5 * prof.non_null
        if _IDENTIFIER_NAME.search(column.lower()) and many:
            return {"rule": "pseudonymize"}, f"identifier-like ({prof.distinct} distinct values)"
        if (
            prof.non_null
            and prof.numeric_text >= NUMERIC_TEXT_SHARE * prof.non_null
            and prof.has_separator
        ):
            return {
                "rule": "perturb",
                "method": "lsd",
            }, "numbers stored as text: low digits redrawn, format kept"
        if prof.distinct <= LOW_CARDINALITY_TEXT or prof.distinct < 0.05 * max(prof.non_null, 1):
            return {"rule": "keep"}, ""
        return {"rule": "keep"}, f"review: {prof.distinct} distinct short texts kept as they are"

    def number_rule(self, table: _Table, column: str, prof: _Profile) -> tuple[dict[str, Any], str]:
        if prof.distinct <= CATEGORICAL_NUMBER_DISTINCT:
            return {"rule": "keep"}, f"{prof.distinct} distinct values: a category, kept"
        many = prof.distinct >= 0.5 * prof.non_null
        if _IDENTIFIER_NAME.search(column.lower()) and is_integer_type(prof.dtype) and many:
            return {"rule": "pseudonymize"}, "identifier-like integer"
        money = bool(_MONEY.search(column.lower())) or not is_integer_type(prof.dtype)
        if money:
            return {
                "rule": "perturb",
                "method": "lsd",
            }, "measure: low digits redrawn, magnitude and ranking kept"
        rule: dict[str, Any] = {"rule": "perturb", "method": "noise"}
        if prof.minimum is not None and prof.minimum >= 0:
            rule["min"] = 0
            return rule, "count: small noise, never negative"
        return rule, "count: small noise"

    # ------------------------------------------------------------ YAML

    def render(self, domain: str) -> str:
        out = [
            f"# Anonymization policy for domain '{domain}', drafted from the warehouse alone",
            "# (column names, types and value profiles). Review every table before publishing:",
            "# keys the gold dbt project parses (prefixes, digits with a meaning) need enough of",
            "# their prefix kept, identities between columns (total = quantity * price) need",
            "# `derive`, derived tables may need `aggregate_of`, and `review:` comments mark",
            "# guesses. After every edit run `benchforge policy check DATASET --policy FILE`.",
            f"domain: {_scalar(domain)}",
            'version: "1"',
            f"description: {_scalar(f'Drafted policy for {domain}; review before use.')}",
            f"secret_env: {DEFAULT_SECRET_ENV}",
            "tables:",
        ]
        for table in self.tables.values():
            out.append(f"  {_scalar(table.name)}:  # {table.rows} rows")
            if table.primary_key is not None:
                out.append(f"    primary_key: {_scalar(table.primary_key)}")
            else:
                out.append("    # no unique key column found: rows are keyed by position")
            if table.foreign_keys:
                out.append("    foreign_keys:")
                for column, target in table.foreign_keys.items():
                    out.append(f"      {_scalar(column)}: {_scalar(target)}")
            if table.identifiers:
                out.append("    identifiers:  # together a direct identifier: deny-listed in text")
                for cols in table.identifiers:
                    out.append(f"      - {_flow({'columns': cols})}")
            out.append("    columns:")
            for column in table.columns:
                rule = table.rules[column]
                text = rule["rule"] if list(rule) == ["rule"] else _flow(rule)
                note = table.notes.get(column)
                line = f"      {_scalar(column)}: {text}"
                out.append(f"{line}  # {note}" if note else line)
        qi_tables = [t for t in self.tables.values() if t.generalized]
        if qi_tables:
            out.append(
                "quasi_identifiers:  # k-anonymity over generalized columns; add e.g. country"
            )
            for table in qi_tables:
                out.append(
                    f"  {_scalar(table.name)}: {_flow({'columns': table.generalized, 'k': 5})}"
                )
        out += [
            "# linkage:  # what an attacker is assumed to know; the report measures re-linking",
            "#   - {table: <table>, known: [<quasi-identifier>, <a number>], secret: <column>}",
        ]
        return "\n".join(out) + "\n"


def draft_policy(con: duckdb.DuckDBPyConnection, catalog: str, domain: str) -> str:
    """A commented YAML policy for the warehouse attached as ``catalog`` (tables in
    ``catalog.raw``), from introspection alone; it loads and passes ``check_policy`` on the same
    warehouse."""
    drafter = _Drafter(con, catalog)
    drafter.find_primary_keys()
    drafter.find_foreign_keys()
    drafter.assign_rules()
    text = drafter.render(domain)
    return text + _reidentification_comments(text, con, catalog)


def _reidentification_comments(text: str, con: duckdb.DuckDBPyConnection, catalog: str) -> str:
    """The drafted keep columns searched for combinations that re-identify rows (the release
    report would refuse them), as comments to act on."""
    policy = Policy.model_validate(yaml.safe_load(text))
    loaded = LoadedPolicy(policy=policy, source="draft", sha256="")
    found = reidentification_warnings(loaded, con, catalog)
    if not found:
        return ""
    lines = ["# re-identification: kept columns that single out rows (fix before a release):"]
    lines += [f"#   {line}" for line in found]
    return "\n".join(lines) + "\n"

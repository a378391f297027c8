"""``obscure``: the lake of a dataset whose identifiers, names and numbers were replaced first,
so a model that memorized a public lake answers wrong while a pipeline that computes answers
from the files answers right; the gold is recomputed through the returned mapping.

The replacement happens once, on the working copy of the dataset, before any file is written,
so the same identifier gets the same replacement in every file it appears in (a column, a
split label in a file name, a report's sentence), and joins still hold:

- identifiers: one dataset-wide map; the leading non-digit part (``ACC-``) becomes a seeded
  token of the same shape (``QZT-``), the rest a number whose order is seeded;
- names: one dataset-wide map to synthetic words;
- numbers: ``round(x * factor + shift, decimals)``, factor and shift seeded per rule.
"""

from __future__ import annotations

import fnmatch
import json
import string
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pandas as pd
from pydantic import BaseModel, Field

from benchforge.core.sql import literal, quote
from benchforge.synthesis.engine.generate import WAREHOUSE
from benchforge.synthesis.lake.build import write_lake
from benchforge.synthesis.lake.loader import check_against_dataset
from benchforge.synthesis.lake.record import LakeRecord
from benchforge.synthesis.lake.spec import LakeSpec, ObscureSpec
from benchforge.synthesis.lake.working import (
    dataset_column_types,
    open_lake_copy,
    read_dataset_record,
    resolve_spec,
)
from benchforge.synthesis.perturb.seeding import salt

MAPPING_FILE = "obscure_mapping.json"

_TEXT = ("VARCHAR",)
_NUMERIC = ("DOUBLE", "FLOAT", "REAL", "INTEGER", "BIGINT", "SMALLINT", "HUGEINT")
_FLOATS = ("DOUBLE", "FLOAT", "REAL")
_SYLLABLES = tuple(f"{consonant}{vowel}" for consonant in "bdfklmnprstv" for vowel in "aeiou")


class NumberChange(BaseModel):
    """One number rule as applied: ``round(x * factor + shift, decimals)`` (integers: rounded
    to whole numbers) on each of ``columns`` (``table.column``)."""

    columns: list[str]
    factor: float
    shift: float
    decimals: int

    def apply(self, value: float) -> float:
        return value * self.factor + self.shift


class ObscureMapping(BaseModel):
    """What the obscured lake replaced: original -> replacement for identifiers and names, and
    the number rules, so a gold answer computed on the original lake maps to the obscured one."""

    seed: int
    identifier_columns: list[str] = Field(description="table.column, every one replaced.")
    name_columns: list[str]
    identifiers: dict[str, str]
    names: dict[str, str]
    numbers: list[NumberChange]

    def identifier(self, value: str) -> str:
        return self.identifiers[value]

    def name(self, value: str) -> str:
        return self.names[value]

    def number_change(self, table: str, column: str) -> NumberChange | None:
        for change in self.numbers:
            if f"{table}.{column}" in change.columns:
                return change
        return None


@dataclass(frozen=True)
class ObscuredLake:
    record: LakeRecord
    mapping: ObscureMapping


def obscure(
    dataset_dir: Path | str, spec: LakeSpec | Path | str, out_dir: Path | str, seed: int
) -> ObscuredLake:
    """Writes the obscured lake of ``dataset_dir`` to ``out_dir/lake`` (the same files as
    :func:`build_lake` with the same seed, values replaced), its record, and the mapping
    (``obscure_mapping.json``) beside it."""
    spec, source = resolve_spec(spec)
    dataset_dir, out_dir = Path(dataset_dir), Path(out_dir)
    dataset = read_dataset_record(dataset_dir)
    warehouse = dataset_dir / WAREHOUSE
    check_against_dataset(spec, dataset_column_types(warehouse), source)
    with open_lake_copy(warehouse) as con:
        mapping = obscure_tables(con, spec.obscure, seed)
        record = write_lake(con, spec, out_dir, seed, dataset, source, obscured=True)
    (out_dir / MAPPING_FILE).write_text(
        json.dumps(mapping.model_dump(mode="json"), ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return ObscuredLake(record=record, mapping=mapping)


def read_obscure_mapping(out_dir: Path | str) -> ObscureMapping:
    return ObscureMapping.model_validate_json((Path(out_dir) / MAPPING_FILE).read_text("utf-8"))


def obscure_tables(con: duckdb.DuckDBPyConnection, rules: ObscureSpec, seed: int) -> ObscureMapping:
    """Rewrites the ``raw`` tables on ``con`` in place (row order kept) and returns the map."""
    types = _types(con)
    id_columns = _matching(types, rules.identifiers, _TEXT)
    name_columns = _matching(types, rules.names, _TEXT)
    identifiers = _identifier_map(con, id_columns, seed)
    names = _name_map(con, name_columns, seed)
    numbers: list[NumberChange] = []
    number_of: dict[tuple[str, str], NumberChange] = {}
    for i, rule in enumerate(rules.numbers):
        columns = [c for c in _matching(types, rule.columns, _NUMERIC) if c not in number_of]
        change = NumberChange(
            columns=[f"{t}.{c}" for t, c in columns],
            factor=round(_draw(rule.factor, seed, "factor", i), 4),
            shift=round(_draw(rule.shift, seed, "shift", i), 2),
            decimals=rule.decimals,
        )
        numbers.append(change)
        number_of.update({column: change for column in columns})
    con.register("lake_identifier_map", _frame(identifiers))
    con.register("lake_name_map", _frame(names))
    for table in types:
        replaced: list[str] = []
        joins: list[str] = []
        for column in types[table]:
            source = f"t.{quote(column)}"
            if (table, column) in id_columns or (table, column) in name_columns:
                alias = f"m{len(joins)}"
                target = "lake_identifier_map" if (table, column) in id_columns else "lake_name_map"
                joins.append(f"LEFT JOIN {target} AS {alias} ON {alias}.original = {source}")
                replaced.append(f"{alias}.replacement AS {quote(column)}")
            elif (table, column) in number_of:
                change = number_of[table, column]
                kind = types[table][column]
                scaled = f"{source} * {literal(change.factor)} + {literal(change.shift)}"
                digits = change.decimals if kind in _FLOATS else 0
                replaced.append(f"CAST(round({scaled}, {digits}) AS {kind}) AS {quote(column)}")
        if not replaced:
            continue
        name = quote(table)
        con.execute(
            f"CREATE TABLE raw.lake_obscured AS SELECT t.* REPLACE ({', '.join(replaced)}) "
            f"FROM raw.{name} AS t {' '.join(joins)} ORDER BY t.rowid"
        )
        con.execute(f"DROP TABLE raw.{name}")
        con.execute(f"ALTER TABLE raw.lake_obscured RENAME TO {name}")
    con.unregister("lake_identifier_map")
    con.unregister("lake_name_map")
    return ObscureMapping(
        seed=seed,
        identifier_columns=[f"{t}.{c}" for t, c in sorted(id_columns)],
        name_columns=[f"{t}.{c}" for t, c in sorted(name_columns)],
        identifiers=identifiers,
        names=names,
        numbers=numbers,
    )


def _types(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'raw' ORDER BY table_name, ordinal_position"
    ).fetchall()
    types: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        types.setdefault(table, {})[column] = kind
    return types


def _matching(
    types: dict[str, dict[str, str]], patterns: list[str], kinds: tuple[str, ...]
) -> set[tuple[str, str]]:
    return {
        (table, column)
        for table, columns in types.items()
        for column, kind in columns.items()
        if kind in kinds and any(fnmatch.fnmatchcase(column, p) for p in patterns)
    }


def _distinct_values(con: duckdb.DuckDBPyConnection, columns: set[tuple[str, str]]) -> list[str]:
    if not columns:
        return []
    union = " UNION ".join(
        f"SELECT {quote(c)} AS v FROM raw.{quote(t)} WHERE {quote(c)} IS NOT NULL"
        for t, c in sorted(columns)
    )
    return [v for (v,) in con.execute(f"SELECT DISTINCT v FROM ({union}) ORDER BY v").fetchall()]


def _identifier_map(
    con: duckdb.DuckDBPyConnection, columns: set[tuple[str, str]], seed: int
) -> dict[str, str]:
    values = _distinct_values(con, columns)
    by_prefix: dict[str, list[str]] = {}
    for value in values:
        by_prefix.setdefault(_prefix(value), []).append(value)
    tokens = _prefix_tokens(sorted(by_prefix), seed)
    mapping: dict[str, str] = {}
    for prefix, members in by_prefix.items():
        width = max(len(str(len(members))), *(len(v) - len(prefix) for v in members))
        ordered = sorted(members, key=lambda v: (salt(seed, "identifier", v), v))
        for rank, value in enumerate(ordered, start=1):
            mapping[value] = f"{tokens[prefix]}{rank:0{width}d}"
    return mapping


def _prefix(value: str) -> str:
    for i, char in enumerate(value):
        if char.isdigit():
            return value[:i]
    return value


def _prefix_tokens(prefixes: list[str], seed: int) -> dict[str, str]:
    """Each prefix's letters replaced by seeded letters of the same case and count; every
    token differs from every original prefix and from each other token. A prefix without
    letters (``""`` of ``00000042``, ``#``) is kept: its numbers are still reordered."""
    taken = set(prefixes)
    tokens: dict[str, str] = {}
    for prefix in prefixes:
        if not any(c.isalpha() for c in prefix):  # digit-only ids keep the look of numbers
            tokens[prefix] = prefix
            continue
        attempt = 0
        while True:
            digest = salt(seed, "prefix", prefix, attempt)
            letters = iter(string.ascii_uppercase[int(d, 16) + 5] for d in digest * 4)
            token = "".join(
                (next(letters) if c.isupper() else next(letters).lower()) if c.isalpha() else c
                for c in prefix
            )
            if token not in taken:
                break
            attempt += 1
        taken.add(token)
        tokens[prefix] = token
    return tokens


def _name_map(
    con: duckdb.DuckDBPyConnection, columns: set[tuple[str, str]], seed: int
) -> dict[str, str]:
    values = _distinct_values(con, columns)
    ordered = sorted(values, key=lambda v: (salt(seed, "name", v), v))
    syllables = sorted(_SYLLABLES, key=lambda s: salt(seed, "syllable", s))
    mapping: dict[str, str] = {}
    for rank, value in enumerate(ordered):
        words = [_word(rank, syllables)]
        if " " in value.strip():
            words.append(_word(rank * 7 + 3, syllables[::-1]))
        mapping[value] = " ".join(words)
    return mapping


def _word(number: int, syllables: list[str]) -> str:
    """An injective spelling of ``number`` in syllables (at least two)."""
    base = len(syllables)
    parts = [syllables[number % base]]
    number //= base
    while number or len(parts) < 2:
        parts.append(syllables[number % base])
        number //= base
    return "".join(parts).capitalize()


def _draw(bounds: tuple[float, float], seed: int, *parts: object) -> float:
    low, high = bounds
    unit = int(salt(seed, "number", *parts), 16) / 16**16
    return low + (high - low) * unit


def _frame(mapping: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {"original": list(mapping), "replacement": list(mapping.values())}, dtype="string"
    )

"""Distance-based record linkage: can an attacker who knows a few of a person's original
attributes find that person's row in the release?

For each ``linkage`` entry of the policy, ``sample_rows`` released rows are drawn
(``ORDER BY hash(rowid, seed)``: deterministic, spread over the table). The attacker holds the
*original* values of the ``known`` columns of those records (row i of the release is the
transform of row i of the source, so rowid is the ground truth) and links each one to its
nearest released record. A link succeeds when that nearest record is the target's own released
row; when several records are equally near, a random pick among them succeeds with probability
``1/|ties|``, which is what is counted (the expectation, so the result does not depend on a
draw). The rate is compared with the blind baseline ``1/candidates``.

Distance (Gower-like, L1): numeric columns as z-scores with the *source's* mean and standard
deviation (dates and timestamps as epoch seconds, numbers stored as text parsed), plus 1 per
mismatching category. Categories are one-hot coded with weight 1/2 (a mismatch then costs
exactly 1); a column with more than ``ONE_HOT_MAX`` categories is embedded instead as a random
±1/32 sign vector per value (equal values cost 0, different ones 1 on average, sd 0.18), which
keeps the nearest-neighbour search in a few dozen dimensions. A NULL is a category of its own;
a NULL number sits at the mean with a missing-indicator costing 1. An attacker who knows the
policy's generalization hierarchy could coarsen their own knowledge before matching; this
measure does not, so for generalized columns it is a lower bound.

Candidates are every released row when the table holds at most ``max_candidates`` rows;
beyond that, a sample of that size that always contains the targets' own rows (the baseline
becomes 1/sample size, and a note says so). Only the needed columns of bounded row sets are
fetched. The module also provides the column typing and encoding the attack module reuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import duckdb
import numpy as np
from pydantic import BaseModel, Field
from sklearn.neighbors import BallTree, KDTree

from benchforge.anonymize.policy.models import Linkage
from benchforge.anonymize.report.kanon import PrivacyInputError, quote, require_columns, table_ref
from benchforge.anonymize.sqltypes import is_numeric_type

ColumnKind = Literal["numeric", "categorical"]

MAX_CANDIDATES = 200_000
ONE_HOT_MAX = 64
EMBED_DIMS = 32
TEXT_NUMBER_SHARE = 0.9  # a VARCHAR column is numeric when this share of its values parse
_TIE_EPS = 1e-7

_TEMPORAL_TYPES = ("DATE", "TIMESTAMP", "TIME")
# A number as text: optional currency sign, thousands separators, a unit or currency after.
_NUMBER_TEXT = r"^\s*[$€£¥]?\s*[+-]?[0-9][0-9,]*(\.[0-9]+)?([eE][+-]?[0-9]+)?\s*[A-Za-z%]{0,4}\s*$"
_NUMBER_PART = r"[+-]?[0-9][0-9,]*(\.[0-9]+)?([eE][+-]?[0-9]+)?"


class LinkageResult(BaseModel):
    """How often the attacker's nearest released record is the target's own."""

    table: str
    known: list[str]
    sampled: int = Field(description="Targets linked.")
    candidates: int = Field(description="Released records searched.")
    rate: float = Field(description="Share of targets linked to their own record.")
    baseline: float = Field(description="Blind guess: 1 / candidates.")
    ratio: float = Field(description="rate / baseline (1 = no better than guessing).")


@dataclass(frozen=True)
class ColumnSpec:
    """A column as the distance sees it, with its DuckDB type on each side."""

    name: str
    kind: ColumnKind
    src_type: str
    rel_type: str


def _is_numeric_type(dtype: str) -> bool:
    return is_numeric_type(dtype)


def _is_temporal_type(dtype: str) -> bool:
    return dtype.startswith(_TEMPORAL_TYPES)


def value_expr(column: str, dtype: str, kind: ColumnKind) -> str:
    """SQL giving the column as DOUBLE (numeric kind) or VARCHAR (categorical kind), whatever
    its type on this side (a release may store a number as text, or a generalized date)."""
    col = quote(column)
    if kind == "categorical":
        return f"CAST({col} AS VARCHAR)"
    if _is_numeric_type(dtype):
        return f"CAST({col} AS DOUBLE)"
    if _is_temporal_type(dtype):
        return f"CAST(epoch({col}) AS DOUBLE)"
    if dtype == "VARCHAR":
        return f"TRY_CAST(replace(regexp_extract({col}, '{_NUMBER_PART}'), ',', '') AS DOUBLE)"
    return f"TRY_CAST({col} AS DOUBLE)"


def column_specs(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[str]
) -> list[ColumnSpec]:
    """Numeric or categorical, decided on the source: numeric and temporal types are numeric,
    a VARCHAR column is numeric when at least 90% of its values read as numbers (the
    ``'1,234.00 USD'`` stressor), everything else is categorical."""
    src = require_columns(con, "src", table, columns)
    rel = require_columns(con, "rel", table, columns)
    specs: list[ColumnSpec] = []
    for c in columns:
        st = src[c]
        kind: ColumnKind = "categorical"
        if _is_numeric_type(st) or _is_temporal_type(st):
            kind = "numeric"
        elif st == "VARCHAR":
            row = con.execute(
                f"SELECT count({quote(c)}), "
                f"count(*) FILTER (WHERE regexp_matches({quote(c)}, '{_NUMBER_TEXT}')) "
                f"FROM {table_ref('src', table)}"
            ).fetchone()
            assert row is not None
            if row[0] and row[1] >= TEXT_NUMBER_SHARE * row[0]:
                kind = "numeric"
        specs.append(ColumnSpec(c, kind, st, rel[c]))
    return specs


def _as_float(values: np.ndarray) -> np.ndarray:
    if isinstance(values, np.ma.MaskedArray):
        out = np.asarray(values.data, dtype=float).copy()
        out[np.ma.getmaskarray(values)] = np.nan
        return out
    return np.asarray(values, dtype=float)


def _as_object(values: np.ndarray) -> np.ndarray:
    if isinstance(values, np.ma.MaskedArray):
        out = np.asarray(values.data, dtype=object).copy()
        out[np.ma.getmaskarray(values)] = None
        return out
    return np.asarray(values, dtype=object)


Frame = dict[str, np.ndarray]


def fetch_rows(
    con: duckdb.DuckDBPyConnection,
    catalog: Literal["src", "rel"],
    table: str,
    specs: list[ColumnSpec],
    ids_sql: str,
) -> tuple[np.ndarray, Frame]:
    """Rowids and column values of ``<catalog>.raw.<table>`` for the rows ``ids_sql`` selects
    (a query returning ``rid``, the rowid, and ``pos``, the output order). Numeric columns come
    back as float arrays with NaN, categorical ones as object arrays with None."""
    exprs = [
        value_expr(s.name, s.src_type if catalog == "src" else s.rel_type, s.kind) for s in specs
    ]
    select = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    result = con.execute(
        f"SELECT ids.rid AS rid{', ' + select if select else ''} "
        f"FROM ({ids_sql}) ids JOIN {table_ref(catalog, table)} t ON t.rowid = ids.rid "
        "ORDER BY ids.pos"
    ).fetchnumpy()
    rids = np.asarray(_as_float(result["rid"]), dtype=np.int64)
    frame: Frame = {}
    for i, s in enumerate(specs):
        raw = result[f"c{i}"]
        frame[s.name] = _as_float(raw) if s.kind == "numeric" else _as_object(raw)
    return rids, frame


def source_moments(
    con: duckdb.DuckDBPyConnection, table: str, specs: list[ColumnSpec]
) -> dict[str, tuple[float, float]]:
    """Mean and standard deviation of each numeric column over the whole source table (SQL
    aggregates, no fetch); a constant or empty column gets sd 1."""
    numeric = [s for s in specs if s.kind == "numeric"]
    if not numeric:
        return {}
    parts = []
    for s in numeric:
        e = value_expr(s.name, s.src_type, "numeric")
        parts.append(f"avg({e}), stddev_pop({e})")
    row = con.execute(f"SELECT {', '.join(parts)} FROM {table_ref('src', table)}").fetchone()
    assert row is not None
    out: dict[str, tuple[float, float]] = {}
    for i, s in enumerate(numeric):
        mean, sd = row[2 * i], row[2 * i + 1]
        m = float(mean) if mean is not None else 0.0
        d = float(sd) if sd is not None and float(sd) > 0 else 1.0
        out[s.name] = (m, d)
    return out


@dataclass
class FeatureSpace:
    """Encodes frames over the same columns into one L1 space (see the module docstring); the
    categories are those of all frames encoded together, so equal values meet."""

    specs: list[ColumnSpec]
    moments: dict[str, tuple[float, float]]
    seed: int = 0
    notes: list[str] = field(default_factory=list)

    def encode(self, *frames: Frame) -> list[np.ndarray]:
        sizes = [len(next(iter(f.values()))) if f else 0 for f in frames]
        blocks: list[list[np.ndarray]] = [[] for _ in frames]
        for idx, s in enumerate(self.specs):
            cols = [f[s.name] for f in frames]
            if s.kind == "numeric":
                mean, sd = self.moments.get(s.name, (0.0, 1.0))
                joined = np.concatenate(cols) if cols else np.empty(0)
                missing_any = bool(np.isnan(joined).any())
                for b, col in zip(blocks, cols, strict=True):
                    z = (col - mean) / sd
                    nan = np.isnan(z)
                    b.append(np.where(nan, 0.0, z)[:, None])
                    if missing_any:
                        b.append(nan.astype(float)[:, None])
                continue
            keys = [
                np.array(["\x00null" if v is None else str(v) for v in col], dtype=object)
                for col in cols
            ]
            joined_keys = np.concatenate(keys) if keys else np.empty(0, dtype=object)
            cats, codes = np.unique(joined_keys, return_inverse=True)
            if len(cats) <= ONE_HOT_MAX:
                table = np.eye(len(cats)) * 0.5
            else:
                rng = np.random.default_rng([self.seed, idx])
                table = rng.choice([-1.0, 1.0], size=(len(cats), EMBED_DIMS)) / EMBED_DIMS
            start = 0
            for b, n in zip(blocks, sizes, strict=True):
                b.append(table[codes[start : start + n]])
                start += n
        return [np.hstack(b) if b else np.zeros((n, 0)) for b, n in zip(blocks, sizes, strict=True)]


def l1_tree(points: np.ndarray) -> KDTree | BallTree:
    """A nearest-neighbour index under L1: a k-d tree in few dimensions, a ball tree beyond
    (k-d trees degrade towards brute force as dimensions grow)."""
    if points.shape[1] <= 16:
        return KDTree(points, metric="manhattan")
    return BallTree(points, metric="manhattan")


def nearest_own_rate(attacker: np.ndarray, released: np.ndarray, own: np.ndarray) -> float:
    """Mean over targets of P(a random pick among the nearest released records is the
    target's own record ``own[i]``): 1/|ties| when the own record is among the nearest, else
    0. L1 distance."""
    if len(attacker) == 0:
        return 0.0
    tree = l1_tree(released)
    d0 = tree.query(attacker, k=1, return_distance=True)[0][:, 0]
    radius = d0 + _TIE_EPS * (1.0 + d0)
    ties = np.asarray(tree.query_radius(attacker, r=radius, count_only=True), dtype=float)
    d_own = np.abs(attacker - released[own]).sum(axis=1)
    hit = d_own <= radius
    return float(np.where(hit, 1.0 / np.maximum(ties, 1.0), 0.0).mean())


def row_count(con: duckdb.DuckDBPyConnection, catalog: str, table: str) -> int:
    row = con.execute(f"SELECT count(*) FROM {table_ref(catalog, table)}").fetchone()
    assert row is not None
    return int(row[0])


def aligned_rows(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Row count of a table that must be the same in source and release (rows align by
    rowid)."""
    n_src, n_rel = row_count(con, "src", table), row_count(con, "rel", table)
    if n_src != n_rel:
        raise PrivacyInputError(
            f"privacy report: {table} has {n_src} source rows but {n_rel} released rows; "
            "rows must align by rowid"
        )
    return n_rel


def record_linkage(
    con: duckdb.DuckDBPyConnection,
    link: Linkage,
    *,
    sample_rows: int = 5000,
    seed: int = 0,
    max_candidates: int = MAX_CANDIDATES,
) -> tuple[LinkageResult, list[str]]:
    """Link sampled targets' original ``known`` values to the release; the result and notes."""
    table = link.table
    specs = column_specs(con, table, list(link.known))
    n = aligned_rows(con, table)
    notes: list[str] = []
    targets_sql = (
        f"SELECT rowid AS rid, row_number() OVER (ORDER BY hash(rowid, {int(seed)}), rowid) "
        f"AS pos FROM {table_ref('rel', table)} "
        f"ORDER BY hash(rowid, {int(seed)}), rowid LIMIT {int(sample_rows)}"
    )
    if n == 0 or sample_rows <= 0:
        notes.append(f"linkage on {table}: no rows to link")
        return (
            LinkageResult(
                table=table,
                known=list(link.known),
                sampled=0,
                candidates=n,
                rate=0.0,
                baseline=0.0,
                ratio=0.0,
            ),
            notes,
        )
    if n <= max_candidates:
        cand_sql = f"SELECT rowid AS rid, rowid AS pos FROM {table_ref('rel', table)}"
    else:
        cand_sql = (
            f"SELECT rid, rid AS pos FROM ("
            f"SELECT rid FROM ({targets_sql}) UNION "
            f"(SELECT rowid AS rid FROM {table_ref('rel', table)} "
            f"ORDER BY hash(rowid, {int(seed) + 1}), rowid "
            f"LIMIT {max(int(max_candidates) - int(sample_rows), 0)}))"
        )
    target_ids, attacker = fetch_rows(con, "src", table, specs, targets_sql)
    cand_ids, released = fetch_rows(con, "rel", table, specs, cand_sql)
    if n > max_candidates:
        notes.append(
            f"linkage on {table}: searched a {len(cand_ids)}-row candidate sample of {n} rows "
            "(always holding the targets), so the baseline is 1/sample size"
        )
    space = FeatureSpace(specs, source_moments(con, table, specs), seed=seed)
    att_x, rel_x = space.encode(attacker, released)
    own = np.searchsorted(cand_ids, target_ids)
    rate = nearest_own_rate(att_x, rel_x, own)
    baseline = 1.0 / len(cand_ids)
    return (
        LinkageResult(
            table=table,
            known=list(link.known),
            sampled=len(target_ids),
            candidates=len(cand_ids),
            rate=rate,
            baseline=baseline,
            ratio=rate / baseline,
        ),
        notes,
    )

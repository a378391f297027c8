"""Attack-based privacy risks: singling out, linkability and inference, after anonymeter
(Giomi et al., PoPETs 2023), reimplemented here because anonymeter pins numpy and pandas
versions this project cannot use.

anonymeter measures what an attacker learns from a synthetic dataset about the records it was
trained on, against what the same attack achieves on *control* records that were held out:
only the excess is a privacy risk (the rest is what any statistic of the population reveals).
Adapted to a perturbed release, where every record is released:

- a deterministic sample of original rows is split into targets T and controls C, disjoint and
  of equal size (``ORDER BY hash(rowid, seed + 1)``; at most ``MAX_ATTACK_ROWS`` each);
- the attacker sees the released rows of T only (rel T), standing in for "the release";
  C's released rows are withheld, so C plays anonymeter's control set;
- every attack is scored on the original T (attack rate) and, unchanged, on the original C
  (control rate); a baseline attacker guesses at random.

Attacks (columns: the linkage entry's ``known`` columns, the table's quasi-identifiers and
sensitive columns, and the ``secret``):

- *singling out*: predicates that isolate exactly one record of rel T — univariate (a value
  seen once, the minimum or maximum of a number, the single NULL) and multivariate (2-3
  attributes of a random rel T record: ``==`` for categories, ``>=`` / ``<=`` a number above /
  below its median, ``IS NULL``); univariate ones fill at most half of the attacks, up to
  ``MAX_ATTEMPTS_PER_QUERY`` multivariate candidates per wanted predicate are tried; success =
  the predicate matches exactly one original record of T; control = exactly one of C; baseline
  = random predicates of the same sizes from rel T's values;
- *linkability*: the attacker holds two disjoint column groups of a target's original values
  (the linkage entry's ``known`` columns and the table's other quasi-identifiers, or the two
  halves of ``known`` when there are none) and links each group to its nearest rel T record;
  success = both land on the same record; baseline = two random records;
- *inference*: knowing ``known``, the attacker guesses ``secret`` as the nearest rel T record's
  value; success = the same category, or within 5% for a number (a NULL guessed for a NULL
  counts: "missing" was inferred); baseline = a random rel T value.

Nearest neighbours use the linkage module's L1 space (z-scores with the source's moments plus 1
per mismatching category). Rates are Wilson score estimates at 95% (the centre of the
interval, as anonymeter reports them); the risk is ``(attack - control) / (1 - control)``
clipped to [0, 1], its interval the rates' errors propagated to first order, also clipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import duckdb
import numpy as np
from pydantic import BaseModel, Field

from benchforge.anonymize.report.kanon import table_ref
from benchforge.anonymize.report.linkage import (
    ColumnSpec,
    FeatureSpace,
    Frame,
    aligned_rows,
    column_specs,
    fetch_rows,
    l1_tree,
    source_moments,
)

MAX_ATTACK_ROWS = 2000
MIN_ATTACK_ROWS = 50
MAX_ATTEMPTS_PER_QUERY = 10  # multivariate predicates tried per one wanted
NUMERIC_TOLERANCE = 0.05
CONFIDENCE = 0.95
_Z95 = 1.959963984540054  # the 97.5% normal quantile: a two-sided 95% interval

AttackKind = Literal["singling_out", "linkability", "inference"]


class AttackRisk(BaseModel):
    """One attack's rates (Wilson estimates) and the residual risk over the control."""

    kind: AttackKind
    table: str
    attacks: int = Field(description="Attacks run (predicates or targets).")
    attack_rate: float = Field(description="Success on the targets T.")
    control_rate: float = Field(description="Success on the held-out controls C.")
    baseline_rate: float = Field(description="Success of random guessing.")
    risk: float = Field(description="(attack - control) / (1 - control), clipped to [0, 1].")
    ci_low: float
    ci_high: float
    columns: list[str]
    sample_rows: int = Field(default=0, description="Records in T (and in C).")
    seed: int = 0


# ---------------------------------------------------------------- statistics


def wilson(n_total: int, n_success: int, z: float = _Z95) -> tuple[float, float]:
    """Wilson score estimate of a success rate and its error (half-width of the interval)."""
    if n_total <= 0:
        return 0.0, 0.0
    z2 = z * z
    denom = n_total + z2
    rate = (n_success + 0.5 * z2) / denom
    spread = n_success * (n_total - n_success) / n_total
    return rate, z / denom * math.sqrt(spread + 0.25 * z2)


def residual_risk(
    attack: tuple[float, float], control: tuple[float, float]
) -> tuple[float, float, float]:
    """Risk and its interval from (rate, error) of the attack and of the control: the share
    of the control's failures the attack turns into successes. A control that always succeeds
    leaves nothing to measure: risk 0 over [0, 1]."""
    a, da = attack
    c, dc = control
    if c >= 1.0:
        return 0.0, 0.0, 1.0
    value = (a - c) / (1.0 - c)
    err = math.sqrt((da / (1.0 - c)) ** 2 + (dc * (a - 1.0) / (1.0 - c) ** 2) ** 2)

    def clip(x: float) -> float:
        return min(max(x, 0.0), 1.0)

    return clip(value), clip(value - err), clip(value + err)


def _risk(
    kind: AttackKind,
    table: str,
    columns: list[str],
    n: int,
    success: int,
    control: int,
    baseline: int,
    rows: int,
    seed: int,
) -> AttackRisk:
    a, c, b = wilson(n, success), wilson(n, control), wilson(n, baseline)
    risk, lo, hi = residual_risk(a, c)
    return AttackRisk(
        kind=kind,
        table=table,
        attacks=n,
        attack_rate=a[0],
        control_rate=c[0],
        baseline_rate=b[0],
        risk=risk,
        ci_low=lo,
        ci_high=hi,
        columns=columns,
        sample_rows=rows,
        seed=seed,
    )


# ---------------------------------------------------------------- singling out

_EQ, _LE, _GE, _NA = 0, 1, 2, 3


@dataclass
class Queries:
    """Conjunctive predicates as arrays: ``use[q, c]`` says whether column c takes part in
    query q, with operator ``ops[q, c]`` and operand ``vals[q, c]``."""

    use: np.ndarray
    ops: np.ndarray
    vals: np.ndarray

    @classmethod
    def empty(cls, m: int) -> Queries:
        return cls(np.zeros((0, m), bool), np.zeros((0, m), np.int8), np.zeros((0, m)))

    def __len__(self) -> int:
        return int(self.use.shape[0])

    def take(self, idx: np.ndarray) -> Queries:
        return Queries(self.use[idx], self.ops[idx], self.vals[idx])

    def concat(self, other: Queries) -> Queries:
        return Queries(
            np.vstack([self.use, other.use]),
            np.vstack([self.ops, other.ops]),
            np.vstack([self.vals, other.vals]),
        )

    def keys(self) -> list[bytes]:
        """A hashable identity per query (to drop duplicates)."""
        vals = np.where(self.use & (self.ops != _NA), self.vals, 0.0)
        vals = np.where(np.isnan(vals), 0.0, vals)
        ops = np.where(self.use, self.ops, -1).astype(np.int8)
        return [ops[i].tobytes() + vals[i].tobytes() for i in range(len(self))]


def count_matches(data: np.ndarray, q: Queries, chunk: int = 256) -> np.ndarray:
    """Records of ``data`` (rows x columns, floats with NaN for NULL) each query matches."""
    out = np.zeros(len(q), dtype=np.int64)
    for start in range(0, len(q), chunk):
        sl = slice(start, start + chunk)
        use, ops, vals = q.use[sl], q.ops[sl], q.vals[sl]
        match = np.ones((use.shape[0], data.shape[0]), dtype=bool)
        for c in range(data.shape[1]):
            rows = np.flatnonzero(use[:, c])
            if rows.size == 0:
                continue
            x = data[:, c][None, :]
            v = vals[rows, c][:, None]
            op = ops[rows, c][:, None]
            cond = np.where(
                op == _EQ,
                x == v,
                np.where(op == _LE, x <= v, np.where(op == _GE, x >= v, np.isnan(x))),
            )
            match[rows] &= cond
        out[sl] = match.sum(axis=1)
    return out


def _numeric_matrix(frames: list[Frame], specs: list[ColumnSpec]) -> list[np.ndarray]:
    """Frames as float matrices: numbers as they are, categories as shared integer codes."""
    mats: list[list[np.ndarray]] = [[] for _ in frames]
    for s in specs:
        cols = [f[s.name] for f in frames]
        if s.kind == "numeric":
            for m, col in zip(mats, cols, strict=True):
                m.append(col.astype(float))
            continue
        keys = [
            np.array(["" if v is None else "\x01" + str(v) for v in col], dtype=object)
            for col in cols
        ]
        cats, codes = np.unique(np.concatenate(keys), return_inverse=True)
        codes = codes.astype(float)
        if len(cats) and cats[0] == "":
            codes[codes == 0] = np.nan
        start = 0
        for m, col in zip(mats, cols, strict=True):
            m.append(codes[start : start + len(col)])
            start += len(col)
    return [np.column_stack(m) if m else np.zeros((0, 0)) for m in mats]


def _univariate(rel: np.ndarray, numeric: np.ndarray) -> Queries:
    m = rel.shape[1]
    use, ops, vals = [], [], []

    def add(c: int, op: int, v: float) -> None:
        u = np.zeros(m, bool)
        u[c] = True
        o = np.zeros(m, np.int8)
        o[c] = op
        x = np.zeros(m)
        x[c] = v
        use.append(u)
        ops.append(o)
        vals.append(x)

    for c in range(m):
        col = rel[:, c]
        nan = np.isnan(col)
        if nan.sum() == 1:
            add(c, _NA, np.nan)
        present = col[~nan]
        if present.size == 0:
            continue
        if numeric[c]:
            add(c, _LE, float(present.min()))
            add(c, _GE, float(present.max()))
        values, counts = np.unique(present, return_counts=True)
        for v in values[counts == 1]:
            add(c, _EQ, float(v))
    if not use:
        return Queries.empty(m)
    return Queries(np.array(use), np.array(ops, dtype=np.int8), np.array(vals))


def _multivariate(
    rel: np.ndarray, numeric: np.ndarray, n: int, rng: np.random.Generator
) -> Queries:
    """``n`` predicates over 2-3 attributes of random rel T records."""
    rows, m = rel.shape
    sizes = rng.integers(2, min(3, m) + 1, size=n)
    use = np.zeros((n, m), bool)
    for i, k in enumerate(sizes):
        use[i, rng.choice(m, size=int(k), replace=False)] = True
    records = rel[rng.integers(0, rows, size=n)]
    with np.errstate(all="ignore"):
        medians = np.array(
            [np.nanmedian(rel[:, c]) if (~np.isnan(rel[:, c])).any() else 0.0 for c in range(m)]
        )
    ops = np.where(numeric[None, :], np.where(records > medians[None, :], _GE, _LE), _EQ).astype(
        np.int8
    )
    ops = np.where(np.isnan(records), _NA, ops).astype(np.int8)
    return Queries(use, ops, records)


def _random_queries(
    rel: np.ndarray, numeric: np.ndarray, sizes: np.ndarray, rng: np.random.Generator
) -> Queries:
    """Baseline predicates: as many columns as the real ones, values drawn independently from
    each column's distinct rel T values, a random comparison for numbers."""
    n, m = len(sizes), rel.shape[1]
    use = np.zeros((n, m), bool)
    vals = np.zeros((n, m))
    ops = np.zeros((n, m), np.int8)
    uniques = [np.unique(rel[:, c]) for c in range(m)]  # NaNs stay as separate entries
    for i, k in enumerate(sizes):
        for c in rng.choice(m, size=int(min(k, m)), replace=False):
            use[i, c] = True
            v = float(rng.choice(uniques[c])) if uniques[c].size else np.nan
            vals[i, c] = v
            if np.isnan(v):
                ops[i, c] = _NA
            elif numeric[c]:
                ops[i, c] = rng.choice([_EQ, _LE, _GE])
    return Queries(use, ops, vals)


def singling_out(
    ori_t: np.ndarray,
    ori_c: np.ndarray,
    rel_t: np.ndarray,
    numeric: np.ndarray,
    n_attacks: int,
    rng: np.random.Generator,
) -> tuple[int, int, int, int]:
    """(queries, successes on T, successes on C, baseline successes on T)."""
    m = rel_t.shape[1]
    uni = _univariate(rel_t, numeric)
    uni = uni.take(np.flatnonzero(count_matches(rel_t, uni) == 1))
    uni = uni.take(rng.permutation(len(uni))[: max(n_attacks // 2, 1)])
    queries, seen = uni, set(uni.keys())
    attempts = 0
    while m >= 2 and len(queries) < n_attacks and attempts < MAX_ATTEMPTS_PER_QUERY * n_attacks:
        batch = _multivariate(rel_t, numeric, 512, rng)
        attempts += 512
        batch = batch.take(np.flatnonzero(count_matches(rel_t, batch) == 1))
        fresh: list[int] = []
        for i, key in enumerate(batch.keys()):
            if key not in seen and len(queries) + len(fresh) < n_attacks:
                seen.add(key)
                fresh.append(i)
        queries = queries.concat(batch.take(np.array(fresh, dtype=np.int64)))
    if len(queries) == 0:
        return 0, 0, 0, 0
    sizes = queries.use.sum(axis=1)
    baseline = _random_queries(rel_t, numeric, sizes, rng)
    return (
        len(queries),
        int((count_matches(ori_t, queries) == 1).sum()),
        int((count_matches(ori_c, queries) == 1).sum()),
        int((count_matches(ori_t, baseline) == 1).sum()),
    )


# ---------------------------------------------------------------- linkability and inference


def _nearest(queries: np.ndarray, released: np.ndarray) -> np.ndarray:
    """Index of each query's nearest released record (L1; the tree's pick among ties)."""
    return np.asarray(l1_tree(released).query(queries, k=1, return_distance=False)[:, 0])


def _correct_guess(guess: np.ndarray, truth: np.ndarray, numeric: bool) -> np.ndarray:
    if numeric:
        g, t = guess.astype(float), truth.astype(float)
        both_nan = np.isnan(g) & np.isnan(t)
        with np.errstate(invalid="ignore"):
            close = np.abs(g - t) <= NUMERIC_TOLERANCE * np.abs(t)
        return np.asarray(both_nan | close)
    return np.array([a == b for a, b in zip(guess, truth, strict=True)], dtype=bool)


@dataclass
class _Sample:
    """Original T, original C and released T over the attack columns."""

    specs: list[ColumnSpec]
    ori_t: Frame
    ori_c: Frame
    rel_t: Frame
    moments: dict[str, tuple[float, float]]

    def space(self, names: list[str], seed: int) -> FeatureSpace:
        return FeatureSpace([s for s in self.specs if s.name in names], self.moments, seed=seed)


def _pick(frame: Frame, space: FeatureSpace) -> Frame:
    return {s.name: frame[s.name] for s in space.specs}


def _draw(
    con: duckdb.DuckDBPyConnection, table: str, specs: list[ColumnSpec], n_each: int, seed: int
) -> _Sample:
    order = f"hash(rowid, {int(seed) + 1}), rowid"
    ranked = (
        f"SELECT rowid AS rid, row_number() OVER (ORDER BY {order}) AS pos "
        f"FROM {table_ref('rel', table)}"
    )
    t_sql = f"SELECT rid, pos FROM ({ranked}) WHERE pos <= {n_each}"
    c_sql = f"SELECT rid, pos FROM ({ranked}) WHERE pos > {n_each} AND pos <= {2 * n_each}"
    _, ori_t = fetch_rows(con, "src", table, specs, t_sql)
    _, ori_c = fetch_rows(con, "src", table, specs, c_sql)
    _, rel_t = fetch_rows(con, "rel", table, specs, t_sql)
    return _Sample(specs, ori_t, ori_c, rel_t, source_moments(con, table, specs))


def attack_risks(
    con: duckdb.DuckDBPyConnection,
    table: str,
    *,
    known: list[str],
    secret: str | None = None,
    quasi_identifiers: list[str] | None = None,
    sensitive: list[str] | None = None,
    sample_rows: int = 5000,
    seed: int = 0,
) -> tuple[list[AttackRisk], list[str]]:
    """The three attacks on one table (see the module docstring); results and notes."""
    qis = [c for c in (quasi_identifiers or []) if c not in known and c != secret]
    extra = [c for c in (sensitive or []) if c not in known and c not in qis and c != secret]
    columns = list(dict.fromkeys([*known, *qis, *extra, *([secret] if secret else [])]))
    notes: list[str] = []
    n = aligned_rows(con, table)
    n_each = min(MAX_ATTACK_ROWS, sample_rows // 2, n // 2)
    if n_each < MIN_ATTACK_ROWS:
        notes.append(
            f"attacks on {table}: {n} rows leave {n_each} targets and controls each "
            f"(< {MIN_ATTACK_ROWS}); not run"
        )
        return [], notes
    specs = column_specs(con, table, columns)
    sample = _draw(con, table, specs, n_each, seed)
    rng = np.random.default_rng([seed, 7])
    results: list[AttackRisk] = []

    # singling out
    ot, oc, rt = _numeric_matrix([sample.ori_t, sample.ori_c, sample.rel_t], specs)
    numeric = np.array([s.kind == "numeric" for s in specs])
    n_q, ok_t, ok_c, ok_b = singling_out(ot, oc, rt, numeric, n_each, rng)
    if n_q:
        results.append(_risk("singling_out", table, columns, n_q, ok_t, ok_c, ok_b, n_each, seed))
    else:
        notes.append(f"singling out on {table}: no predicate isolates a released record")

    # linkability
    known_only = [c for c in known if c != secret]
    group_a, group_b = known_only, qis
    if not group_b and len(known_only) >= 2:
        half = len(known_only) // 2
        group_a, group_b = known_only[:half], known_only[half:]
    if group_a and group_b:
        hits = []
        for frame in (sample.ori_t, sample.ori_c):
            links = []
            for group in (group_a, group_b):
                space = sample.space(group, seed)
                att_x, rel_x = space.encode(_pick(frame, space), _pick(sample.rel_t, space))
                links.append(_nearest(att_x, rel_x))
            hits.append(int((links[0] == links[1]).sum()))
        rand = rng.integers(0, n_each, size=(2, n_each))
        results.append(
            _risk(
                "linkability",
                table,
                [*group_a, *group_b],
                n_each,
                hits[0],
                hits[1],
                int((rand[0] == rand[1]).sum()),
                n_each,
                seed,
            )
        )
    else:
        notes.append(
            f"linkability on {table}: needs two column groups (known vs other quasi-identifiers,"
            " or two known columns); not run"
        )

    # inference
    if secret and known_only:
        space = sample.space(known_only, seed)
        secret_spec = next(s for s in specs if s.name == secret)
        is_num = secret_spec.kind == "numeric"
        rel_secret = sample.rel_t[secret]
        found = []
        for frame in (sample.ori_t, sample.ori_c):
            att_x, rel_x = space.encode(_pick(frame, space), _pick(sample.rel_t, space))
            guess = rel_secret[_nearest(att_x, rel_x)]
            found.append(int(_correct_guess(guess, frame[secret], is_num).sum()))
        random_guess = rel_secret[rng.integers(0, n_each, size=n_each)]
        base = int(_correct_guess(random_guess, sample.ori_t[secret], is_num).sum())
        results.append(
            _risk(
                "inference",
                table,
                [*known_only, secret],
                n_each,
                found[0],
                found[1],
                base,
                n_each,
                seed,
            )
        )
    elif secret:
        notes.append(f"inference on {table}: the secret is the only known column; not run")
    return results, notes

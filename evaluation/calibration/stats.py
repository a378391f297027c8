"""Agreement statistics of a judge against human raters, each with a bootstrap interval.

Everything statistical comes from the libraries (``scipy.stats`` for correlations and the
bootstrap, ``sklearn.metrics.cohen_kappa_score`` for weighted kappa, ``krippendorff`` for alpha);
this module only arranges the data and decides what is resampled: always *cases* (columns of the
rater matrix), never individual labels, so a case's labels stay together as the unit of
sampling.

Values are on one scale per kind of case:

- rubric items: the earned share of the item's points, signed (``earned / |points|``: 0..1 for
  a positive item, -1..0 for a penalty), so items of different weights compare;
- GSB pairs: good = 1, same = 0, bad = -1. A pair whose two orders disagree counts as a tie (0)
  in the judge's labels, the MT-Bench convention: an order-dependent judge loses agreement for
  it, besides its inconsistency rate.

A figure that cannot be computed (too few cases, a constant input) is ``None``, never 0.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np
import sklearn
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field
from scipy import stats
from sklearn.metrics import cohen_kappa_score

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

Level = Literal["interval", "ordinal"]
GSB_VALUES = (-1, 0, 1)
ALPHA_GRID = 0.05
"""Interval alpha rounds values to this grid: the krippendorff package's cost grows with the
square of the number of distinct values (continuous judge scores took seconds per call); the
rounding noise (variance 0.05**2 / 12) is far below any rater disagreement worth measuring."""
MIN_CASES = 3


class Figure(BaseModel):
    """One statistic with its bootstrap 95% interval over cases (``None``: not computable)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = Field(default=0, description="cases it is computed on")

    def text(self, digits: int = 3) -> str:
        if self.value is None:
            return "n/a"
        if self.low is None or self.high is None:
            return f"{self.value:.{digits}f}"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def contains(self, x: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= x <= self.high


class BootstrapSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    resamples: int = Field(default=1000, ge=50)
    seed: int = 0
    confidence: float = Field(default=0.95, gt=0, lt=1)


# --------------------------------------------------------------------------- primitives


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def pearson(x: FloatArray, y: FloatArray) -> float:
    """Pearson r; NaN with fewer than 3 points or a constant input."""
    if len(x) < MIN_CASES or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.pearsonr(x, y).statistic)


def spearman(x: FloatArray, y: FloatArray) -> float:
    if len(x) < MIN_CASES or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.spearmanr(x, y).statistic)


def kendall(x: FloatArray, y: FloatArray) -> float:
    if len(x) < MIN_CASES or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(stats.kendalltau(x, y).statistic)


def quadratic_kappa(a: FloatArray, b: FloatArray) -> float:
    """Quadratic-weighted Cohen kappa on GSB values (-1, 0, 1); NaN when undefined (one
    category only, on both sides)."""
    if len(a) < MIN_CASES:
        return math.nan
    ia, ib = a.astype(np.int64), b.astype(np.int64)
    if len(set(ia.tolist()) | set(ib.tolist())) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(cohen_kappa_score(ia, ib, labels=list(GSB_VALUES), weights="quadratic"))


def alpha(matrix: FloatArray, level: Level) -> float:
    """Krippendorff alpha of a raters x cases matrix (NaN: missing) at ``level`` ("interval"
    or "ordinal"); NaN when undefined (no pairable values, or no variation at all)."""
    data = matrix[:, np.sum(np.isfinite(matrix), axis=0) >= 2]
    if data.shape[1] < 2:
        return math.nan
    values = data[np.isfinite(data)]
    if np.ptp(values) == 0:
        return math.nan
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if level == "ordinal":
                return float(
                    krippendorff.alpha(
                        reliability_data=data,
                        level_of_measurement="ordinal",
                        value_domain=list(GSB_VALUES),
                    )
                )
            grid = np.round(data / ALPHA_GRID) * ALPHA_GRID
            return float(krippendorff.alpha(reliability_data=grid, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return math.nan


def bootstrap_many(
    statistics: Mapping[str, Callable[[IntArray], float]], n: int, settings: BootstrapSettings
) -> dict[str, Figure]:
    """Each statistic of the case indices ``0..n-1``, with its percentile interval over one
    ``scipy.stats.bootstrap`` run resampling the cases (every statistic sees the same
    resamples). Resamples where a statistic is undefined (NaN, e.g. every resampled case
    alike) are left out of its interval; mostly undefined: no interval."""
    names = list(statistics)
    indices = np.arange(n)
    values = {k: (_finite(statistics[k](indices)) if n > 0 else None) for k in names}
    if n < MIN_CASES or all(v is None for v in values.values()):
        return {k: Figure(value=values[k], n=n) for k in names}

    def stat(sample: FloatArray) -> FloatArray:
        idx = np.asarray(sample, dtype=np.int64)
        return np.array([statistics[k](idx) for k in names], dtype=float)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (indices,),
            stat,
            n_resamples=settings.resamples,
            vectorized=False,
            method="percentile",
            confidence_level=settings.confidence,
            rng=np.random.default_rng(settings.seed),
        )
    dists = np.asarray(result.bootstrap_distribution, dtype=float).reshape(len(names), -1)
    tail = (1 - settings.confidence) / 2 * 100
    out: dict[str, Figure] = {}
    for name, dist in zip(names, dists, strict=True):
        value = values[name]
        dist = dist[np.isfinite(dist)]
        if value is None or len(dist) < settings.resamples // 2:
            out[name] = Figure(value=value, n=n)
            continue
        low, high = np.percentile(dist, [tail, 100 - tail])
        out[name] = Figure(
            value=value, low=float(min(low, value)), high=float(max(high, value)), n=n
        )
    return out


def bootstrap(
    statistic: Callable[[IntArray], float], n: int, settings: BootstrapSettings
) -> Figure:
    """One statistic with its interval (see ``bootstrap_many``)."""
    return bootstrap_many({"x": statistic}, n, settings)["x"]


def _mean_finite(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan


# --------------------------------------------------------------------------- per kind


class Paired(BaseModel):
    """A judge-vs-human figure beside the same figure between the humans."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    judge: Figure
    humans: Figure


class KindStats(BaseModel):
    """Every figure of one judge on one kind of case (rubric items or GSB pairs)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    cases: int = Field(description="labelled cases")
    judged: int = Field(description="cases the judge scored in at least one repeat")
    repeats: int
    agreement_name: str = Field(description="pearson_r (rubric) or kappa (GSB)")
    agreement: Paired = Field(
        description="judge vs the human mean (rubric) / majority (GSB); humans: mean pairwise"
    )
    alpha: Paired = Field(description="Krippendorff alpha: judge added as a rater / humans only")
    model_pearson: Paired
    model_spearman: Paired
    model_kendall: Paired
    inconsistency: Figure | None = Field(
        default=None, description="GSB: share of judgments whose two orders disagree"
    )
    self_consistency: Figure | None = Field(
        default=None, description="share of cases labelled identically in every repeat"
    )
    repeat_std: Figure | None = Field(default=None, description="mean per-case std over repeats")
    stability_std: Figure | None = Field(
        default=None, description="mean over agents of the std of their score over repeats"
    )
    agents: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="agent -> (mean, std) of its judged score over repeats"
    )
    human_agents: dict[str, float] = Field(default_factory=dict, description="agent -> mean")
    points: list[tuple[float, float]] = Field(
        default_factory=list, description="(human, judge) per judged case, for the scatter plot"
    )


@dataclass(frozen=True)
class KindData:
    """The matrices one kind's figures are computed from (cases in one fixed order).

    ``humans``: raters x cases, NaN where a rater left a case unlabelled. ``judge``: repeats x
    cases, NaN where the judge left the case unscored. ``inconsistent``: repeats x cases, 1
    where the pair's two orders disagreed (GSB), NaN where unscored."""

    kind: str
    level: Level  # "interval" (rubric) or "ordinal" (GSB)
    agents: list[str]
    humans: FloatArray
    judge: FloatArray
    inconsistent: FloatArray | None = None


def _human_value(humans: FloatArray, ordinal: bool) -> FloatArray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(humans, axis=0)
    return np.rint(mean) if ordinal else mean


def _judge_value(judge: FloatArray, ordinal: bool) -> FloatArray:
    """The judge's label of each case over its repeats: the mean (rubric) or the rounded mean
    (GSB: the majority, a tie between good and bad being 'same')."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(judge, axis=0)
    return np.rint(mean) if ordinal else mean


def _agree(x: FloatArray, y: FloatArray, ordinal: bool) -> float:
    ok = np.isfinite(x) & np.isfinite(y)
    return quadratic_kappa(x[ok], y[ok]) if ordinal else pearson(x[ok], y[ok])


def _pairs(rows: int) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(rows), 2))


def _agent_means(values: FloatArray, codes: IntArray, agents: int) -> FloatArray:
    """Mean of ``values`` per agent code (NaN values left out; NaN for an agent without
    any)."""
    ok = np.isfinite(values)
    sums = np.bincount(codes[ok], weights=values[ok], minlength=agents)
    counts = np.bincount(codes[ok], minlength=agents)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


Correlation = Callable[[FloatArray, FloatArray], float]
MODEL_CORRELATIONS: dict[str, Correlation] = {
    "pearson": pearson,
    "spearman": spearman,
    "kendall": kendall,
}


def _model_corrs(a: FloatArray, b: FloatArray, codes: IntArray, agents: int) -> dict[str, float]:
    """Correlations of two per-agent leaderboards (means over the cases both sides scored),
    over the agents both have."""
    ok = np.isfinite(a) & np.isfinite(b)
    ma = _agent_means(np.where(ok, a, np.nan), codes, agents)
    mb = _agent_means(np.where(ok, b, np.nan), codes, agents)
    both = np.isfinite(ma) & np.isfinite(mb)
    if both.sum() < MIN_CASES:
        return dict.fromkeys(MODEL_CORRELATIONS, math.nan)
    return {name: corr(ma[both], mb[both]) for name, corr in MODEL_CORRELATIONS.items()}


def kind_stats(data: KindData, settings: BootstrapSettings) -> KindStats:
    """Every figure of ``data`` with its interval (one bootstrap over cases for all)."""
    ordinal = data.level == "ordinal"
    humans, judge = data.humans, data.judge
    names = sorted(set(data.agents))
    codes = np.array([names.index(a) for a in data.agents], dtype=np.int64)
    n_agents = len(names)
    n = humans.shape[1]
    pairs = _pairs(humans.shape[0])
    human_v = _human_value(humans, ordinal)
    judge_v = _judge_value(judge, ordinal)
    with_judge = np.vstack([humans, judge_v[None, :]])
    repeats = judge.shape[0]
    scored_all = np.isfinite(judge).all(axis=0)
    identical = np.where(scored_all, np.ptp(np.nan_to_num(judge), axis=0) < 1e-9, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        spread = np.nanstd(judge, axis=0)
    spread[np.sum(np.isfinite(judge), axis=0) < 2] = np.nan

    def nanmean(values: FloatArray) -> float:
        return float(np.nanmean(values)) if np.isfinite(values).any() else math.nan

    cache: dict[bytes, dict[str, float]] = {}

    def model_level(idx: IntArray) -> dict[str, float]:
        """Judge-vs-human and mean between-human model-level correlations on one resample
        (computed once for the three correlation kinds)."""
        key = idx.tobytes()
        if key not in cache:
            cache.clear()
            judged = _model_corrs(judge_v[idx], human_v[idx], codes[idx], n_agents)
            between = [
                _model_corrs(humans[a, idx], humans[b, idx], codes[idx], n_agents) for a, b in pairs
            ]
            cache[key] = {f"judge_{k}": v for k, v in judged.items()} | {
                f"humans_{k}": _mean_finite([m[k] for m in between]) for k in MODEL_CORRELATIONS
            }
        return cache[key]

    def stability(idx: IntArray) -> float:
        per_repeat = np.vstack(
            [_agent_means(judge[k, idx], codes[idx], n_agents) for k in range(repeats)]
        )
        both = np.isfinite(per_repeat).all(axis=0)
        return float(np.mean(np.std(per_repeat[:, both], axis=0))) if both.any() else math.nan

    statistics: dict[str, Callable[[IntArray], float]] = {
        "agreement": lambda idx: _agree(judge_v[idx], human_v[idx], ordinal),
        "inter_rater": lambda idx: _mean_finite(
            [_agree(humans[a, idx], humans[b, idx], ordinal) for a, b in pairs]
        ),
        "alpha_judge": lambda idx: alpha(with_judge[:, idx], data.level),
        "alpha_humans": lambda idx: alpha(humans[:, idx], data.level),
    }

    def model_stat(name: str) -> Callable[[IntArray], float]:
        return lambda idx: model_level(idx)[name]

    for k in MODEL_CORRELATIONS:
        for side in ("judge", "humans"):
            statistics[f"{side}_{k}"] = model_stat(f"{side}_{k}")
    if data.inconsistent is not None:
        inconsistent = data.inconsistent
        statistics["inconsistency"] = lambda idx: nanmean(inconsistent[:, idx])
    if repeats >= 2:
        statistics["self_consistency"] = lambda idx: nanmean(identical[idx])
        statistics["repeat_std"] = lambda idx: nanmean(spread[idx])
        statistics["stability_std"] = stability
    # scikit-learn validates every call's parameters (inspect-heavy); ours are well-formed
    with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        figures = bootstrap_many(statistics, n, settings)

    per_repeat = np.vstack([_agent_means(judge[k], codes, n_agents) for k in range(repeats)])
    agent_scores: dict[str, tuple[float, float]] = {}
    for j, agent in enumerate(names):
        column = per_repeat[:, j][np.isfinite(per_repeat[:, j])]
        if len(column):
            agent_scores[agent] = (float(np.mean(column)), float(np.std(column)))
    human_means = _agent_means(human_v, codes, n_agents)
    ok = np.isfinite(judge_v) & np.isfinite(human_v)

    def paired(name: str) -> Paired:
        return Paired(judge=figures[f"judge_{name}"], humans=figures[f"humans_{name}"])

    return KindStats(
        kind=data.kind,
        cases=int(np.sum(np.isfinite(humans).any(axis=0))),
        judged=int(np.sum(np.isfinite(judge_v))),
        repeats=repeats,
        agreement_name="kappa" if ordinal else "pearson_r",
        agreement=Paired(judge=figures["agreement"], humans=figures["inter_rater"]),
        alpha=Paired(judge=figures["alpha_judge"], humans=figures["alpha_humans"]),
        model_pearson=paired("pearson"),
        model_spearman=paired("spearman"),
        model_kendall=paired("kendall"),
        inconsistency=figures.get("inconsistency"),
        self_consistency=figures.get("self_consistency"),
        repeat_std=figures.get("repeat_std"),
        stability_std=figures.get("stability_std"),
        agents=agent_scores,
        human_agents={
            a: float(m) for a, m in zip(names, human_means, strict=True) if math.isfinite(m)
        },
        points=[(float(h), float(j)) for h, j in zip(human_v[ok], judge_v[ok], strict=True)],
    )

"""Agreement statistics of a judge against human raters, each with a bootstrap interval.

The bootstrap comes from ``scipy.stats``; Pearson, Spearman, Kendall's tau-b, quadratic-weighted
kappa and Krippendorff's alpha are computed here with numpy (tested equal to scipy's,
scikit-learn's and the ``krippendorff`` package's) because the bootstrap calls them hundreds of
thousands of times. This module arranges the data and decides what is resampled: always
*cases* (columns of the rater matrix), never individual labels, so a case's labels stay
together as the unit of sampling.

Values are on one scale per kind of case:

- rubric items: the earned share of the item's points, signed (``earned / |points|``: 0..1 for
  a positive item, -1..0 for a penalty), so items of different weights compare;
- GSB pairs: good = 1, same = 0, bad = -1. A pair whose two orders disagree counts as a tie (0)
  in the judge's labels, the MT-Bench convention: an order-dependent judge loses agreement for
  it, besides its inconsistency rate;
- milestones (level ``binary``): achieved = 1, not = 0. Agreement is Cohen's kappa, and the
  accuracy (share of verdicts equal to the reference) is reported beside it.

Agreement is like for like (leave one out): each rater is compared with the mean of the *other*
raters (GSB: their rounded mean, a tie being "same"), and each single judgment of the judge
(one repeat) with the same leave-one-out means, averaged over the held-out raters and the
repeats. The human figure is what one rater's labels achieve, the judge's what one judge run
achieves, against references of the same noise; comparing the judge with the mean of all raters
(and of its repeats) while raters face one other rater would flatter the judge. Agent- and
trial-level correlations are computed the same way on per-agent / per-trial means.

A figure that cannot be computed (too few cases, a constant input) is ``None``, never 0; where
the reason is not obvious the figure carries it (``note``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

Level = Literal["interval", "ordinal", "binary"]
GSB_VALUES = (-1, 0, 1)
MIN_CASES = 3


class Figure(BaseModel):
    """One statistic with its bootstrap 95% interval over cases (``None``: not computable)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = Field(default=0, description="cases it is computed on")
    note: str | None = Field(default=None, description="why it is n/a, when not obvious")

    def text(self, digits: int = 3) -> str:
        if self.value is None:
            return f"n/a ({self.note})" if self.note else "n/a"
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


def _defined(x: FloatArray, y: FloatArray) -> bool:
    return len(x) >= MIN_CASES and bool(np.ptp(x) > 0) and bool(np.ptp(y) > 0)


def pearson(x: FloatArray, y: FloatArray) -> float:
    """Pearson r; NaN with fewer than 3 points or a constant input."""
    if not _defined(x, y):
        return math.nan
    xc, yc = x - x.mean(), y - y.mean()
    r = float(np.dot(xc, yc) / math.sqrt(float(np.dot(xc, xc)) * float(np.dot(yc, yc))))
    return min(max(r, -1.0), 1.0)


def ranks(x: FloatArray) -> FloatArray:
    """1-based ranks, ties given their average rank (``scipy.stats.rankdata``'s default)."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts_group = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts_group) - 1
    starts = np.flatnonzero(starts_group)
    ends = np.r_[starts[1:], len(x)]
    out = np.empty(len(x))
    out[order] = ((starts + 1 + ends) / 2.0)[group]
    return out


def spearman(x: FloatArray, y: FloatArray) -> float:
    """Spearman rho: Pearson r of the average ranks."""
    if not _defined(x, y):
        return math.nan
    return pearson(ranks(x), ranks(y))


KENDALL_DIRECT = 300
"""Up to this many points tau-b is computed from all pairs here; beyond, by scipy."""


def kendall(x: FloatArray, y: FloatArray) -> float:
    """Kendall tau-b (ties corrected, as ``scipy.stats.kendalltau``)."""
    if not _defined(x, y):
        return math.nan
    if len(x) > KENDALL_DIRECT:
        from scipy import stats  # imported when used: half a second off every CLI start

        return float(stats.kendalltau(x, y).statistic)
    i, j = np.triu_indices(len(x), 1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    return float(np.sum(sx * sy) / math.sqrt(float(np.sum(sx * sx)) * float(np.sum(sy * sy))))


def length_slope(judge: FloatArray, humans: FloatArray, length: FloatArray) -> float:
    """The coefficient of ``length`` in the least-squares fit ``judge ~ 1 + humans + length``:
    how much the judge's value moves per unit of length beyond what the humans' labels explain
    (NaN with fewer than 4 usable cases or collinear inputs)."""
    ok = np.isfinite(judge) & np.isfinite(humans) & np.isfinite(length)
    if ok.sum() < MIN_CASES + 1 or np.ptp(length[ok]) == 0:
        return math.nan
    design = np.column_stack([np.ones(int(ok.sum())), humans[ok], length[ok]])
    coef, _, rank, _ = np.linalg.lstsq(design, judge[ok], rcond=None)
    return float(coef[2]) if rank == design.shape[1] else math.nan


def toward_longer(judge: FloatArray, humans: FloatArray, length: FloatArray) -> float:
    """Mean of ``(judge - humans) * sign(length)`` over the pairs of unequal length: how many
    verdict steps the judge moves toward the longer report beyond the humans (NaN with fewer
    than 3 usable pairs). ``length`` is the candidate's log length ratio over the baseline."""
    ok = np.isfinite(judge) & np.isfinite(humans) & np.isfinite(length) & (length != 0)
    if ok.sum() < MIN_CASES:
        return math.nan
    return float(np.mean((judge[ok] - humans[ok]) * np.sign(length[ok])))


def first_position_rate(first: FloatArray, second: FloatArray) -> float:
    """Share of decisive verdicts won by the report shown first (NaN: none decisive)."""
    total = float(np.sum(first) + np.sum(second))
    return float(np.sum(first)) / total if total else math.nan


_WEIGHTS = np.subtract.outer(np.arange(3), np.arange(3)).astype(float) ** 2


def quadratic_kappa(a: FloatArray, b: FloatArray) -> float:
    """Quadratic-weighted Cohen kappa on GSB values (-1, 0, 1), as
    ``sklearn.metrics.cohen_kappa_score(weights="quadratic", labels=[-1, 0, 1])`` (numpy here:
    the bootstrap calls it hundreds of thousands of times); NaN when undefined (one category
    only, on both sides)."""
    if len(a) < MIN_CASES:
        return math.nan
    ia, ib = a.astype(np.int64) + 1, b.astype(np.int64) + 1
    observed = np.bincount(ia * 3 + ib, minlength=9).reshape(3, 3).astype(float)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(a)
    disagreement = float(np.sum(_WEIGHTS * expected))
    if disagreement == 0:
        return math.nan
    return 1.0 - float(np.sum(_WEIGHTS * observed)) / disagreement


def cohen_kappa(a: FloatArray, b: FloatArray) -> float:
    """Cohen's kappa of two binary (0 / 1) labellings, as
    ``sklearn.metrics.cohen_kappa_score``; NaN when undefined (fewer than 3 cases, or both
    sides giving one and the same label throughout)."""
    if len(a) < MIN_CASES:
        return math.nan
    observed = float(np.mean(a == b))
    pa, pb = float(np.mean(a)), float(np.mean(b))
    expected = pa * pb + (1 - pa) * (1 - pb)
    if expected == 1:
        return math.nan
    return (observed - expected) / (1 - expected)


def accuracy(a: FloatArray, b: FloatArray) -> float:
    """Share of cases where the two labellings agree (NaN with no case)."""
    return float(np.mean(a == b)) if len(a) else math.nan


def _ordinal_delta(counts: FloatArray) -> FloatArray:
    """Krippendorff's squared ordinal distance between the values of a domain, from the
    values' marginal counts: (sum of the counts from c to k - (n_c + n_k) / 2) ** 2."""
    size = len(counts)
    cumulative = np.concatenate([[0.0], np.cumsum(counts)])
    delta = np.zeros((size, size))
    for c in range(size):
        for k in range(c + 1, size):
            between = cumulative[k + 1] - cumulative[c] - (counts[c] + counts[k]) / 2
            delta[c, k] = delta[k, c] = between**2
    return delta


def alpha(matrix: FloatArray, level: Level) -> float:
    """Krippendorff alpha of a raters x cases matrix (NaN: missing) at ``level`` ("interval",
    or "ordinal" on the GSB values), as ``krippendorff.alpha`` computes it (from the
    coincidences, in closed form here); NaN when undefined (no pairable values, or no
    variation at all)."""
    data = matrix[:, np.sum(np.isfinite(matrix), axis=0) >= 2]
    if data.shape[1] < 2:
        return math.nan
    ok = np.isfinite(data)
    values = data[ok]
    if np.ptp(values) == 0:
        return math.nan
    pairable = ok.sum(axis=0).astype(float)
    n = float(pairable.sum())
    if level != "ordinal":
        # on two values (binary) the interval distance is the nominal one
        # ordered pairs within a unit: sum (v_i - v_j)^2 = 2 m SS_u; across all values: 2 n SS
        filled = np.where(ok, data, 0.0)
        centred = np.where(ok, data - filled.sum(axis=0) / pairable, 0.0)
        observed = float(np.sum(2 * pairable * np.sum(centred**2, axis=0) / (pairable - 1)))
        expected = 2 * n * float(np.sum((values - values.mean()) ** 2))
    else:
        counts = np.stack([np.sum(data == v, axis=0) for v in GSB_VALUES], axis=1).astype(float)
        weight = 1 / (pairable - 1)
        coincidences = np.einsum("u,ui,uj->ij", weight, counts, counts) - np.diag(weight @ counts)
        marginals = counts.sum(axis=0)
        delta = _ordinal_delta(marginals)
        observed = float(np.sum(coincidences * delta))
        expected = float(np.sum(np.outer(marginals, marginals) * delta))
    if expected == 0:
        return math.nan
    return 1 - (n - 1) * observed / expected


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

    from scipy import stats  # imported when used: half a second off every CLI start

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


class GroupStats(BaseModel):
    """Agreement on the cases of one item type or one task (same definitions as the kind's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    by: Literal["item_type", "task"]
    name: str
    cases: int
    agreement: Paired


PositionDirection = Literal["first", "second", "none"]


class KindStats(BaseModel):
    """Every figure of one judge on one kind of case (rubric items, GSB pairs, milestones)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    cases: int = Field(description="labelled cases")
    judged: int = Field(description="cases the judge scored in at least one repeat")
    repeats: int
    raters: int = Field(default=0, description="raters with a label of this kind")
    agreement_name: str = Field(
        description="pearson_r (rubric), kappa (GSB, quadratic) or cohen_kappa (milestones)"
    )
    agreement: Paired = Field(
        description="leave one out: judge, each repeat vs the mean of all raters but one "
        "(averaged over the raters left out and the repeats); humans, each rater vs the mean "
        "of the others (averaged over the raters)"
    )
    alpha: Paired = Field(description="Krippendorff alpha: judge added as a rater / humans only")
    accuracy: Paired | None = Field(
        default=None,
        description="binary (milestones): share of verdicts equal to the reference, leave one "
        "out as agreement",
    )
    model_pearson: Paired = Field(description="per-agent means, leave one out as agreement")
    model_spearman: Paired
    model_kendall: Paired
    trial_pearson: Paired | None = Field(
        default=None, description="per-trial means, leave one out as agreement"
    )
    trial_spearman: Paired | None = None
    trial_kendall: Paired | None = None
    groups: list[GroupStats] = Field(
        default_factory=list, description="agreement per item type and per task"
    )
    inconsistency: Figure | None = Field(
        default=None, description="GSB: share of judgments whose two orders disagree"
    )
    position_bias: Figure | None = Field(
        default=None,
        description="GSB: share of decisive single-order verdicts won by the report shown "
        "first (0.5: no position bias)",
    )
    length_measure: str | None = Field(default=None, description="what the length is")
    length_corr: Paired | None = Field(
        default=None, description="Pearson r of the judge's / the humans' values with length"
    )
    length_bias: Figure | None = Field(
        default=None,
        description="rubric items: the coefficient of length in judge ~ humans + length, the "
        "judge's share of points per doubling of the output's length beyond what the humans' "
        "labels explain; GSB: the judge's verdict steps toward the longer report beyond the "
        "humans' (mean of (judge - humans) x sign of the length difference). 0: no length bias",
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

    @property
    def position_direction(self) -> PositionDirection | None:
        """Which shown position the judge favours: ``first`` / ``second`` when the interval
        of the first-position win rate excludes 0.5, ``none`` when it does not (None: not
        computable)."""
        figure = self.position_bias
        if figure is None or figure.value is None:
            return None
        if figure.low is not None and figure.low > 0.5:
            return "first"
        if figure.high is not None and figure.high < 0.5:
            return "second"
        return "none"


@dataclass(frozen=True)
class KindData:
    """The matrices one kind's figures are computed from (cases in one fixed order).

    ``humans``: raters x cases, NaN where a rater left a case unlabelled. ``judge``: repeats x
    cases, NaN where the judge left the case unscored. ``inconsistent``: repeats x cases, 1
    where the pair's two orders disagreed (GSB), NaN where unscored. ``orders``: repeats x
    cases x 2, the candidate's verdict (1 / 0 / -1) shown first and shown second (GSB).
    ``lengths``: per case, the length the length bias is measured against (log2 of words),
    described by ``length_measure``. ``trials``, ``item_types``, ``tasks``: per case."""

    kind: str
    level: Level  # "interval" (rubric), "ordinal" (GSB) or "binary" (milestones)
    agents: list[str]
    humans: FloatArray
    judge: FloatArray
    inconsistent: FloatArray | None = None
    trials: list[str] | None = None
    item_types: list[str] | None = None
    tasks: list[str] | None = None
    orders: FloatArray | None = None
    lengths: FloatArray | None = None
    length_measure: str | None = None


def _mean(values: FloatArray, ordinal: bool) -> FloatArray:
    """Column means (NaN left out); ``ordinal`` (GSB, milestones): rounded, the majority (a
    good/bad tie is 'same', a yes/no tie 'no')."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=0)
    return np.rint(mean) if ordinal else mean


def leave_one_out(humans: FloatArray, ordinal: bool) -> list[tuple[int, FloatArray]]:
    """(rater, the mean of the other raters per case) for each rater, when there are two or
    more raters."""
    if humans.shape[0] < 2:
        return []
    return [(i, _mean(np.delete(humans, i, axis=0), ordinal)) for i in range(humans.shape[0])]


Measure = Callable[[FloatArray, FloatArray], float]
AGREEMENT: dict[str, Measure] = {
    "interval": pearson,
    "ordinal": quadratic_kappa,
    "binary": cohen_kappa,
}


def _agree(x: FloatArray, y: FloatArray, measure: Measure) -> float:
    ok = np.isfinite(x) & np.isfinite(y)
    return measure(x[ok], y[ok])


def _group_means(values: FloatArray, codes: IntArray, groups: int) -> FloatArray:
    """Mean of ``values`` per group code (NaN values left out; NaN for an empty group)."""
    ok = np.isfinite(values)
    sums = np.bincount(codes[ok], weights=values[ok], minlength=groups)
    counts = np.bincount(codes[ok], minlength=groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


AGREEMENT_NAMES: dict[str, str] = {
    "interval": "pearson_r",
    "ordinal": "kappa",
    "binary": "cohen_kappa",
}
Correlation = Callable[[FloatArray, FloatArray], float]
LEVEL_CORRELATIONS: dict[str, Correlation] = {
    "pearson": pearson,
    "spearman": spearman,
    "kendall": kendall,
}


def _level_corrs(a: FloatArray, b: FloatArray, codes: IntArray, groups: int) -> dict[str, float]:
    """Correlations of two per-group (agent or trial) means, over the cases both sides scored
    and the groups both have."""
    ok = np.isfinite(a) & np.isfinite(b)
    ma = _group_means(np.where(ok, a, np.nan), codes, groups)
    mb = _group_means(np.where(ok, b, np.nan), codes, groups)
    both = np.isfinite(ma) & np.isfinite(mb)
    if both.sum() < MIN_CASES:
        return dict.fromkeys(LEVEL_CORRELATIONS, math.nan)
    return {name: corr(ma[both], mb[both]) for name, corr in LEVEL_CORRELATIONS.items()}


def _codes(labels: Sequence[str]) -> tuple[IntArray, list[str]]:
    names = sorted(set(labels))
    index = {name: i for i, name in enumerate(names)}
    return np.array([index[x] for x in labels], dtype=np.int64), names


class _LeaveOneOut:
    """The judge's and the humans' leave-one-out figures of one kind (see the module doc)."""

    def __init__(
        self, humans: FloatArray, judge: FloatArray, ordinal: bool, measure: Measure
    ) -> None:
        self.humans, self.judge, self.measure = humans, judge, measure
        self.refs = leave_one_out(humans, ordinal)
        self._last: tuple[bytes, tuple[float, float]] | None = None
        self.judge_refs = [ref for _, ref in self.refs]
        if not self.refs and len(humans):
            # one rater: the judge can still be compared with that rater; the humans cannot
            self.judge_refs = [humans[0]]

    def agreement(self, idx: IntArray) -> tuple[float, float]:
        """(judge, humans) on the cases ``idx`` (cached for the last ``idx``)."""
        key = idx.tobytes()
        if self._last is None or self._last[0] != key:
            self._last = key, self._agreement(idx)
        return self._last[1]

    def _agreement(self, idx: IntArray) -> tuple[float, float]:
        judge = _mean_finite(
            [
                _agree(self.judge[k, idx], ref[idx], self.measure)
                for k in range(self.judge.shape[0])
                for ref in self.judge_refs
            ]
        )
        humans = _mean_finite(
            [_agree(self.humans[i, idx], ref[idx], self.measure) for i, ref in self.refs]
        )
        return judge, humans

    def level(self, codes: IntArray, groups: int) -> Callable[[IntArray], dict[str, float]]:
        """Per-group correlations on one resample, judge_* and humans_* (cached for the
        resample: the three correlations are computed together)."""
        cache: dict[bytes, dict[str, float]] = {}

        def compute(idx: IntArray) -> dict[str, float]:
            key = idx.tobytes()
            if key not in cache:
                cache.clear()
                c = codes[idx]
                judged = [
                    _level_corrs(self.judge[k, idx], ref[idx], c, groups)
                    for k in range(self.judge.shape[0])
                    for ref in self.judge_refs
                ]
                between = [
                    _level_corrs(self.humans[i, idx], ref[idx], c, groups) for i, ref in self.refs
                ]
                cache[key] = {
                    f"judge_{k}": _mean_finite([m[k] for m in judged]) for k in LEVEL_CORRELATIONS
                } | {
                    f"humans_{k}": _mean_finite([m[k] for m in between]) for k in LEVEL_CORRELATIONS
                }
            return cache[key]

        return compute


def _side(loo: _LeaveOneOut, cols: IntArray, side: int) -> Callable[[IntArray], float]:
    return lambda idx: loo.agreement(cols[idx])[side]


def _group_stats(
    by: Literal["item_type", "task"],
    labels: Sequence[str],
    loo: _LeaveOneOut,
    settings: BootstrapSettings,
) -> list[GroupStats]:
    """Agreement on each group's cases (the leave-one-out means are per case, so a group's
    figure uses the same references as the whole kind's)."""
    out = []
    for name in sorted(set(labels)):
        cols = np.array([j for j, x in enumerate(labels) if x == name], dtype=np.int64)
        figures = bootstrap_many(
            {"judge": _side(loo, cols, 0), "humans": _side(loo, cols, 1)}, len(cols), settings
        )
        cases = int(np.sum(np.isfinite(loo.humans[:, cols]).any(axis=0)))
        out.append(
            GroupStats(
                by=by,
                name=name,
                cases=cases,
                agreement=Paired(judge=figures["judge"], humans=figures["humans"]),
            )
        )
    return out


def _noted(figure: Figure, note: str | None) -> Figure:
    return figure.model_copy(update={"note": note}) if figure.value is None and note else figure


def kind_stats(data: KindData, settings: BootstrapSettings) -> KindStats:
    """Every figure of ``data`` with its interval (one bootstrap over cases for all; one more
    per item type and per task)."""
    ordinal = data.level != "interval"  # majorities of GSB verdicts and of milestone verdicts
    humans, judge = data.humans, data.judge
    n = humans.shape[1]
    repeats = judge.shape[0]
    loo = _LeaveOneOut(humans, judge, ordinal, AGREEMENT[data.level])
    hits = _LeaveOneOut(humans, judge, ordinal, accuracy) if data.level == "binary" else None
    agent_codes, agent_names = _codes(data.agents)
    trial_codes, trial_names = _codes(data.trials if data.trials is not None else data.agents)
    human_v = _mean(humans, ordinal)
    judge_v = _mean(judge, ordinal)
    with_judge = np.vstack([humans, judge_v[None, :]])
    scored_all = np.isfinite(judge).all(axis=0)
    identical = np.where(scored_all, np.ptp(np.nan_to_num(judge), axis=0) < 1e-9, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        spread = np.nanstd(judge, axis=0)
    spread[np.sum(np.isfinite(judge), axis=0) < 2] = np.nan

    def nanmean(values: FloatArray) -> float:
        return float(np.nanmean(values)) if np.isfinite(values).any() else math.nan

    agent_level = loo.level(agent_codes, len(agent_names))
    trial_level = loo.level(trial_codes, len(trial_names))

    def stability(idx: IntArray) -> float:
        per_repeat = np.vstack(
            [
                _group_means(judge[k, idx], agent_codes[idx], len(agent_names))
                for k in range(repeats)
            ]
        )
        both = np.isfinite(per_repeat).all(axis=0)
        return float(np.mean(np.std(per_repeat[:, both], axis=0))) if both.any() else math.nan

    statistics: dict[str, Callable[[IntArray], float]] = {
        "agreement": lambda idx: loo.agreement(idx)[0],
        "inter_rater": lambda idx: loo.agreement(idx)[1],
        "alpha_judge": lambda idx: alpha(with_judge[:, idx], data.level),
        "alpha_humans": lambda idx: alpha(humans[:, idx], data.level),
    }
    if hits is not None:
        statistics["accuracy"] = lambda idx: hits.agreement(idx)[0]
        statistics["accuracy_humans"] = lambda idx: hits.agreement(idx)[1]

    def pick(
        level: Callable[[IntArray], dict[str, float]], name: str
    ) -> Callable[[IntArray], float]:
        return lambda idx: level(idx)[name]

    for k in LEVEL_CORRELATIONS:
        for side in ("judge", "humans"):
            statistics[f"model_{side}_{k}"] = pick(agent_level, f"{side}_{k}")
            if data.trials is not None:
                statistics[f"trial_{side}_{k}"] = pick(trial_level, f"{side}_{k}")
    if data.inconsistent is not None:
        inconsistent = data.inconsistent
        statistics["inconsistency"] = lambda idx: nanmean(inconsistent[:, idx])
    if data.orders is not None:
        shown = data.orders  # repeats x cases x (candidate first, candidate second)
        first_wins = np.sum(shown[..., 0] == 1, axis=0) + np.sum(shown[..., 1] == -1, axis=0)
        second_wins = np.sum(shown[..., 0] == -1, axis=0) + np.sum(shown[..., 1] == 1, axis=0)
        statistics["position_bias"] = lambda idx: first_position_rate(
            first_wins[idx], second_wins[idx]
        )
    if data.lengths is not None:
        length = data.lengths
        judge_raw, human_raw = _mean(judge, False), _mean(humans, False)
        statistics["length_judge"] = lambda idx: _agree(judge_raw[idx], length[idx], pearson)
        statistics["length_humans"] = lambda idx: _agree(human_raw[idx], length[idx], pearson)
        bias = toward_longer if ordinal else length_slope
        statistics["length_bias"] = lambda idx: bias(judge_raw[idx], human_raw[idx], length[idx])
    if repeats >= 2:
        statistics["self_consistency"] = lambda idx: nanmean(identical[idx])
        statistics["repeat_std"] = lambda idx: nanmean(spread[idx])
        statistics["stability_std"] = stability
    figures = bootstrap_many(statistics, n, settings)
    groups = []
    if data.item_types is not None:
        groups += _group_stats("item_type", data.item_types, loo, settings)
    if data.tasks is not None:
        groups += _group_stats("task", data.tasks, loo, settings)

    raters = int(np.sum(np.isfinite(humans).any(axis=1)))
    human_note = f"needs >= 2 raters, {raters} here" if raters < 2 else None

    def paired(prefix: str, name: str, groups_named: str, count: int) -> Paired:
        note = f"needs >= {MIN_CASES} {groups_named}, {count} here" if count < MIN_CASES else None
        return Paired(
            judge=_noted(figures[f"{prefix}_judge_{name}"], note),
            humans=_noted(figures[f"{prefix}_humans_{name}"], note or human_note),
        )

    labelled = [bool(np.isfinite(humans[:, j]).any()) for j in range(n)]
    agents_with_data = len({a for a, ok in zip(data.agents, labelled, strict=True) if ok})
    trials_with_data = (
        len({t for t, ok in zip(data.trials, labelled, strict=True) if ok})
        if data.trials is not None
        else 0
    )
    per_repeat = np.vstack(
        [_group_means(judge[k], agent_codes, len(agent_names)) for k in range(repeats)]
    )
    agent_scores: dict[str, tuple[float, float]] = {}
    for j, agent in enumerate(agent_names):
        column = per_repeat[:, j][np.isfinite(per_repeat[:, j])]
        if len(column):
            agent_scores[agent] = (float(np.mean(column)), float(np.std(column)))
    human_means = _group_means(human_v, agent_codes, len(agent_names))
    ok = np.isfinite(judge_v) & np.isfinite(human_v)
    trial_figures: dict[str, Paired] = {}
    if data.trials is not None:
        trial_figures = {
            f"trial_{k}": paired("trial", k, "trials", trials_with_data) for k in LEVEL_CORRELATIONS
        }
    return KindStats(
        kind=data.kind,
        cases=int(np.sum(np.isfinite(humans).any(axis=0))),
        judged=int(np.sum(np.isfinite(judge_v))),
        repeats=repeats,
        raters=raters,
        agreement_name=AGREEMENT_NAMES[data.level],
        agreement=Paired(
            judge=figures["agreement"], humans=_noted(figures["inter_rater"], human_note)
        ),
        alpha=Paired(
            judge=figures["alpha_judge"], humans=_noted(figures["alpha_humans"], human_note)
        ),
        accuracy=(
            Paired(judge=figures["accuracy"], humans=_noted(figures["accuracy_humans"], human_note))
            if hits is not None
            else None
        ),
        model_pearson=paired("model", "pearson", "agents", agents_with_data),
        model_spearman=paired("model", "spearman", "agents", agents_with_data),
        model_kendall=paired("model", "kendall", "agents", agents_with_data),
        **trial_figures,
        groups=groups,
        inconsistency=figures.get("inconsistency"),
        position_bias=figures.get("position_bias"),
        length_measure=data.length_measure if data.lengths is not None else None,
        length_corr=(
            Paired(judge=figures["length_judge"], humans=figures["length_humans"])
            if data.lengths is not None
            else None
        ),
        length_bias=figures.get("length_bias"),
        self_consistency=figures.get("self_consistency"),
        repeat_std=figures.get("repeat_std"),
        stability_std=figures.get("stability_std"),
        agents=agent_scores,
        human_agents={
            a: float(m) for a, m in zip(agent_names, human_means, strict=True) if math.isfinite(m)
        },
        points=[(float(h), float(j)) for h, j in zip(human_v[ok], judge_v[ok], strict=True)],
    )

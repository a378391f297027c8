"""The few statistics the leaderboard needs, as pure functions that the tests pin exactly.

- ``pass_at_k``: the unbiased estimator of Chen et al. (2021), 1 - C(n-c, k) / C(n, k): the
  chance that k epochs drawn without replacement from the n run include one of the c successes.
  Averaging the plain "any success in the first k epochs" would depend on epoch order.
- ``bootstrap_mean_ci``: a percentile bootstrap of a mean, resampling *tasks* (the unit the
  leaderboard averages over), with a fixed seed so a report is reproducible byte for byte.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for a task with ``n`` graded epochs of which ``c`` succeeded (k <= n)."""
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got n={n}, k={k}")
    # math.comb(n - c, k) is 0 when k > n - c: every draw of k then contains a success.
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean, or None for no values (an empty average is not 0)."""
    return math.fsum(values) / len(values) if values else None


def bootstrap_mean_ci(
    values: Sequence[float], *, resamples: int, seed: int, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean of ``values``; None with fewer than two values.

    A fresh generator is seeded for every call, so a row's interval depends only on its own
    values (in the order given) and the seed, not on which other rows the leaderboard has.
    """
    if len(values) < 2:
        return None
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(data), size=(resamples, len(data)))
    means = data[picks].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)

"""Tolerances for comparing observed counts, shares and means with what the spec implies.

Every bound is ``expected +/- (SIGMAS * standard error + slack)``: 5 sigma makes a false alarm on a
correct dataset practically impossible (p < 6e-7 per check), the small absolute slack absorbs
rounding and tiny samples, and real mistakes (a swapped weight, a doubled rate) still land far
outside the band once a table has a few thousand rows.
"""

from __future__ import annotations

import math

SIGMAS = 5.0
COUNT_SLACK = 3.0  # anomalies, on top of 5 sigma of a binomial count
SHARE_SLACK = 0.005  # absolute, on shares (categorical weights, p_true, null rates)
MEAN_SLACK_SD = 0.02  # in units of the generator's standard deviation


def binomial_count_bounds(n_lo: float, n_hi: float, p: float) -> tuple[float, float]:
    """Bounds on a Binomial(n, p) count where the trial count n is known to lie in [n_lo, n_hi]."""
    lo = n_lo * p - SIGMAS * math.sqrt(n_lo * p * (1 - p)) - COUNT_SLACK
    hi = n_hi * p + SIGMAS * math.sqrt(n_hi * p * (1 - p)) + COUNT_SLACK
    return max(0.0, lo), hi


def share_bounds(n: float, p: float) -> tuple[float, float]:
    """Bounds on the observed share of a Bernoulli(p) outcome over n trials."""
    half = SIGMAS * math.sqrt(p * (1 - p) / n) + SHARE_SLACK
    return max(0.0, p - half), min(1.0, p + half)


def mean_bounds(n: float, mean: float, sd: float, extra: float = 0.0) -> tuple[float, float]:
    """Bounds on a sample mean of n draws with the given mean and standard deviation."""
    half = SIGMAS * sd / math.sqrt(n) + MEAN_SLACK_SD * sd + extra
    return mean - half, mean + half

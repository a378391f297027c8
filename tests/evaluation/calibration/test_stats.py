"""The calibration statistics against values computed independently of the module."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from benchforge.evaluation.calibration.stats import (
    BootstrapSettings,
    KindData,
    bootstrap,
    kind_stats,
)

BOOT = BootstrapSettings(resamples=200, seed=3)
FAST = BootstrapSettings(resamples=50, seed=3)  # where no interval is checked


def _rubric(truth: np.ndarray, judge: np.ndarray, agents: list[str], raters: int = 2) -> KindData:
    return KindData(
        kind="rubric_item",
        level="interval",
        agents=agents,
        humans=np.vstack([truth] * raters),
        judge=judge,
    )


def test_judge_with_gaussian_noise_has_the_attenuated_pearson_r() -> None:
    """judge = label + N(0, sigma): r = sd(label) / sqrt(sd(label)^2 + sigma^2)."""
    rng = np.random.default_rng(11)
    n, sigma = 400, 0.15
    truth = rng.uniform(0, 1, n)
    judge = truth + rng.normal(0, sigma, n)
    agents = [f"a{i % 6}" for i in range(n)]
    result = kind_stats(_rubric(truth, judge[None, :], agents), BOOT)
    expected = np.std(truth) / math.sqrt(np.var(truth) + sigma**2)
    figure = result.agreement.judge
    assert figure.contains(expected), (figure, expected)
    assert figure.value == pytest.approx(sps.pearsonr(judge, truth).statistic)
    assert figure.low is not None and figure.high is not None
    assert 0 < figure.high - figure.low < 0.06  # 400 cases: a tight interval
    # humans identical to each other: inter-rater r and alpha are 1, alpha with the judge less
    assert result.agreement.humans.value == pytest.approx(1.0)
    assert result.alpha.humans.value == pytest.approx(1.0)
    assert result.alpha.judge.value is not None and result.alpha.judge.value < 1.0


def test_a_perfect_judge_scores_one_everywhere() -> None:
    rng = np.random.default_rng(5)
    truth = np.round(rng.uniform(0, 1, 80) * 4) / 4
    agents = [f"agent{i % 4}" for i in range(80)]
    result = kind_stats(_rubric(truth, np.vstack([truth, truth]), agents), FAST)
    assert result.agreement.judge.value == pytest.approx(1.0)
    assert result.model_pearson.judge.value == pytest.approx(1.0)
    assert result.model_spearman.judge.value == pytest.approx(1.0)
    assert result.model_kendall.judge.value == pytest.approx(1.0)
    assert result.self_consistency is not None and result.self_consistency.value == 1.0
    assert result.repeat_std is not None and result.repeat_std.value == 0.0
    assert result.stability_std is not None and result.stability_std.value == 0.0

    verdicts = rng.integers(-1, 2, 90).astype(float)
    gsb = KindData(
        kind="gsb_pair",
        level="ordinal",
        agents=[f"agent{i % 3}" for i in range(90)],
        humans=np.vstack([verdicts] * 3),
        judge=verdicts[None, :],
        inconsistent=np.zeros((1, 90)),
    )
    result = kind_stats(gsb, FAST)
    assert result.agreement.judge.value == pytest.approx(1.0)
    assert result.agreement.humans.value == pytest.approx(1.0)
    assert result.inconsistency is not None and result.inconsistency.value == 0.0


def test_kappa_is_against_the_human_majority_and_alpha_adds_the_judge_as_a_rater() -> None:
    rng = np.random.default_rng(8)
    n = 150
    truth = rng.integers(-1, 2, n)
    humans = np.vstack(
        [np.where(rng.random(n) < 0.8, truth, rng.integers(-1, 2, n)) for _ in range(3)]
    ).astype(float)
    humans[0, :10] = np.nan  # a rater who skipped some cases
    judge = np.where(rng.random(n) < 0.7, truth, rng.integers(-1, 2, n)).astype(float)
    data = KindData(
        kind="gsb_pair",
        level="ordinal",
        agents=[f"a{i % 5}" for i in range(n)],
        humans=humans,
        judge=judge[None, :],
        inconsistent=np.zeros((1, n)),
    )
    result = kind_stats(data, FAST)
    majority = np.rint(np.nanmean(humans, axis=0)).astype(int)
    expected = cohen_kappa_score(judge.astype(int), majority, weights="quadratic")
    assert result.agreement.judge.value == pytest.approx(expected)
    pairwise = []
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        ok = ~np.isnan(humans[a]) & ~np.isnan(humans[b])
        pairwise.append(
            cohen_kappa_score(
                humans[a, ok].astype(int), humans[b, ok].astype(int), weights="quadratic"
            )
        )
    assert result.agreement.humans.value == pytest.approx(np.mean(pairwise))
    assert result.alpha.humans.value == pytest.approx(
        krippendorff.alpha(humans, level_of_measurement="ordinal", value_domain=[-1, 0, 1])
    )
    with_judge = np.vstack([humans, judge])
    assert result.alpha.judge.value == pytest.approx(
        krippendorff.alpha(with_judge, level_of_measurement="ordinal", value_domain=[-1, 0, 1])
    )


def test_inconsistency_rate_estimates_the_position_bias() -> None:
    rng = np.random.default_rng(2)
    n, bias = 400, 0.3
    flips = (rng.random((2, n)) < bias).astype(float)
    data = KindData(
        kind="gsb_pair",
        level="ordinal",
        agents=[f"a{i % 4}" for i in range(n)],
        humans=np.zeros((2, n)),
        judge=np.zeros((2, n)),
        inconsistent=flips,
    )
    result = kind_stats(data, BOOT)
    assert result.inconsistency is not None
    assert result.inconsistency.value == pytest.approx(flips.mean())
    assert result.inconsistency.contains(bias)


def test_repeats_give_self_consistency_spread_and_per_agent_stability() -> None:
    rng = np.random.default_rng(4)
    n, sigma = 500, 0.1
    truth = rng.uniform(0.2, 0.8, n)
    judge = truth + rng.normal(0, sigma, (2, n))
    agents = [f"a{i % 5}" for i in range(n)]
    result = kind_stats(_rubric(truth, judge, agents), BOOT)
    assert result.self_consistency is not None and result.self_consistency.value == 0.0
    # the population std of two draws is |a - b| / 2, whose mean is sigma / sqrt(pi)
    assert result.repeat_std is not None and result.repeat_std.contains(sigma / math.sqrt(math.pi))
    per_agent = [
        np.std([judge[k, [i for i in range(n) if agents[i] == a]].mean() for k in range(2)])
        for a in sorted(set(agents))
    ]
    assert result.stability_std is not None
    assert result.stability_std.value == pytest.approx(np.mean(per_agent))
    for agent, (mean, std) in result.agents.items():
        mine = [i for i in range(n) if agents[i] == agent]
        assert mean == pytest.approx(judge[:, mine].mean())
        assert std == pytest.approx(np.std([judge[k, mine].mean() for k in range(2)]))


def test_model_level_correlations_rank_the_agents() -> None:
    """Per-agent means of a judge that keeps the agents' order but not their gaps: Spearman and
    Kendall 1, Pearson below 1, equal to scipy's on the per-agent means."""
    quality = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.9}
    agents = [a for a in quality for _ in range(30)]
    truth = np.array([quality[a] for a in agents])
    judge = truth**4  # monotone, not linear
    result = kind_stats(_rubric(truth, judge[None, :], agents), FAST)
    assert result.model_spearman.judge.value == pytest.approx(1.0)
    assert result.model_kendall.judge.value == pytest.approx(1.0)
    means = [q**4 for q in quality.values()]
    expected = sps.pearsonr(means, list(quality.values())).statistic
    assert result.model_pearson.judge.value == pytest.approx(expected)
    assert result.model_pearson.judge.value < 0.98


def test_unscored_cases_are_left_out_and_undefined_figures_are_none() -> None:
    truth = np.linspace(0, 1, 40)
    judge = truth.copy()
    judge[:5] = np.nan  # unscored
    result = kind_stats(_rubric(truth, judge[None, :], ["a", "b"] * 20), FAST)
    assert result.judged == 35 and result.cases == 40
    assert result.agreement.judge.n == 40
    assert result.agreement.judge.value == pytest.approx(1.0)
    # two agents: no model-level correlation
    assert result.model_pearson.judge.value is None
    assert result.self_consistency is None  # one repeat
    constant = kind_stats(_rubric(truth, np.full((1, 40), 0.5), ["a"] * 40), FAST)
    assert constant.agreement.judge.value is None
    assert constant.agreement.judge.text() == "n/a"


def test_bootstrap_is_seeded_and_resamples_cases() -> None:
    values = np.random.default_rng(1).normal(size=50)

    def mean(idx: np.ndarray) -> float:
        return float(values[idx].mean())

    a, b = bootstrap(mean, 50, BOOT), bootstrap(mean, 50, BOOT)
    assert a == b
    assert a.value == pytest.approx(values.mean())
    sem = values.std(ddof=1) / math.sqrt(50)
    assert a.low is not None and a.high is not None
    assert a.high - a.low == pytest.approx(2 * 1.96 * sem, rel=0.3)

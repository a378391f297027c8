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
    alpha,
    bootstrap,
    kendall,
    kind_stats,
    pearson,
    quadratic_kappa,
    spearman,
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


def _loo(humans: np.ndarray, rounded: bool) -> list[np.ndarray]:
    """Each rater's reference: the mean of the other raters (GSB: rounded), by hand."""
    out = []
    for i in range(len(humans)):
        others = np.delete(humans, i, axis=0)
        with np.errstate(all="ignore"):
            mean = np.nansum(others, axis=0) / np.sum(~np.isnan(others), axis=0)
        out.append(np.rint(mean) if rounded else mean)
    return out


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    ok = ~np.isnan(a) & ~np.isnan(b)
    return float(
        cohen_kappa_score(
            a[ok].astype(int), b[ok].astype(int), labels=[-1, 0, 1], weights="quadratic"
        )
    )


def test_kappa_is_leave_one_out_and_alpha_adds_the_judge_as_a_rater() -> None:
    """Each rater against the other raters' majority, each judge repeat against the same
    majorities: one judgment and one rater face the same reference."""
    rng = np.random.default_rng(8)
    n = 150
    truth = rng.integers(-1, 2, n)
    humans = np.vstack(
        [np.where(rng.random(n) < 0.8, truth, rng.integers(-1, 2, n)) for _ in range(3)]
    ).astype(float)
    humans[0, :10] = np.nan  # a rater who skipped some cases
    judge = np.vstack(
        [np.where(rng.random(n) < 0.7, truth, rng.integers(-1, 2, n)) for _ in range(2)]
    ).astype(float)
    data = KindData(
        kind="gsb_pair",
        level="ordinal",
        agents=[f"a{i % 5}" for i in range(n)],
        humans=humans,
        judge=judge,
        inconsistent=np.zeros((2, n)),
    )
    result = kind_stats(data, FAST)
    refs = _loo(humans, rounded=True)
    expected_judge = np.mean([_kappa(judge[k], ref) for k in range(2) for ref in refs])
    expected_humans = np.mean([_kappa(humans[i], refs[i]) for i in range(3)])
    assert result.agreement.judge.value == pytest.approx(expected_judge)
    assert result.agreement.humans.value == pytest.approx(expected_humans)
    assert result.raters == 3
    assert result.alpha.humans.value == pytest.approx(
        krippendorff.alpha(humans, level_of_measurement="ordinal", value_domain=[-1, 0, 1])
    )
    majority = np.rint(np.nanmean(judge, axis=0))
    with_judge = np.vstack([humans, majority])
    assert result.alpha.judge.value == pytest.approx(
        krippendorff.alpha(with_judge, level_of_measurement="ordinal", value_domain=[-1, 0, 1])
    )


def test_a_judge_as_noisy_as_a_rater_scores_as_a_rater_and_three_times_as_noisy_far_below() -> None:
    """Leave one out is like for like: a judge drawn exactly as a rater is drawn gets the
    raters' figure (within noise), and the same judge against the mean of *all* raters (a
    less noisy reference than any rater faces) would have looked better."""
    rng = np.random.default_rng(22)
    n, sigma = 600, 0.15
    truth = rng.uniform(0, 1, n)
    humans = truth + rng.normal(0, sigma, (3, n))
    alike = truth + rng.normal(0, sigma, (1, n))
    noisy = truth + rng.normal(0, 3 * sigma, (1, n))
    agents = [f"a{i % 4}" for i in range(n)]
    twin = kind_stats(_data(humans, alike, agents), FAST)
    assert twin.agreement.judge.value is not None and twin.agreement.humans.value is not None
    assert twin.agreement.judge.value == pytest.approx(twin.agreement.humans.value, abs=0.03)
    refs = _loo(humans, rounded=False)
    expected = np.mean([sps.pearsonr(humans[i], refs[i]).statistic for i in range(3)])
    assert twin.agreement.humans.value == pytest.approx(expected)
    against_all = sps.pearsonr(alike[0], humans.mean(axis=0)).statistic
    assert against_all > twin.agreement.judge.value + 0.01
    three = kind_stats(_data(humans, noisy, agents), FAST)
    assert three.agreement.judge.value is not None
    assert three.agreement.judge.value < twin.agreement.humans.value - 0.3


def _data(humans: np.ndarray, judge: np.ndarray, agents: list[str], **extra: object) -> KindData:
    return KindData(
        kind="rubric_item", level="interval", agents=agents, humans=humans, judge=judge, **extra
    )  # type: ignore[arg-type]


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


def test_numpy_correlations_equal_the_libraries() -> None:
    rng = np.random.default_rng(17)
    for n in (5, 40, 400):
        x = np.round(rng.normal(size=n), 1)  # ties
        y = np.round(x + rng.normal(size=n), 1)
        assert pearson(x, y) == pytest.approx(sps.pearsonr(x, y).statistic)
        assert spearman(x, y) == pytest.approx(sps.spearmanr(x, y).statistic)
        assert kendall(x, y) == pytest.approx(sps.kendalltau(x, y).statistic)
        a = rng.integers(-1, 2, n).astype(float)
        b = np.where(rng.random(n) < 0.6, a, rng.integers(-1, 2, n)).astype(float)
        expected = cohen_kappa_score(a, b, labels=[-1, 0, 1], weights="quadratic")
        assert quadratic_kappa(a, b) == pytest.approx(expected)
    assert math.isnan(quadratic_kappa(np.zeros(5), np.zeros(5)))


def _gsb(orders: list[tuple[int, int]], repeat: int = 1) -> KindData:
    shown = np.array([orders] * repeat, dtype=float)
    n = len(orders)
    verdicts = np.where(shown[..., 0] == shown[..., 1], shown[..., 0], 0)
    return KindData(
        kind="gsb_pair",
        level="ordinal",
        agents=[f"a{i % 3}" for i in range(n)],
        humans=np.vstack([verdicts[0]] * 2),
        judge=verdicts,
        inconsistent=(shown[..., 0] != shown[..., 1]).astype(float),
        orders=shown,
    )


def test_position_bias_is_the_first_position_win_rate_with_its_direction() -> None:
    """(candidate shown first, candidate shown second): the report shown first wins when the
    candidate is good shown first or bad shown second."""
    # first wins: good-first in cases 0, 1, 2 and bad-second in 2, 3 -> 5; second wins: the
    # candidate good shown second in case 0 -> 1; ties do not count: 5 / 6
    small = kind_stats(_gsb([(1, 1), (1, 0), (1, -1), (0, -1)]), FAST)
    assert small.position_bias is not None and small.position_bias.value == pytest.approx(5 / 6)
    # an order-blind judge: every verdict the same in both orders -> exactly 0.5, no direction
    blind = kind_stats(_gsb([(1, 1), (-1, -1), (0, 0), (1, 1)] * 10), FAST)
    assert blind.position_bias is not None and blind.position_bias.value == 0.5
    assert blind.position_direction == "none"
    first = kind_stats(_gsb([(1, -1), (1, 1), (0, -1), (-1, -1)] * 10), FAST)
    assert first.position_bias is not None
    assert first.position_bias.value == pytest.approx(5 / 7)  # first 5 (1+1+1+0+... ) of 7
    assert first.position_direction == "first"
    second = kind_stats(_gsb([(-1, 1), (0, 1), (1, 1), (-1, -1)] * 10), FAST)
    assert second.position_bias is not None
    assert second.position_bias.value == pytest.approx(2 / 7)
    assert second.position_direction == "second"


def test_length_bias_is_the_judges_slope_on_length_beyond_the_humans() -> None:
    rng = np.random.default_rng(9)
    n = 200
    length = rng.uniform(4, 10, n)  # log2 words
    truth = np.clip(0.1 * length - 0.3 + rng.normal(0, 0.2, n), 0, 1)  # longer is better
    humans = np.vstack([truth, truth])
    agents = [f"a{i % 4}" for i in range(n)]
    fair = kind_stats(_data(humans, truth[None, :], agents, lengths=length), BOOT)
    assert fair.length_bias is not None and fair.length_bias.value == pytest.approx(0, abs=1e-9)
    padded = truth + 0.25 * length  # a quarter of the points more per doubling of length
    biased = kind_stats(_data(humans, padded[None, :], agents, lengths=length), BOOT)
    assert biased.length_bias is not None and biased.length_bias.value == pytest.approx(0.25)
    assert biased.length_bias.low is not None and biased.length_bias.low > 0.2
    assert biased.length_corr is not None and fair.length_corr is not None
    # the humans correlate with length too (longer reports are better here): the raw
    # correlation alone cannot tell a fair judge from a padding-loving one, the slope can
    assert fair.length_corr.humans.value == pytest.approx(sps.pearsonr(truth, length).statistic)
    assert fair.length_corr.judge.value == pytest.approx(fair.length_corr.humans.value)
    assert biased.length_corr.judge.value is not None
    assert biased.length_corr.judge.value > fair.length_corr.judge.value


def test_two_agents_say_why_agent_level_is_na_and_trial_level_is_computed() -> None:
    """The nightly's two non-empty agents: no correlation over two points (the note says so);
    the per-trial correlations, over the trials, are the leaderboard-level figure."""
    rng = np.random.default_rng(6)
    n = 120
    trials = [f"t{i // 6}" for i in range(n)]  # 20 trials of 6 items
    quality = {t: rng.uniform(0, 1) for t in set(trials)}
    truth = np.clip(np.array([quality[t] for t in trials]) + rng.normal(0, 0.2, n), 0, 1)
    humans = truth + rng.normal(0, 0.1, (2, n))
    judge = truth + rng.normal(0, 0.1, (1, n))
    agents = ["a" if i < 60 else "b" for i in range(n)]
    result = kind_stats(_data(humans, judge, agents, trials=trials), FAST)
    assert result.model_pearson.judge.value is None
    assert result.model_pearson.judge.text() == "n/a (needs >= 3 agents, 2 here)"
    assert result.trial_pearson is not None and result.trial_spearman is not None
    judge_means = [
        judge[0, [i for i in range(n) if trials[i] == t]].mean() for t in sorted(set(trials))
    ]
    ref = humans[1]  # rater 0's leave-one-out reference: the other rater
    ref_means = [ref[[i for i in range(n) if trials[i] == t]].mean() for t in sorted(set(trials))]
    other = humans[0]
    other_means = [
        other[[i for i in range(n) if trials[i] == t]].mean() for t in sorted(set(trials))
    ]
    expected = np.mean(
        [
            sps.pearsonr(judge_means, ref_means).statistic,
            sps.pearsonr(judge_means, other_means).statistic,
        ]
    )
    assert result.trial_pearson.judge.value == pytest.approx(expected)
    assert result.trial_pearson.humans.value == pytest.approx(
        sps.pearsonr(ref_means, other_means).statistic
    )


def test_agreement_per_item_type_and_task() -> None:
    rng = np.random.default_rng(12)
    n = 90
    truth = rng.uniform(0, 1, n)
    humans = truth + rng.normal(0, 0.1, (3, n))
    judge = truth + np.where(np.arange(n) < 30, 0.0, rng.normal(0, 0.4, n))[None, :]
    types = ["accuracy"] * 30 + ["insightfulness"] * 60
    tasks = ["t1", "t2"] * 45
    result = kind_stats(
        _data(humans, judge, [f"a{i % 3}" for i in range(n)], item_types=types, tasks=tasks),
        FAST,
    )
    groups = {(g.by, g.name): g for g in result.groups}
    assert set(groups) == {
        ("item_type", "accuracy"),
        ("item_type", "insightfulness"),
        ("task", "t1"),
        ("task", "t2"),
    }
    accuracy, insight = groups["item_type", "accuracy"], groups["item_type", "insightfulness"]
    assert (accuracy.cases, insight.cases) == (30, 60)
    refs = _loo(humans, rounded=False)
    cols = np.arange(30)
    expected = np.mean([sps.pearsonr(judge[0, cols], ref[cols]).statistic for ref in refs])
    assert accuracy.agreement.judge.value == pytest.approx(expected)
    assert insight.agreement.judge.value is not None and accuracy.agreement.judge.value is not None
    assert insight.agreement.judge.value < accuracy.agreement.judge.value - 0.2


def test_alpha_equals_the_krippendorff_package() -> None:
    rng = np.random.default_rng(4)
    truth = rng.uniform(0, 1, 60)
    interval = truth + rng.normal(0, 0.2, (3, 60))
    interval[0, :7] = np.nan
    interval[1, 50:] = np.nan
    assert alpha(interval, "interval") == pytest.approx(
        krippendorff.alpha(reliability_data=interval, level_of_measurement="interval")
    )
    verdicts = rng.integers(-1, 2, 60)
    ordinal = np.vstack(
        [np.where(rng.random(60) < 0.7, verdicts, rng.integers(-1, 2, 60)) for _ in range(4)]
    ).astype(float)
    ordinal[2, :9] = np.nan
    assert alpha(ordinal, "ordinal") == pytest.approx(
        krippendorff.alpha(
            reliability_data=ordinal, level_of_measurement="ordinal", value_domain=[-1, 0, 1]
        )
    )
    assert math.isnan(alpha(np.ones((2, 10)), "interval"))


def test_gsb_length_bias_is_the_verdict_shift_toward_the_longer_report() -> None:
    """GSB: mean of (judge - humans) x sign(length difference). Cases 0-2: the candidate is
    longer, the judge one step kinder than the humans on two of them; case 3: shorter, the
    judge one step harsher; case 4: as long, left out -> (1 + 1 + 0 + 1) / 4."""
    humans = np.array([[0, -1, 1, 0, 1], [0, -1, 1, 0, 1]], dtype=float)
    judge = np.array([[1, 0, 1, -1, -1]], dtype=float)
    data = KindData(
        kind="gsb_pair",
        level="ordinal",
        agents=["a", "b", "c", "a", "b"],
        humans=humans,
        judge=judge,
        lengths=np.array([1.0, 2.0, 0.5, -1.0, 0.0]),
    )
    result = kind_stats(data, FAST)
    assert result.length_bias is not None and result.length_bias.value == pytest.approx(0.75)

"""``calibrate_judge`` on the labelled fixture, over HTTP against the mock server's noisy judges:
the gate accepts a low-noise judge and rejects one three times as noisy as a rater (on the lower
bound of its agreement), a position-biased one and any judge on ten cases; the report shows
agreement per item type and task, position bias with its direction and length bias, under the
mock banner; markers say when a judge needs calibrating again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np
import pytest

from benchforge.agents.mock_llm import MockServerConfig, run_server
from benchforge.agents.mock_llm.noisy_judge import noisy_policies
from benchforge.core.artifacts import LocalArtifactStore
from benchforge.core.llm import LlmConfig
from benchforge.evaluation.calibration.cases import CaseSet, read_cases
from benchforge.evaluation.calibration.gate import GateSettings
from benchforge.evaluation.calibration.labels import LabelSet, load_labels, read_truth
from benchforge.evaluation.calibration.models import CalibrationReport
from benchforge.evaluation.calibration.render import MOCK_HEADLINE, to_html, to_markdown
from benchforge.evaluation.calibration.runner import (
    calibrate_judge,
    fingerprint_for,
    kind_data,
    prompt_versions,
)
from benchforge.evaluation.calibration.stats import BootstrapSettings, pearson
from benchforge.evaluation.calibration.store import (
    calibration_needed,
    judge_fingerprint,
    read_marker,
    save_report,
)
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from benchforge.harness.judging import open_judge
from tests.paths import FIXTURES

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

CALIBRATION = FIXTURES / "calibration"
LOW = "mock-judge-noisy:sigma=0.05,seed=1"
# the fixture's raters label truth + N(0, 0.12 x points) (rounded to halves): this judge's
# noise, N(0, 0.36 x points), is three times a rater's
THREE_X = "mock-judge-noisy:sigma=0.36,seed=2"
BIASED = "mock-judge-noisy:sigma=0.05,bias=0.5,seed=3"
LENGTHY = "mock-judge-noisy:sigma=0.05,length=0.3,seed=4"  # 3 GSB points per doubling
RATER_SIGMA = 0.12


@contextmanager
def _judges(models: list[str]) -> Iterator[tuple[Callable[[str], Judge], object]]:
    truth = CALIBRATION / "truth.jsonl"
    config = MockServerConfig(judge_labels_file=truth)
    with (
        run_server(config=config, policies=noisy_policies(models, truth)) as mock,
        ExitStack() as stack,
    ):

        def judge_for(model: str) -> Judge:
            llm = LlmConfig(role="judge", model=model, base_url=mock.url, api_key="mock")
            return stack.enter_context(open_judge(llm, JudgeSettings(mode="per_item")))

        yield judge_for, mock


@pytest.fixture(scope="module")
def cases() -> CaseSet:
    return read_cases(CALIBRATION / "cases.jsonl")


@pytest.fixture(scope="module")
def labels(cases: CaseSet) -> LabelSet:
    return load_labels(CALIBRATION / "labels.csv", cases)


@pytest.fixture(scope="module")
def report(cases: CaseSet, labels: LabelSet) -> CalibrationReport:
    models = [LOW, THREE_X, BIASED]
    with _judges(models) as (judge_for, mock):
        result = calibrate_judge(
            models,
            cases,
            labels,
            2,
            GateSettings(max_agreement_gap=0.1, max_inconsistency=0.2),
            judge_for=judge_for,
            bootstrap=BootstrapSettings(resamples=50, seed=1),
        )
        stats = mock.stats()  # type: ignore[attr-defined]
    # every case of each model in both repeats reached the server (GSB: two orders a pair)
    pairs = len({c.pair for c in cases.cases if c.pair})
    items = len(cases.of_kind("rubric_item"))
    assert stats.requests == 3 * 2 * (items + 2 * pairs)
    return result


def test_the_gate_accepts_a_low_noise_judge(report: CalibrationReport) -> None:
    low = report.judge(LOW)
    assert low.gate.accepted, low.gate.reasons
    assert low.unscored == 0 and low.judgments == 2 * report.cases
    rubric, gsb = low.kind("rubric_item"), low.kind("gsb_pair")
    assert rubric is not None and gsb is not None
    assert rubric.agreement.judge.low is not None and rubric.agreement.judge.low > 0.9
    assert gsb.inconsistency is not None and gsb.inconsistency.value == 0.0
    assert rubric.model_spearman.judge.value == pytest.approx(1.0)
    assert low.latency_p50_s is not None and low.latency_p95_s is not None
    assert low.cost_usd == 0.0 and low.cost_per_1000 == 0.0  # the mock is priced at 0
    assert report.accepted == [LOW]
    assert "rubric_item: 120 labelled cases (min 30)" in low.gate.checks
    assert "gsb_pair: 32 labelled cases (min 30)" in low.gate.checks


def _rater_sigma(cases: CaseSet, labels: LabelSet) -> float:
    """The fixture raters' noise on rubric items, from the truth (share of the points)."""
    truth = {r.case_id: r for r in read_truth(CALIBRATION / "truth.jsonl")}
    errors = [
        label.value - float(truth[label.case_id].label) / abs(truth[label.case_id].points or 1)
        for label in labels.labels
        if truth[label.case_id].kind == "rubric_item"
    ]
    return float(np.sqrt(np.mean(np.square(errors))))


def test_a_judge_three_times_as_noisy_as_a_rater_is_rejected_on_its_lower_bound(
    report: CalibrationReport, cases: CaseSet, labels: LabelSet
) -> None:
    assert _rater_sigma(cases, labels) == pytest.approx(RATER_SIGMA, abs=0.01)
    noisy = report.judge(THREE_X)
    assert not noisy.gate.accepted
    rubric = noisy.kind("rubric_item")
    assert rubric is not None
    judge, humans = rubric.agreement.judge, rubric.agreement.humans
    # one rater against the other two: r 0.909 (labels only, so exact)
    assert humans.value == pytest.approx(0.909, abs=5e-4)
    assert judge.value == pytest.approx(0.764, abs=0.02)
    assert judge.low is not None and judge.low < humans.value - 0.1 < judge.value + 0.1
    reason = next(r for r in noisy.gate.reasons if r.startswith("rubric_item: pearson_r"))
    assert f"lower bound {judge.low:.3f}" in reason and "vs one rater 0.909" in reason
    assert "(needs >= 0.809)" in reason
    # The rule it replaces (point estimates; the judge's mean over its repeats against the
    # mean of all three raters, the raters one to one) accepted this judge.
    data = kind_data(cases, labels, noisy.details, "rubric_item", 2)
    assert data is not None
    old_judge = pearson(np.nanmean(data.judge, axis=0), np.nanmean(data.humans, axis=0))
    pairs = []
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        both = np.isfinite(data.humans[a]) & np.isfinite(data.humans[b])
        pairs.append(pearson(data.humans[a, both], data.humans[b, both]))
    assert old_judge >= float(np.mean(pairs)) - 0.1
    low = report.judge(LOW).kind("rubric_item")
    assert low is not None and rubric.repeat_std is not None and low.repeat_std is not None
    assert rubric.repeat_std.value is not None and low.repeat_std.value is not None
    assert rubric.repeat_std.value > 4 * low.repeat_std.value


def test_ten_cases_cannot_promote_a_judge(cases: CaseSet, labels: LabelSet) -> None:
    """The low-noise judge, accepted on the whole fixture, on ten labelled cases of each
    kind."""
    rubric = [c.case_id for c in cases.of_kind("rubric_item")][:10]
    gsb = [c.case_id for c in cases.of_kind("gsb_pair")][:10]  # five pairs, both dimensions
    few = LabelSet(labels=[x for x in labels.labels if x.case_id in {*rubric, *gsb}])
    with _judges([LOW]) as (judge_for, _):
        result = calibrate_judge(
            [LOW],
            cases,
            few,
            1,
            GateSettings(),
            judge_for=judge_for,
            bootstrap=BootstrapSettings(resamples=50, seed=1),
        )
    low = result.judge(LOW)
    assert not low.gate.accepted
    assert "rubric_item: 10 labelled cases (min 30)" in low.gate.reasons
    assert "gsb_pair: 10 labelled cases (min 30)" in low.gate.reasons


def test_the_gate_rejects_a_position_biased_judge_and_names_the_direction(
    report: CalibrationReport,
) -> None:
    biased = report.judge(BIASED)
    assert not biased.gate.accepted
    gsb = biased.kind("gsb_pair")
    assert gsb is not None and gsb.inconsistency is not None
    assert gsb.inconsistency.value is not None and gsb.inconsistency.value > 0.2
    assert any("position inconsistency" in r for r in biased.gate.reasons)
    inconsistent = [d for d in biased.details if d.consistent is False]
    assert inconsistent and all(d.raw == "inconsistent" and d.value == 0 for d in inconsistent)
    # its rubric judgments are as good as the low-noise judge's: only GSB fails it
    assert not any(r.startswith("rubric_item") for r in biased.gate.reasons)
    # the report shown first wins three decisive verdicts in four, and the interval says so
    assert gsb.position_bias is not None and gsb.position_bias.value == pytest.approx(
        0.745, abs=0.005
    )
    assert gsb.position_direction == "first"
    fair = report.judge(LOW).kind("gsb_pair")
    assert fair is not None and fair.position_bias is not None
    assert fair.position_bias.value == 0.5 and fair.position_direction == "none"


def test_the_report_shows_agreement_per_item_type_and_task_and_length_bias(
    report: CalibrationReport,
) -> None:
    low = report.judge(LOW)
    rubric, gsb = low.kind("rubric_item"), low.kind("gsb_pair")
    assert rubric is not None and gsb is not None
    groups = {(g.by, g.name): g for g in rubric.groups}
    assert {name for by, name in groups if by == "item_type"} == {
        "accuracy",
        "completeness",
        "insightfulness",
        "business_alignment",
        "technical_feasibility",
        "design_quality",
    }
    assert groups["item_type", "accuracy"].cases == 48
    assert groups["task", "de-fixture/arch-churn-feed@1"].cases == 24
    assert {g.name for g in gsb.groups} == {
        "gsb:depth",
        "gsb:readability",
        "da-fixture/churn-drivers@1",
    }
    # the noisy mock judges have no length preference: no slope beyond the humans' labels
    for judge in (LOW, THREE_X):
        stats = report.judge(judge).kind("rubric_item")
        assert stats is not None and stats.length_bias is not None
        assert stats.length_bias.contains(0.0), (judge, stats.length_bias)
    # four agents: agent-level figures; trial-level beside them
    assert rubric.model_pearson.judge.value is not None
    assert rubric.trial_pearson is not None and rubric.trial_pearson.judge.low is not None


def test_a_judge_that_rewards_length_shows_its_length_bias(
    report: CalibrationReport, cases: CaseSet, labels: LabelSet
) -> None:
    """Every fixture candidate is longer than the baseline: a judge adding three raw points
    per doubling of length moves 0.72 verdict steps toward the longer report beyond the
    humans; the low-noise judge's shift is a tenth of that (its only source: the raters'
    clipped noise pulls their 'good' labels toward 'same')."""
    gsb = {c.case_id for c in cases.of_kind("gsb_pair")}
    only_gsb = LabelSet(labels=[x for x in labels.labels if x.case_id in gsb])
    with _judges([LENGTHY]) as (judge_for, _):
        result = calibrate_judge(
            [LENGTHY],
            cases,
            only_gsb,
            2,
            GateSettings(),
            judge_for=judge_for,
            bootstrap=BootstrapSettings(resamples=50, seed=1),
        )
    lengthy, fair = result.judge(LENGTHY).kind("gsb_pair"), report.judge(LOW).kind("gsb_pair")
    assert lengthy is not None and fair is not None
    assert lengthy.length_bias is not None and fair.length_bias is not None
    assert lengthy.length_bias.value == pytest.approx(0.719, abs=0.01)
    assert lengthy.length_bias.low is not None and lengthy.length_bias.low > 0.5
    assert fair.length_bias.value is not None and fair.length_bias.value < 0.1
    assert lengthy.position_direction == "none"  # it follows the length, not the position
    assert not result.judge(LENGTHY).gate.accepted


def test_the_report_renders_with_the_mock_banner_and_round_trips(
    report: CalibrationReport,
) -> None:
    assert CalibrationReport.model_validate_json(report.model_dump_json()) == report
    assert report.mock_judged and all(j.mock for j in report.judges)
    page = to_html(report)
    assert page.count("data:image/png;base64,") == 3
    assert page.index(MOCK_HEADLINE) < page.index("<h1>")
    for text in (
        "Krippendorff alpha",
        "position-swap inconsistency",
        "first-position win rate",
        "favours the report shown first",
        "length bias",
        "<td>item type</td><td>completeness</td><td>16 (&lt; 30: indicative)</td>",
        "trial-level Pearson",
    ):
        assert text in page, text
    markdown = to_markdown(report)
    assert markdown.startswith(f"> **⚠️ {MOCK_HEADLINE}**")
    assert f"**{LOW}**: accepted" in markdown and f"**{THREE_X}**: rejected" in markdown
    assert "| item type | accuracy | 48 |" in markdown
    real = report.model_copy(
        update={"judges": [j.model_copy(update={"mock": False}) for j in report.judges]}
    )
    assert MOCK_HEADLINE not in to_html(real) and MOCK_HEADLINE not in to_markdown(real)


def test_markers_tell_when_a_judge_needs_calibration(
    report: CalibrationReport, cases: CaseSet, labels: LabelSet, tmp_path: Path
) -> None:
    store = LocalArtifactStore(str(tmp_path))
    low = report.judge(LOW)
    assert calibration_needed(store, low.fingerprint)
    uris = save_report(store, report)
    assert set(uris) == {"report.json", "report.html"}
    assert not calibration_needed(store, low.fingerprint)
    marker = read_marker(store, report.judge(THREE_X).fingerprint)
    assert marker is not None and not marker.accepted and marker.model == THREE_X
    stored = CalibrationReport.model_validate_json(Path(uris["report.json"]).read_bytes())
    assert stored == report
    # the fingerprint moves with the model, a prompt version or a rubric version
    versions = prompt_versions()
    rubrics = ["r1", "r2"]
    base = judge_fingerprint("m", versions, rubrics)
    assert judge_fingerprint("m", versions, list(reversed(rubrics))) == base
    assert judge_fingerprint("m2", versions, rubrics) != base
    assert judge_fingerprint("m", {**versions, "gsb": "changed"}, rubrics) != base
    assert judge_fingerprint("m", versions, [*rubrics, "r3"]) != base
    assert calibration_needed(store, judge_fingerprint("m2", versions, rubrics))
    assert fingerprint_for(LOW, cases, labels) == low.fingerprint  # what the nightly asks
    assert fingerprint_for(THREE_X, cases, labels) == report.judge(THREE_X).fingerprint
    rows = (CALIBRATION / "labels.csv").read_text().splitlines()
    (tmp_path / "fewer.csv").write_text("\n".join(rows[:-1]) + "\n")  # one label less
    fewer = load_labels(tmp_path / "fewer.csv", cases)
    assert fingerprint_for(LOW, cases, fewer) != low.fingerprint  # new labels: calibrate again

"""``calibrate_judge`` on the labelled fixture, over HTTP against the mock server's noisy judges:
the gate accepts a low-noise judge and rejects a high-noise and a position-biased one; the
report renders; markers say when a judge needs calibrating again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchforge.agents.mock_llm import MockServerConfig, run_server
from benchforge.agents.mock_llm.noisy_judge import noisy_policies
from benchforge.core.artifacts import LocalArtifactStore
from benchforge.core.llm import LlmConfig, SyncLlmClient
from benchforge.evaluation.calibration.cases import read_cases
from benchforge.evaluation.calibration.gate import GateSettings
from benchforge.evaluation.calibration.labels import load_labels
from benchforge.evaluation.calibration.models import CalibrationReport
from benchforge.evaluation.calibration.render import to_html, to_markdown
from benchforge.evaluation.calibration.runner import (
    calibrate_judge,
    fingerprint_for,
    prompt_versions,
)
from benchforge.evaluation.calibration.stats import BootstrapSettings
from benchforge.evaluation.calibration.store import (
    calibration_needed,
    judge_fingerprint,
    read_marker,
    save_report,
)
from benchforge.evaluation.judges.client import Judge, JudgeSettings
from tests.paths import FIXTURES

CALIBRATION = FIXTURES / "calibration"
LOW = "mock-judge-noisy:sigma=0.05,seed=1"
HIGH = "mock-judge-noisy:sigma=0.7,seed=2"
BIASED = "mock-judge-noisy:sigma=0.05,bias=0.5,seed=3"


@pytest.fixture(scope="module")
def report() -> Iterator[CalibrationReport]:
    cases = read_cases(CALIBRATION / "cases.jsonl")
    labels = load_labels(CALIBRATION / "labels.csv", cases)
    truth = CALIBRATION / "truth.jsonl"
    models = [LOW, HIGH, BIASED]
    clients: list[SyncLlmClient] = []
    config = MockServerConfig(judge_labels_file=truth)
    with run_server(config=config, policies=noisy_policies(models, truth)) as mock:

        def judge_for(model: str) -> Judge:
            client = SyncLlmClient(
                LlmConfig(role="judge", model=model, base_url=mock.url, api_key="mock")
            )
            clients.append(client)
            return Judge(client, JudgeSettings(mode="per_item"))

        try:
            yield calibrate_judge(
                models,
                cases,
                labels,
                2,
                GateSettings(max_agreement_gap=0.1, max_inconsistency=0.2),
                judge_for=judge_for,
                bootstrap=BootstrapSettings(resamples=50, seed=1),
            )
        finally:
            for client in clients:
                client.close()
        stats = mock.stats()
    # every case of each model in both repeats reached the server (GSB: two orders a pair)
    pairs = len({c.pair for c in cases.cases if c.pair})
    items = len(cases.of_kind("rubric_item"))
    assert stats.requests == 3 * 2 * (items + 2 * pairs)


def test_the_gate_accepts_a_low_noise_judge(report: CalibrationReport) -> None:
    low = report.judge(LOW)
    assert low.gate.accepted, low.gate.reasons
    assert low.unscored == 0 and low.judgments == 2 * report.cases
    rubric, gsb = low.kind("rubric_item"), low.kind("gsb_pair")
    assert rubric is not None and gsb is not None
    assert rubric.agreement.judge.value is not None and rubric.agreement.judge.value > 0.9
    assert gsb.inconsistency is not None and gsb.inconsistency.value == 0.0
    assert rubric.model_spearman.judge.value == pytest.approx(1.0)
    assert low.latency_p50_s is not None and low.latency_p95_s is not None
    assert low.cost_usd == 0.0 and low.cost_per_1000 == 0.0  # the mock is priced at 0
    assert report.accepted == [LOW]


def test_the_gate_rejects_a_high_noise_judge(report: CalibrationReport) -> None:
    high = report.judge(HIGH)
    assert not high.gate.accepted
    rubric = high.kind("rubric_item")
    assert rubric is not None and rubric.agreement.judge.value is not None
    assert rubric.agreement.humans.value is not None
    assert rubric.agreement.judge.value < rubric.agreement.humans.value - 0.1
    assert any("rubric_item: pearson_r" in r for r in high.gate.reasons)
    low = report.judge(LOW).kind("rubric_item")
    assert low is not None and rubric.repeat_std is not None and low.repeat_std is not None
    assert rubric.repeat_std.value is not None and low.repeat_std.value is not None
    assert rubric.repeat_std.value > 5 * low.repeat_std.value


def test_the_gate_rejects_a_position_biased_judge(report: CalibrationReport) -> None:
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


def test_the_report_renders_and_round_trips(report: CalibrationReport) -> None:
    assert CalibrationReport.model_validate_json(report.model_dump_json()) == report
    page = to_html(report)
    assert page.count("data:image/png;base64,") == 3
    assert "Krippendorff alpha" in page and "position-swap inconsistency" in page
    markdown = to_markdown(report)
    assert f"**{LOW}**: accepted" in markdown and f"**{HIGH}**: rejected" in markdown


def test_markers_tell_when_a_judge_needs_calibration(
    report: CalibrationReport, tmp_path: Path
) -> None:
    store = LocalArtifactStore(str(tmp_path))
    low = report.judge(LOW)
    assert calibration_needed(store, low.fingerprint)
    uris = save_report(store, report)
    assert set(uris) == {"report.json", "report.html"}
    assert not calibration_needed(store, low.fingerprint)
    marker = read_marker(store, report.judge(HIGH).fingerprint)
    assert marker is not None and not marker.accepted and marker.model == HIGH
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
    cases = read_cases(CALIBRATION / "cases.jsonl")
    labels = load_labels(CALIBRATION / "labels.csv", cases)
    assert fingerprint_for(LOW, cases, labels) == low.fingerprint  # what the nightly asks
    assert fingerprint_for(HIGH, cases, labels) == report.judge(HIGH).fingerprint
    rows = (CALIBRATION / "labels.csv").read_text().splitlines()
    (tmp_path / "fewer.csv").write_text("\n".join(rows[:-1]) + "\n")  # one label less
    fewer = load_labels(tmp_path / "fewer.csv", cases)
    assert fingerprint_for(LOW, cases, fewer) != low.fingerprint  # new labels: calibrate again

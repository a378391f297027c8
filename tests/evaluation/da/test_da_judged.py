"""``DaOpenFamily`` scoring and verification through the real judges and the mock server's
faithful judge (``mock-judge``): the reference scores >= 90, an empty report 0 without a
judge call, a report with wrong anchor values loses exactly the anchored accuracy items."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.core.errors import UnsupportedTaskError
from benchforge.core.llm import LlmClientView
from benchforge.core.records.verification import EMPTY, HACKS, REFERENCE
from benchforge.evaluation.da.gold import DaGold
from benchforge.evaluation.families import VerifyOptions, family_of
from benchforge.evaluation.families.da import PRIMARY_DA_METRIC
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.judges.models import JudgedVerification
from benchforge.evaluation.tasks import LoadedTask
from tests.evaluation.da.conftest import DaData
from tests.evaluation.da.test_da_data import NoCallLlm
from tests.evaluation.da.test_da_tasks import TASK_IDS

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

METRICS = {
    "score_da",
    "rubric",
    "completeness",
    "accuracy",
    "insightfulness",
    "gsb",
    "readability",
    "depth",
}


def submit(folder: Path, text: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if text is not None:
        (folder / "report.md").write_text(text)
    return folder


def test_reference_scores_high_through_the_judges(
    da_data: DaData, da_tasks: dict[str, LoadedTask], judge: Judge, tmp_path: Path
) -> None:
    task = da_tasks["crm-da-support-sla-patterns"]
    family = family_of(task)
    dataset = da_data.datasets[7]
    gold = family.prepare_gold(task, dataset, da_data.work)
    assert isinstance(gold, DaGold)
    score = family.score(
        task, submit(tmp_path / "ref", gold.reference), gold, dataset, da_data.work, judge=judge
    )
    assert score.primary == PRIMARY_DA_METRIC and set(score.metrics) == METRICS
    assert score.metrics["score_da"] >= 90 and score.success, score
    assert score.metrics["rubric"] >= 90 and score.metrics["gsb"] == 100
    assert score.detail is None
    record = judge_record_of(score)
    assert record is not None and record.requests > 0 and not record.unscored
    rubric_versions = {j.rubric_version for j in record.judges}
    assert gold.rubric.version in rubric_versions
    assert record.pairs == 2 * len(gold.baselines) and record.inconsistent_pairs == 0
    # A baseline is clearly weaker.
    baseline = next(iter(gold.baselines.values()))
    weak = family.score(
        task, submit(tmp_path / "base", baseline), gold, dataset, da_data.work, judge=judge
    )
    assert weak.metrics["score_da"] < 40 and not weak.success


def test_empty_or_missing_report_is_zero_without_a_judge_call(
    da_data: DaData, da_tasks: dict[str, LoadedTask], tmp_path: Path
) -> None:
    task = da_tasks["crm-da-bookings-2024"]
    family = family_of(task)
    dataset = da_data.datasets[7]
    gold = family.prepare_gold(task, dataset, da_data.work)
    NoCallLlm.calls = 0
    judge = Judge(LlmClientView(NoCallLlm()))
    for name, text in (("missing", None), ("blank", "  \n\n ")):
        score = family.score(
            task, submit(tmp_path / name, text), gold, dataset, da_data.work, judge=judge
        )
        assert score.metrics[PRIMARY_DA_METRIC] == 0.0 and not score.success
        assert score.detail is not None and "missing or empty" in score.detail
        assert judge_record_of(score) is not None and judge_record_of(score).requests == 0
    assert NoCallLlm.calls == 0
    with pytest.raises(UnsupportedTaskError):
        family.score(task, submit(tmp_path / "x", "report"), gold, dataset, da_data.work)
    with pytest.raises(UnsupportedTaskError):
        family.verify(task, dataset, da_data.work, VerifyOptions())


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_verifies_with_the_faithful_mock_judge(
    task_id: str, da_data: DaData, da_tasks: dict[str, LoadedTask], judge: Judge
) -> None:
    task = da_tasks[task_id]
    result = family_of(task).verify(
        task, da_data.datasets[7], da_data.work, VerifyOptions(), judge=judge
    )
    assert result.ok, result.problems
    judged = result.record
    assert isinstance(judged, JudgedVerification)
    assert judged.reference_score is not None and judged.reference_score >= 90
    assert judged.empty_score == 0.0
    assert judged.expected_lost and judged.lost == judged.expected_lost
    assert judged.wrong_anchor_score is not None
    assert judged.wrong_anchor_score < judged.reference_score - 20
    assert judged.judge_requests > 0 and not judged.unscored
    assert result.score(REFERENCE) == judged.reference_score and result.score(EMPTY) == 0.0
    assert result.groups() == [REFERENCE, EMPTY, "wrong anchors", "claims", HACKS]
    assert all(c.passed for c in result.checks) and len(result.group(HACKS)) > 0

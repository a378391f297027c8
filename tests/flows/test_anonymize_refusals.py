"""Early, clear refusals of the release sequence: a dataset whose domain has no gold dbt project
is refused before the transform runs, naming the policy field that turns the benchmark check
off; with the check off, the published release says it was skipped and why; a verdict never
reads 'RELEASE PASSED' beside a failed gold build."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from benchforge.anonymize.release import ReleaseError, StagedRelease
from benchforge.anonymize.report.models import BenchmarkSection, ReleaseReport
from benchforge.cli.anonymize import summary_lines
from benchforge.flows.anonymize import PLAIN_STEPS, make_release
from tests.support.datasets import write_dataset

SHOP = {
    "customers": (
        "SELECT 'C' || lpad(i::VARCHAR, 4, '0') AS customer_id, "
        "'person' || i || '@mail.example' AS email, ['DE', 'FR', 'IT'][i % 3 + 1] AS country "
        "FROM range(200) r(i)"
    ),
    "orders": (
        "SELECT 'O' || lpad(i::VARCHAR, 5, '0') AS order_id, "
        "'C' || lpad((i % 200)::VARCHAR, 4, '0') AS customer_id, (i % 5) * 10 AS amount "
        "FROM range(1000) r(i)"
    ),
}
REQUIRED = """\
domain: shop
tables:
  customers:
    primary_key: customer_id
    columns:
      customer_id: pseudonymize
      email: {rule: fake, provider: email, pii: direct}
      country: keep
  orders:
    primary_key: order_id
    foreign_keys:
      customer_id: customers.customer_id
    columns:
      order_id: pseudonymize
      customer_id: pseudonymize
      amount: keep
"""
SHOP_POLICY = (
    REQUIRED + "thresholds:\n  require_benchmark: false  # no gold dbt project for 'shop'\n"
)


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCHFORGE_ANON_SECRET", "refusal-test-secret-0123456789")
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    return write_dataset(tmp_path / "shop", SHOP)


def _release(source: Path, policy_text: str, tmp_path: Path, staged: list[StagedRelease]):
    policy = tmp_path / "policy.yaml"
    policy.write_text(policy_text)

    def stage(*args: object) -> StagedRelease:
        result = PLAIN_STEPS.stage(*args)  # type: ignore[arg-type]
        staged.append(result)
        return result

    steps = dataclasses.replace(PLAIN_STEPS, stage=stage)
    return make_release(str(source), str(policy), str(tmp_path / "out"), "none", 1.0, 7, 200, steps)


def test_a_domain_without_a_gold_project_is_refused_before_the_transform(
    shop: Path, tmp_path: Path
) -> None:
    staged: list[StagedRelease] = []
    assert "require_benchmark" not in REQUIRED
    with pytest.raises(ReleaseError) as refused:
        _release(shop, REQUIRED, tmp_path, staged)
    message = str(refused.value)
    assert "no gold dbt project for domain 'shop'" in message
    assert "thresholds.require_benchmark: false" in message
    assert staged == []  # nothing transformed
    assert not (tmp_path / "out").exists()


def test_with_the_check_off_the_release_says_what_was_skipped(shop: Path, tmp_path: Path) -> None:
    staged: list[StagedRelease] = []
    record = _release(shop, SHOP_POLICY, tmp_path, staged)
    report = ReleaseReport.model_validate_json(
        (Path(record.location) / "report" / "release-report.json").read_text()
    )
    assert report.passed and report.benchmark is not None
    assert report.benchmark.skipped is not None
    assert "no gold dbt project for domain 'shop'" in report.benchmark.skipped
    lines = summary_lines(report)
    assert lines[0].startswith("RELEASE PASSED")
    benchmark = [line for line in lines if line.startswith("benchmark:")]
    assert benchmark == [
        "benchmark: skipped (gold build + task verification): " + report.benchmark.skipped
    ]
    assert not any("FAILED" in line for line in lines)
    skipped = [line for line in lines if line.startswith("checks skipped: ")]
    assert len(skipped) == 1 and "require_benchmark (not required)" in skipped[0]


def test_a_passed_release_never_reads_beside_a_failed_gold_build(
    shop: Path, tmp_path: Path
) -> None:
    """The gold build failed and the policy does not require it: the line says the check did
    not count, and why; had the policy required it, the release is refused and says FAILED."""
    staged: list[StagedRelease] = []
    record = _release(shop, SHOP_POLICY, tmp_path, staged)
    report = ReleaseReport.model_validate_json(
        (Path(record.location) / "report" / "release-report.json").read_text()
    )
    failed = BenchmarkSection(
        gold_build_success=False, models=0, tests=0, error="dbt build: 2 errors", passed=False
    )
    passed = report.model_copy(update={"benchmark": failed})
    lines = summary_lines(passed)
    assert passed.passed and lines[0].startswith("RELEASE PASSED")
    assert not any("FAILED" in line for line in lines)
    assert (
        "benchmark: not counted, the policy does not require it "
        "(thresholds.require_benchmark: false): the gold build did not succeed "
        "(0 models, 0 tests), tasks verified 0/0: dbt build: 2 errors"
    ) in lines
    refused = passed.model_copy(update={"passed": False})
    lines = summary_lines(refused)
    assert lines[0].startswith("RELEASE REFUSED")
    assert any(line.startswith("benchmark: gold build FAILED") for line in lines)

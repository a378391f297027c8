"""The smallest useful nightly (issue 24): task ids, scoring concurrency and the verify
switches are nightly parameters passed through to its steps; its summary states the truth for
a resumed run; its leaderboard link opens where the artifacts are (S3 or local)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from prefect.utilities.callables import parameter_schema

from benchforge.core.errors import ConfigError
from benchforge.core.settings import BenchforgeSettings
from benchforge.flows.nightly import KindRun, check_nightly, nightly, nightly_markdown
from benchforge.flows.report import link_url
from benchforge.flows.run_kinds import RunKind
from benchforge.flows.runs import ScoreSummary
from tests.support.nightly_steps import report_summary, run_summary


def test_the_nightly_takes_task_ids_score_concurrency_and_verify_switches() -> None:
    props = parameter_schema(nightly).model_dump()["properties"]
    assert {"run_kinds", "score_concurrency", "verify_hacks"} <= set(props)
    assert props["score_concurrency"]["minimum"] == 1
    nope = RunKind(name="de", suites=["de-crm"], task_ids=["crm-nope"], agents=["oracle"])
    with pytest.raises(ConfigError, match=r"run kind de: .*crm-nope"):
        check_nightly([nope])


def test_the_nightly_passes_them_to_its_steps(nightly_steps: dict[str, list[Any]]) -> None:
    calls = nightly_steps
    result = nightly(
        run_date=date(2026, 1, 31),
        run_kinds=[
            RunKind(
                name="de", suites=["de-crm"], task_ids=["crm-impl-full"], agents=["oracle", "null"]
            )
        ],
        score_concurrency=3,
        verify_mutations=False,
        verify_hacks=True,
    )
    assert result.run_id.startswith("nightly-2026-01-31-")  # its own run, apart from the suite's
    (verified,) = calls["verify_tasks"]
    assert verified["task_ids"] == ["crm-impl-full"]
    assert (verified["mutations"], verified["hacks"]) == (False, True)
    (ran,) = calls["run_suite"]
    assert ran["task_ids"] == ["crm-impl-full"] and ran["run_id"] == result.run_id
    (scored,) = calls["score_run"]
    assert scored["workers"] == 3


def test_a_resumed_nightlys_summary_says_what_its_trials_and_judge_were() -> None:
    """Resumed: nothing ran now, but the stored trials called the mock server and the judged
    run's scores came from the mock judge (the MOCK JUDGE banner of its leaderboard)."""
    judged = KindRun(
        kind="da",
        run_id="nightly-2026-01-31-da",
        verified_tasks=3,
        run=run_summary("nightly-2026-01-31-da"),
        scores=ScoreSummary.model_construct(
            run_id="nightly-2026-01-31-da", scored=0, skipped=2, statuses={}, seconds=0.1
        ),
        report=report_summary("nightly-2026-01-31-da", mock=True, judge=True),
    )
    executed = judged.model_copy(
        update={
            "kind": "de",
            "run_id": "nightly-2026-01-31",
            "verified_tasks": 7,
            "run": run_summary("nightly-2026-01-31", mock=False),
            "report": report_summary("nightly-2026-01-31", mock=True),
        }
    )
    text = nightly_markdown(
        "nightly-2026-01-31",
        date(2026, 1, 31),
        {"crm": "/d"},
        {"crm": "gold"},
        [executed, judged],
    )
    _, de, da = text.split("## Run kind")
    assert de.startswith(" de: `nightly-2026-01-31`") and "tasks verified: 7" in de
    assert da.startswith(" da: `nightly-2026-01-31-da`")
    assert "mock LLM server (agents' model calls): yes" in de and "mock judge" not in de
    assert "0 run now, 2 already done" in de
    assert "mock LLM server (agents' model calls): yes" in da and "mock judge: yes" in da
    assert ": no" not in text


def test_the_leaderboard_link_opens_where_the_artifacts_are(tmp_path: Path) -> None:
    uri = "s3://bench/artifacts/runs/nightly-2026-01-31/report/leaderboard.html"
    minio = BenchforgeSettings(s3_endpoint_url="http://minio:9000/")
    assert link_url(uri, minio) == (
        "http://minio:9000/bench/artifacts/runs/nightly-2026-01-31/report/leaderboard.html"
    )
    aws = BenchforgeSettings(s3_region="eu-west-1")
    assert link_url(uri, aws) == (
        "https://bench.s3.eu-west-1.amazonaws.com/artifacts/runs/nightly-2026-01-31/report/"
        "leaderboard.html"
    )
    local = tmp_path / "runs" / "r" / "leaderboard.html"
    assert link_url(str(local), aws) == local.resolve().as_uri()

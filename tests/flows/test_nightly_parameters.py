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
from benchforge.core.sandbox import default_backend
from benchforge.core.settings import BenchforgeSettings
from benchforge.flows import nightly as nightly_module
from benchforge.flows.nightly import JudgedNightly, check_nightly, nightly, nightly_markdown
from benchforge.flows.report import ReportSummary, link_url
from benchforge.flows.runs import RunSummary, ScoreSummary

ISOLATION = default_backend().isolation()


def _run(run_id: str, *, ran: int = 0, mock: bool = False) -> RunSummary:
    # constructed: only the fields the nightly's summary reads (other fields are others' work)
    return RunSummary.model_construct(
        run_id=run_id,
        uri=f"/a/runs/{run_id}",
        trials=2,
        skipped=2 - ran,
        ran=ran,
        completed=2,
        infra_errors=0,
        seconds=1.0,
        chunks=0,
        mock_llm=mock,
        isolation=ISOLATION,
        terminations={},
    )


def _report(run_id: str, *, mock: bool = False, judge: bool = False) -> ReportSummary:
    return ReportSummary(
        run_id=run_id, markdown="", uris={}, mock_llm=mock, mock_judge=judge, judged=judge
    )


def test_the_nightly_takes_task_ids_score_concurrency_and_verify_switches() -> None:
    props = parameter_schema(nightly).model_dump()["properties"]
    assert {"task_ids", "da_task_ids", "score_concurrency", "verify_hacks"} <= set(props)
    assert props["score_concurrency"]["minimum"] == 1
    with pytest.raises(ConfigError, match="crm-nope"):
        check_nightly(task_ids=["crm-nope"], da_suites=[])


def test_the_nightly_passes_them_to_its_steps(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    calls: dict[str, list[dict[str, Any]]] = {}

    def record(name: str, answer: Any) -> Any:
        def call(**kwargs: Any) -> Any:
            calls.setdefault(name, []).append(kwargs)
            return answer(kwargs) if callable(answer) else answer

        return call

    m = nightly_module
    monkeypatch.setattr(m, "resolve_datasets", lambda tasks, o, w: {t.key: "/d" for t in tasks})
    monkeypatch.setattr(m, "resolve_heldout", lambda tasks, o, w: {})
    monkeypatch.setattr(m, "run_identity", lambda *a: None)
    monkeypatch.setattr(m, "check_rerun", lambda *a: None)
    monkeypatch.setattr(m, "datasets_by_domain", lambda tasks, dirs: {"crm": "/d"})
    monkeypatch.setattr(m, "gold_key", lambda *a: "gold/crm/x")
    monkeypatch.setattr(m, "build_gold", record("build_gold", "gold"))
    monkeypatch.setattr(m, "verify_tasks", record("verify_tasks", []))
    monkeypatch.setattr(m, "run_suite", record("run_suite", lambda kw: _run(kw["run_id"])))
    monkeypatch.setattr(
        m,
        "score_run",
        record(
            "score_run",
            lambda kw: ScoreSummary.model_construct(
                run_id=kw["run_id"], scored=0, skipped=2, statuses={}, seconds=0.1
            ),
        ),
    )
    monkeypatch.setattr(m, "publish_report", lambda run_id: _report(run_id))
    # the infra-error gate is another test's subject (tests/harness/test_infra_error_exits.py)
    monkeypatch.setattr(m, "fail_on_infra_errors", lambda result: result, raising=False)

    result = nightly(
        run_date=date(2026, 1, 31),
        task_ids=["crm-impl-full"],
        agents=["oracle", "null"],
        score_concurrency=3,
        verify_mutations=False,
        verify_hacks=True,
        da_suites=[],
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
    judged = JudgedNightly(
        run_id="nightly-2026-01-31-da",
        verified_tasks=3,
        run=_run("nightly-2026-01-31-da"),
        scores=ScoreSummary.model_construct(
            run_id="nightly-2026-01-31-da", scored=0, skipped=2, statuses={}, seconds=0.1
        ),
        report=_report("nightly-2026-01-31-da", mock=True, judge=True),
    )
    text = nightly_markdown(
        "nightly-2026-01-31",
        date(2026, 1, 31),
        {"crm": "/d"},
        {"crm": "gold"},
        7,
        _run("nightly-2026-01-31", mock=False),
        _report("nightly-2026-01-31", mock=True),
        judged,
    )
    de, da = text.split("## Judged run")
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

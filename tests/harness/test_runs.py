"""Agent runs end to end on the de-mini fixture suite: run_suite -> score_run -> report, on a
real (ephemeral) Prefect server, real sandboxes, real dbt, and the shipped mock LLM server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchforge.agents.mock_llm import FaultConfig, MockServerConfig, run_server
from benchforge.core.artifacts import open_store
from benchforge.core.records import LlmOptions, TrialScore
from benchforge.core.records.verification import EMPTY, REFERENCE
from benchforge.evaluation.de.breakdown import nodes_of
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.flows.report import report
from benchforge.flows.runs import run_suite, score_run
from benchforge.flows.verify import verify_tasks
from benchforge.harness.identity import RunInputsChanged
from benchforge.harness.store import RunStore
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")
EVOL = "mini-evol-won-by-industry"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds") / "mini"
    build_dataset(
        load_spec(FIXTURES / "mini_domain.yaml"), scale=1, seed=7, out=str(out), validate=False
    )
    return out


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("artifacts")
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root))
    mp.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    mp.delenv("BENCHFORGE_OPENAI_BASE_URL", raising=False)
    yield root
    mp.undo()


def scores_by(run_id: str) -> dict[tuple[str, str, str, int], TrialScore]:
    from benchforge.core.settings import load_settings

    run = RunStore(open_store(load_settings().artifact_root), run_id)
    return {(s.key.agent, s.key.model, s.key.task_id, s.key.epoch): s for s in run.read_scores()}


def test_oracle_scores_100_and_null_0_and_a_rerun_redoes_nothing(
    artifacts: Path, dataset: Path
) -> None:
    summary = run_suite(
        suites=["de-mini"],
        agents=["oracle", "null"],
        models=["mock-echo"],  # neither agent calls a model: no mock server, no mock label
        epochs=2,
        run_id="oracle-null",
        tasks_root=TASKS_ROOT,
        datasets={"mini": str(dataset)},
        concurrency=4,
    )
    assert (summary.trials, summary.ran, summary.skipped, summary.infra_errors) == (12, 12, 0, 0)
    assert not summary.mock_llm
    assert summary.isolation.backend == "namespace" and summary.isolation.network == "isolated"
    scored = score_run(run_id="oracle-null")
    assert scored.statuses == {"scored": 12}
    # the blueprints were judged by the mock server's faithful judge: 2 trials per agent, one
    # judge call per rubric item for the oracle's (identical epochs share a score), none for
    # the null agent's empty blueprint
    assert scored.judge is not None and scored.judge.mock and scored.judge.requests == 3
    scores = scores_by("oracle-null")
    for (agent, _, task_id, _), s in scores.items():
        if task_id == "mini-arch-retention":
            expected_rubric = 100.0 if agent == "oracle" else 0.0
            assert s.metrics["rubric"] == expected_rubric, (agent, s.metrics)
            assert (
                judge_record_of(s) is not None
                and judge_record_of(s).judges[0].model == "mock-judge"
            )
            continue
        expected = 100.0 if agent == "oracle" else 0.0
        assert s.metrics == {"cs": expected, "cfs": expected, "sr": expected}, (agent, task_id)
        assert s.success is (agent == "oracle")
    board = report(run_id="oracle-null")
    assert "| oracle" in board.markdown and "| null" in board.markdown
    assert "mock LLM" not in board.markdown
    html = Path(board.uris["leaderboard.html"].removeprefix("file://"))
    assert "<svg" in html.read_text()

    results = artifacts / "runs" / "oracle-null" / "trials"
    before = {p: p.read_bytes() for p in results.rglob("result.json")}
    again = run_suite(
        suites=["de-mini"],
        agents=["oracle", "null"],
        models=["mock-echo"],
        epochs=2,
        run_id="oracle-null",
        tasks_root=TASKS_ROOT,
        datasets={"mini": str(dataset)},
    )
    assert (again.ran, again.skipped) == (0, 12)
    assert {p: p.read_bytes() for p in results.rglob("result.json")} == before
    assert score_run(run_id="oracle-null").scored == 0  # nothing new to score


def test_a_later_run_reuses_the_kept_scores_of_identical_submissions(
    artifacts: Path, dataset: Path
) -> None:
    """The oracle's and the null agent's submissions are the same bytes in every run: a second
    run takes their executed scores from the gold build's score cache (marked reused) instead
    of building them again, and a cleared cache scores them afresh to the same numbers."""
    first = scores_by("oracle-null")
    for run_id in ("oracle-null-again", "oracle-null-cold"):
        if run_id == "oracle-null-cold":
            kept = list(artifacts.rglob("*.scores/*.json"))
            assert kept and all(
                p.parent.with_suffix("").joinpath("gold.duckdb").is_file() for p in kept
            )
            for path in kept:
                path.unlink()
        run_suite(
            suites=["de-mini"],
            agents=["oracle", "null"],
            models=["mock-echo"],
            epochs=1,
            run_id=run_id,
            tasks_root=TASKS_ROOT,
            datasets={"mini": str(dataset)},
            concurrency=4,
        )
        # DE's own cache, beside the gold build (the score store, which would find all six,
        # is left out here: tests/harness/test_score_store.py pins it)
        assert score_run(run_id=run_id, reuse_kept_scores=False).statuses == {"scored": 6}
        for (agent, model, task_id, epoch), s in scores_by(run_id).items():
            executed = task_id != "mini-arch-retention"
            assert s.score_reused is (executed and run_id == "oracle-null-again"), (run_id, task_id)
            assert s.metrics == first[(agent, model, task_id, epoch)].metrics
            assert nodes_of(s) == nodes_of(first[(agent, model, task_id, epoch)])


def test_the_leaderboard_is_an_artifact_of_the_report_flow_run(artifacts: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["leaderboard-oracle-null"]))
        )
        assert found and found[0].flow_run_id is not None
        assert "| # | Agent |" in str(found[0].data)
        flow_run = client.read_flow_run(found[0].flow_run_id)
        assert flow_run.name == "report-oracle-null"  # named after the run, not generated
        assert flow_run.parent_task_run_id is None  # the top-level flow run


def test_verification_uses_the_run_datasets(artifacts: Path, dataset: Path) -> None:
    # "mini" is no shipped domain: verifying anything but the given dataset would fail.
    results = verify_tasks(
        path=f"{TASKS_ROOT}/de-mini",
        work=str(artifacts / "work"),
        mutations=False,
        hacks=False,
        datasets={"mini": str(dataset)},
    )
    assert {r.task for r in results} == {
        "de-mini/mini-impl@1",
        f"de-mini/{EVOL}@1",
        "de-mini/mini-arch-retention@1",  # judged: reference blueprint >= 90, empty 0
    }
    assert {r.dataset for r in results} == {str(dataset)}
    assert all(r.ok and r.score(REFERENCE) == 100 and r.score(EMPTY) == 0 for r in results)
    executed = [r for r in results if r.shown(REFERENCE).startswith("gold ")]
    assert all(r.shown(EMPTY) == "empty 0/0/0" for r in executed) and len(executed) == 2
    (judged,) = [r for r in results if r not in executed]
    assert judged.shown(REFERENCE) == "reference 100.0" and judged.shown(EMPTY) == "empty 0.0"


def test_resuming_a_run_with_other_inputs_is_refused(
    artifacts: Path, dataset: Path, tmp_path: Path
) -> None:
    other = tmp_path / "mini-seed-8"
    build_dataset(
        load_spec(FIXTURES / "mini_domain.yaml"), scale=1, seed=8, out=str(other), validate=False
    )
    asked = {
        "suites": ["de-mini"],
        "agents": ["oracle", "null"],
        "models": ["mock-echo"],
        "epochs": 2,
        "run_id": "oracle-null",
        "tasks_root": TASKS_ROOT,
    }
    with pytest.raises(RunInputsChanged) as refused:
        run_suite(**asked, datasets={"mini": str(other)})
    message = str(refused.value)
    # Each of the three tasks names its dataset as changed, and the message says the way out.
    assert message.count("datasets[de-mini/") == 3 and "(recorded) vs" in message
    assert "another run id" in message and "oracle-null-2" in message
    with pytest.raises(RunInputsChanged, match=r"epochs: 2 \(recorded\) vs 3 \(asked\)"):
        run_suite(**{**asked, "epochs": 3}, datasets={"mini": str(dataset)})
    # The same dataset copied elsewhere is the same input: the run resumes, nothing reruns.
    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy)
    again = run_suite(**asked, datasets={"mini": str(copy)})
    assert (again.ran, again.skipped) == (0, 12)


def test_react_de_solves_a_task_through_real_tool_calls(artifacts: Path, dataset: Path) -> None:
    models = [
        "mock-script:react-de-mini-solve",
        "mock-script:react-de-mini-mistakes",
        "mock-script:react-de-loop",
    ]
    summary = run_suite(
        suites=["de-mini"],
        agents=["react-de"],
        models=models,
        run_id="react",
        tasks_root=TASKS_ROOT,
        task_ids=[EVOL],
        datasets={"mini": str(dataset)},
    )
    assert summary.mock_llm and summary.ran == 3
    score_run(run_id="react")
    scores = scores_by("react")
    solved = scores[("react-de", models[0], EVOL, 0)]
    assert solved.metrics == {"cs": 100.0, "cfs": 100.0, "sr": 100.0}
    assert solved.termination == "finished" and solved.used_mock_llm
    mistakes = scores[("react-de", models[1], EVOL, 0)]
    assert mistakes.metrics == {"cs": 50.0, "cfs": 50.0, "sr": 0.0}
    assert scores[("react-de", models[2], EVOL, 0)].termination == "repeated_action"

    run = RunStore(open_store(str(artifacts)), "react")
    slug = solved.key.slug
    result = run.read_result(slug)
    tools = [s.name for s in result.trajectory if s.kind == "tool"]
    assert "create_file" in tools and "run_dbt" in tools
    dbt_step = next(s for s in result.trajectory if s.name == "run_dbt")
    assert dbt_step.exit_code == 0 and dbt_step.seconds > 0
    assert result.llm.calls == sum(1 for s in result.trajectory if s.kind == "model")
    assert "repo/models/marts/fct_won_revenue_by_industry.sql" in result.output_files
    failing = run.read_result(mistakes.key.slug)
    assert any(s.name == "run_dbt" and s.exit_code not in (0, None) for s in failing.trajectory)
    board = report(run_id="react")
    assert "mock LLM server" in board.markdown.split("\n|")[0]  # the banner comes first


def test_llm_faults_become_infra_errors_excluded_from_scores(
    artifacts: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults = FaultConfig(
        rate_429=0.2,
        rate_500=0.2,
        rate_timeout=0.05,
        retry_after_s=0.0,
        timeout_sleep_s=1.0,
        seed=3,
    )
    with run_server(config=MockServerConfig(faults=faults)) as server:
        monkeypatch.setenv("BENCHFORGE_OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("BENCHFORGE_OPENAI_API_KEY", "test-key")
        summary = run_suite(
            suites=["de-mini"],
            agents=["single-call"],
            models=["mock-script:single-call"],
            epochs=20,
            run_id="faults",
            tasks_root=TASKS_ROOT,
            task_ids=["mini-arch-retention"],
            datasets={"mini": str(dataset)},
            concurrency=1,
            retry_infra_errors=False,
            llm=LlmOptions(timeout_s=0.3, max_retries=2, backoff_base_s=0.01, backoff_max_s=0.05),
            max_infra_error_share=1.0,  # not all of them: the run completes
        )
        stats = server.stats()
    assert summary.ran == 20  # every trial finishes
    assert 1 <= summary.infra_errors < 20
    run = RunStore(open_store(str(artifacts)), "faults")
    results = [run.read_result(slug) for slug in sorted(run.finished_slugs())]
    retried = sum(r.llm.attempts for r in results) - sum(r.llm.calls for r in results)
    assert retried > 0 and stats.requests > 20  # the one retry layer did retry
    infra = [r for r in results if r.status == "infra_error"]
    assert len(infra) == summary.infra_errors
    assert all(
        r.termination == "infra_error" and "LlmInfrastructureError" in (r.error or "")
        for r in infra
    )
    score_run(run_id="faults", max_infra_error_share=1.0)
    scores = list(scores_by("faults").values())
    assert sum(s.status == "infra_error" for s in scores) == len(infra)
    board = json.loads(
        Path(report(run_id="faults").uris["leaderboard.json"].removeprefix("file://")).read_text()
    )
    assert len(board["infra_errors"]) == len(infra)
    row = board["rows"][0]
    assert row["infra_errors"] == len(infra)

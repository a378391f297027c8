"""Judged tasks end to end, offline: run_suite -> score_run -> report on a real (ephemeral)
Prefect server, real sandboxes and dbt, and the shipped mock LLM server, which plays both the
agents (react-da's script) and the judge (mock-judge).

The da-mini fixture task asks where won revenue comes from; its rubric cites four anchors
computed by SQL on the mini dataset's marts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchforge.core.artifacts import open_store
from benchforge.core.records import TrialScore
from benchforge.core.settings import load_settings
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.flows.report import report
from benchforge.flows.runs import run_suite, score_run
from benchforge.harness.store import RunStore
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")
DA_TASK = "mini-da-won-revenue"
DIMENSIONS = {"completeness", "accuracy", "insightfulness", "readability", "depth", "gsb"}


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


def scores_of(run_id: str) -> dict[str, TrialScore]:
    run = RunStore(open_store(load_settings().artifact_root), run_id)
    return {s.key.agent: s for s in run.read_scores()}


def test_a_da_run_is_judged_and_rescoring_sends_no_request(artifacts: Path, dataset: Path) -> None:
    summary = run_suite(
        suites=["da-mini"],
        agents=["oracle", "null", "react-da"],  # no model named: react-da runs its own script
        tasks_root=TASKS_ROOT,
        datasets={"mini": str(dataset)},
        run_id="da-mini",
    )
    assert (summary.trials, summary.infra_errors) == (3, 0) and summary.mock_llm
    scored = score_run(run_id="da-mini")
    assert scored.statuses == {"scored": 3}
    assert scored.judge is not None and scored.judge.mock and scored.judge.requests > 0

    scores = scores_of("da-mini")
    oracle, null, react = scores["oracle"], scores["null"], scores["react-da"]
    assert oracle.primary == "score_da" and oracle.metrics["score_da"] >= 90.0
    assert oracle.success is True
    assert null.metrics["score_da"] == 0.0 and null.success is False
    assert (
        judge_record_of(null) is not None and judge_record_of(null).requests == 0
    )  # an empty report: no call
    # react-da's generic report is scored, dimension by dimension, well below the reference
    assert set(react.metrics) >= DIMENSIONS
    assert react.metrics["score_da"] < oracle.metrics["score_da"]
    assert react.key.model == "mock-script:react-da-report" and react.used_mock_llm
    judged = judge_record_of(oracle)
    assert judged is not None and judged.used_mock_llm and not judged.unscored
    assert {j.judge for j in judged.judges} == {"rubric", "gsb"}
    assert all(j.model == "mock-judge" and j.prompt_version for j in judged.judges)
    assert judged.pairs == 2 * 2 and judged.inconsistent_pairs == 0  # 2 baselines x 2 dims
    # every rubric point given has a quote found in the report
    rubric_items = [
        i for i in judged.items if i.kind in {"completeness", "accuracy", "insightfulness"}
    ]
    assert rubric_items and all(i.evidence for i in rubric_items if i.earned)

    board = report(run_id="da-mini")
    assert "MOCK LLM" in board.markdown and "MOCK JUDGE" in board.markdown
    assert "## Judging" in board.markdown and "| Judge requests |" in board.markdown
    html = Path(board.uris["leaderboard.html"].removeprefix("file://")).read_text()
    assert "judged dimension scores per agent" in html

    # Re-scoring unchanged outputs finds every score kept by content: no judge call at all.
    again = score_run(run_id="da-mini", rescore=True)
    assert again.scored == 3 and again.judge is not None
    assert (again.judge.requests, again.judge.cache_hits, again.kept_scores_used) == (0, 0, 3)
    rescored = scores_of("da-mini")["oracle"]
    assert rescored.metrics == oracle.metrics and rescored.score_reused
    assert rescored.breakdown == oracle.breakdown  # the judge record, kept whole
    # Scoring afresh (no kept scores) answers every judge call from the response cache.
    fresh = score_run(run_id="da-mini", rescore=True, reuse_kept_scores=False)
    assert fresh.judge is not None and fresh.kept_scores_used == 0
    assert fresh.judge.requests == 0 and fresh.judge.cache_hits == scored.judge.requests


def test_blueprints_are_judged_oracle_high_null_zero(artifacts: Path, dataset: Path) -> None:
    run_suite(
        suites=["de-mini"],
        agents=["oracle", "null", "react-de"],
        models=["mock-script:react-de-arch-blueprint"],
        tasks_root=TASKS_ROOT,
        task_ids=["mini-arch-retention"],
        datasets={"mini": str(dataset)},
        run_id="arch-mini",
    )
    scored = score_run(run_id="arch-mini")
    assert scored.statuses == {"scored": 3}  # none "unscored" for want of a judge
    scores = scores_of("arch-mini")
    assert scores["oracle"].metrics["rubric"] == 100.0
    assert scores["null"].metrics["rubric"] == 0.0
    dims = {"business_alignment", "technical_feasibility", "design_quality"}
    assert dims <= set(scores["react-de"].metrics)

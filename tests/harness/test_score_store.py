"""Scores kept by content across runs (``benchforge.harness.score_store``), through
``score_run``: rescoring an unchanged run costs no dbt invocation and no judge request; a task
change rescores that task's trials only, a scorer change every trial, another judge only the
judged ones; and what may not be kept (unsandboxed, weakly sandboxed, a transient judge
failure) is neither kept nor read."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import benchforge.harness.score_store as score_store
from benchforge.core.artifacts import open_store
from benchforge.core.settings import load_settings
from benchforge.evaluation.families import SubmissionScore
from benchforge.evaluation.judges.breakdown import JudgeRecord
from benchforge.evaluation.judges.client import JudgeSettings
from benchforge.flows.runs import ScoreSummary, run_suite, score_run
from benchforge.harness.score_store import ScoreIdentity, ScoreStore
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES
from tests.support.datasets import mini_dataset

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

DE_TASK, DA_TASK = "mini-evol-won-by-industry", "mini-da-won-revenue"
RUN = "kept-scores"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the fixture suites (a test edits a task), the mini dataset, an artifact root;
    a run of oracle and null on one DE and one DA task, scored once."""
    root = tmp_path_factory.mktemp("kept")
    tasks = root / "task_specs"
    for suite in ("de-mini", "da-mini"):
        shutil.copytree(FIXTURES / "task_specs" / suite, tasks / suite)
    shutil.copytree(FIXTURES / "mini_dbt", root / "mini_dbt")
    dataset = mini_dataset(root / "mini")
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCHFORGE_ARTIFACT_ROOT", str(root / "artifacts"))
    mp.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    mp.delenv("BENCHFORGE_OPENAI_BASE_URL", raising=False)
    try:
        summary = run_suite(
            suites=["de-mini", "da-mini"],
            agents=["oracle", "null"],
            tasks_root=str(tasks),
            task_ids=[DE_TASK, DA_TASK],
            datasets={"mini": str(dataset)},
            run_id=RUN,
        )
        assert (summary.trials, summary.infra_errors) == (4, 0)
        yield tasks
    finally:
        mp.undo()


def _rescore(reuse_kept_scores: bool = True, judge: JudgeSettings | None = None) -> ScoreSummary:
    return score_run(run_id=RUN, rescore=True, reuse_kept_scores=reuse_kept_scores, judge=judge)


def _metrics() -> dict[str, dict[str, float]]:
    run = RunStore(open_store(load_settings().artifact_root), RUN)
    return {s.key.slug: s.metrics for s in run.read_scores()}


def test_a_rescore_of_an_unchanged_run_costs_nothing(world: Path) -> None:
    first = _rescore(reuse_kept_scores=False)
    assert first.statuses == {"scored": 4}
    assert first.dbt_invocations > 0 and first.judge is not None and first.judge.requests > 0
    before = _metrics()
    kept = _rescore()  # the store is filled by this scoring: nothing was kept with reuse off
    assert kept.scores_kept == 4 and kept.kept_scores_used == 0

    again = _rescore()
    assert again.statuses == {"scored": 4}
    assert (again.dbt_invocations, again.kept_scores_used, again.scores_kept) == (0, 4, 0)
    assert again.judge is not None and again.judge.requests == 0
    assert "dbt invocations 0, judge requests 0, kept scores used 4" in again.cost_line()
    assert _metrics() == before
    run = RunStore(open_store(load_settings().artifact_root), RUN)
    assert all(s.score_reused for s in run.read_scores())


def test_a_task_change_rescores_that_task_only(world: Path) -> None:
    _rescore()  # the store holds all four
    notes = world / "de-mini" / DE_TASK / "NOTES.md"  # a file of the task: a new digest
    notes.write_text("A maintainer's note: the task changed.\n")
    try:
        changed = _rescore()
        assert changed.kept_scores_used == 2  # the DA task's two
        assert changed.scores_kept == 2 and changed.dbt_invocations > 0
        assert changed.judge is not None and changed.judge.requests == 0
    finally:
        notes.unlink()


def test_a_scorer_change_rescores_everything_and_another_judge_the_judged(
    world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _rescore()
    monkeypatch.setattr(score_store, "family_scorer", lambda module: f"changed:{module}")
    changed = _rescore()
    assert changed.kept_scores_used == 0 and changed.scores_kept == 4
    monkeypatch.undo()

    # the same judge model, judging otherwise (its settings are part of a judged score)
    other_judge = _rescore(judge=JudgeSettings(gsb_alpha=0.5))
    assert other_judge.kept_scores_used == 2  # the DE task's two: no judge in their identity
    assert other_judge.scores_kept == 2
    used = other_judge.judge
    assert used is not None and used.requests + used.cache_hits > 0  # judged again


def _identity() -> ScoreIdentity:
    return ScoreIdentity(
        family="de_evol",
        task="de-mini/t@1:abc",
        scorer="s",
        datasets={"primary": "v"},
        submission="d",
        answer=None,
    )


@pytest.mark.parametrize(
    ("sandbox", "reusable", "kept"),
    [
        ("namespace", True, True),  # confined candidate code
        (None, True, True),  # no candidate code ran (answers, reports)
        ("none", True, False),  # unsandboxed
        ("process", True, False),  # a sandbox that does not confine the filesystem
        (None, False, False),  # a transient failure: a judge call failed
    ],
)
def test_only_confined_and_complete_scores_are_kept(
    tmp_path: Path, sandbox: str | None, reusable: bool, kept: bool
) -> None:
    store = ScoreStore(open_store(str(tmp_path)))
    record = JudgeRecord(requests=3, unscored=["r2"], used_mock_llm=True)
    score = SubmissionScore(
        metrics={"sr": 50.0},
        primary="sr",
        success=False,
        sandbox=sandbox,
        reusable=reusable,
        breakdown=record,
    )
    store.put(_identity(), score)
    found = store.get(_identity())
    assert (found is not None) is kept
    if found is not None:
        assert found.reused and found.metrics == {"sr": 50.0}
        assert found.breakdown == record  # read back whole, as its family's type
        assert store.get(_identity().model_copy(update={"submission": "other"})) is None

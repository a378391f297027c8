"""DE and DA tasks in one run score and show each trial as the per-family runs do (issue 25,
"One contract for every kind of task": oracle, null and react with per-family toolsets).

Three runs share one artifact root: a mixed run of the de-mini and da-mini fixture suites (one
task each: the de_evol task, scored by dbt against its gold v2, and the judged DA report task),
a DE-only run and a DA-only run. Each runs ``oracle``, ``null`` and the generic ``react``
agent, which acts through the toolset its task's family names (``de`` or ``da``: its system
prompt and the tools offered, answered here by the mock server's ``mock-echo``), and each is
scored by ``score_run`` (the mock judge judging the DA report) afresh: the kept DE scores and
the judge's response cache are forgotten first, so no run's scores are copies of another's.

Pinned: the mixed run's trials are exactly the union of the two others'; for each trial, its
score (metrics, primary, success, status, breakdown, visible, ...), its run-browser page and its
leaderboard cells are those of its family's run, up to the run id, the clock (times,
durations) and ``score_reused`` (whether an identical submission was scored before it, an order
that concurrent scoring chunks do not fix).
"""

from __future__ import annotations

import difflib
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchforge.core.artifacts import open_store
from benchforge.core.records import TrialScore
from benchforge.core.settings import load_settings
from benchforge.evaluation.de.score_cache import CACHE_SUFFIX
from benchforge.evaluation.leaderboard import build_leaderboard
from benchforge.evaluation.leaderboard.models import JudgedTaskRow, TaskCell
from benchforge.flows.runs import run_suite, score_run
from benchforge.harness.browser import load_run, trial_page_html
from benchforge.harness.sandbox_policy import work_root
from benchforge.harness.store import RunStore
from tests.paths import FIXTURES
from tests.support.datasets import mini_dataset

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

TASKS_ROOT = str(FIXTURES / "task_specs")
DE_TASK, DA_TASK = "mini-evol-won-by-industry", "mini-da-won-revenue"
TASK_OF = {"de-mini": DE_TASK, "da-mini": DA_TASK}  # the one task of each suite run
AGENTS = ["oracle", "null", "react"]  # react: the DE toolset on DE tasks, the DA one on DA
MODEL = "mock-echo"
MIXED, DE_ONLY, DA_ONLY = "run-mixed-families", "run-de-only", "run-da-only"
RUNS = {MIXED: ["de-mini", "da-mini"], DE_ONLY: ["de-mini"], DA_ONLY: ["da-mini"]}
JUDGE_CACHE = Path("llm-cache") / "judge"  # the judge's response cache, under the work folder
# what may differ between two scorings of one submission: the run, the clock, the agent's wall
# time, and whether an identical submission was scored first (the module's docstring)
SCORE_EXCLUDE: dict[str, Any] = {
    "run_id": True,
    "scored_at": True,
    "agent_wall_s": True,
    "score_reused": True,
}


CellKey = tuple[str, str, str]  # (task, agent, model)


@dataclass(frozen=True)
class ScoredRun:
    """A run as the test compares it: its scores and trial pages by slug; its leaderboard's
    task cells and judged-task rows by (task, agent, model)."""

    run_id: str
    scores: dict[str, TrialScore]
    pages: dict[str, str]
    cells: dict[CellKey, TaskCell]
    judged: dict[CellKey, JudgedTaskRow]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mini_dataset(tmp_path_factory.mktemp("ds") / "mini")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, dataset: Path) -> Iterator[dict[str, ScoredRun]]:
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path_factory.mktemp("artifacts")))
    mp.delenv("BENCHFORGE_OPENAI_API_KEY", raising=False)
    mp.delenv("BENCHFORGE_OPENAI_BASE_URL", raising=False)
    try:
        yield {run_id: _run_and_score(run_id, suites, dataset) for run_id, suites in RUNS.items()}
    finally:
        mp.undo()


def _run_and_score(run_id: str, suites: list[str], dataset: Path) -> ScoredRun:
    summary = run_suite(
        suites=suites,
        agents=list(AGENTS),
        models=[MODEL],
        tasks_root=TASKS_ROOT,
        task_ids=[TASK_OF[suite] for suite in suites],
        datasets={"mini": str(dataset)},
        run_id=run_id,
    )
    assert summary.infra_errors == 0, summary
    assert summary.trials == len(AGENTS) * len(suites), summary
    settings = load_settings()
    _forget_kept_scores(work_root(settings))
    assert score_run(run_id=run_id, reuse_kept_scores=False).statuses == {"scored": summary.trials}
    run = RunStore(open_store(settings.artifact_root), run_id)
    scores = {s.key.slug: s for s in run.read_scores()}
    _, trials = load_run(run)
    board = build_leaderboard(list(scores.values()), run_id=run_id)
    return ScoredRun(
        run_id=run_id,
        scores=scores,
        pages={t.row.key.slug: trial_page_html(t, run_id) for t in trials},
        cells={(t.task_id, c.agent, c.model): c for t in board.tasks for c in t.cells},
        judged={(j.task_id, j.agent, j.model): j for j in board.judged},
    )


def _forget_kept_scores(work: Path) -> None:
    """Scores kept from an earlier run of the same submission (DE's score cache beside the gold
    build, the judge's response cache) would be copied, not scored: each run is scored afresh."""
    for kept in [*work.rglob(f"*{CACHE_SUFFIX}"), work / JUDGE_CACHE]:
        shutil.rmtree(kept, ignore_errors=True)


def _family_runs(runs: dict[str, ScoredRun]) -> list[ScoredRun]:
    return [runs[DE_ONLY], runs[DA_ONLY]]


def test_the_mixed_run_holds_exactly_the_family_runs_trials(runs: dict[str, ScoredRun]) -> None:
    de, da = _family_runs(runs)
    mixed = runs[MIXED].scores
    assert set(de.scores).isdisjoint(da.scores)
    assert set(mixed) == set(de.scores) | set(da.scores)
    # one react, paired with both families' tasks; real scores on both (oracle full, null none)
    by_agent: dict[str, dict[str, TrialScore]] = {}
    for score in mixed.values():
        by_agent.setdefault(score.key.agent, {})[score.key.task_id] = score
    assert {agent: set(tasks) for agent, tasks in by_agent.items()} == {
        agent: {DE_TASK, DA_TASK} for agent in AGENTS
    }
    assert all(s.key.model == MODEL and s.llm_calls > 0 for s in by_agent["react"].values())
    assert all(s.success is True for s in by_agent["oracle"].values())
    assert all(s.primary_score == 0.0 for s in by_agent["null"].values())


def test_each_score_is_its_family_runs_score(runs: dict[str, ScoredRun]) -> None:
    mixed = runs[MIXED]
    for family in _family_runs(runs):
        for slug, alone in family.scores.items():
            together = mixed.scores[slug]
            assert _comparable(together) == _comparable(alone), slug


def test_each_trial_page_is_its_family_runs_page(runs: dict[str, ScoredRun]) -> None:
    mixed = runs[MIXED]
    for family in _family_runs(runs):
        for slug, alone in family.pages.items():
            together = _normalized(mixed.pages[slug], mixed.run_id)
            alone = _normalized(alone, family.run_id)
            assert together == alone, f"{slug}\n{_diff(together, alone)}"


def test_each_leaderboard_cell_is_its_family_runs_cell(runs: dict[str, ScoredRun]) -> None:
    mixed = runs[MIXED]
    families = _family_runs(runs)
    assert mixed.cells == {key: cell for run in families for key, cell in run.cells.items()}
    assert mixed.judged == {key: row for run in families for key, row in run.judged.items()}
    assert {key[0] for key in mixed.judged} == {DA_TASK}


def _comparable(score: TrialScore) -> dict[str, Any]:
    return score.model_dump(mode="json", exclude=SCORE_EXCLUDE)


def _diff(left: str, right: str) -> str:
    return "\n".join(difflib.unified_diff(left.splitlines(), right.splitlines(), lineterm=""))


TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?")
SECONDS = re.compile(r"\d+\.\d+ s\b")  # a duration as pages write it: "took 0.07 s"


def _normalized(page: str, run_id: str) -> str:
    """``page`` without what names its run or reads the clock."""
    page = page.replace(run_id, "<run>")
    return SECONDS.sub("<s>", TIMESTAMP.sub("<time>", page))

"""The leaderboard: hand-computed numbers pinned, then the renderings (markdown, HTML, JSON)."""

from __future__ import annotations

import functools
import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from benchforge.core.artifacts import open_store
from benchforge.core.records import TrialKey, TrialScore
from benchforge.evaluation.calibration.store import CalibrationMarker, marker_key, report_key
from benchforge.evaluation.judges.breakdown import JudgeRecord
from benchforge.evaluation.leaderboard import (
    CalibrationEntry,
    Leaderboard,
    bootstrap_mean_ci,
    build_leaderboard,
    pass_at_k,
    read_calibrations,
    to_html,
    to_json,
    to_markdown,
)
from benchforge.evaluation.leaderboard import formatting as fmt
from benchforge.evaluation.leaderboard.calibrations import calibration_status

RUN = "run-1"
MOCK_BANNER = "Benchforge mock LLM server"


def ts(
    agent: str,
    task: str,
    epoch: int,
    *,
    model: str = "m",
    status: str = "scored",
    cfs: float | None = None,
    cs: float | None = None,
    success: bool | None = None,
    detail: str | None = None,
    run_id: str = RUN,
    **extra: Any,
) -> TrialScore:
    """A trial score; a scored one ranks by cfs and succeeds iff cfs == 100 unless told."""
    metrics: dict[str, float] = {}
    if status == "scored":
        metrics = {"cfs": cfs if cfs is not None else 0.0}
        if cs is not None:
            metrics["cs"] = cs
        if success is None:
            success = metrics["cfs"] == 100
    key: dict[str, Any] = {
        "suite": "mini",
        "task_id": task,
        "task_version": "1",
        "agent": agent,
        "agent_config_hash": f"hash-{agent}",
        "model": model,
        "epoch": epoch,
    }
    key.update({name: extra.pop(name) for name in list(extra) if name in TrialKey.model_fields})
    fields: dict[str, Any] = {
        "run_id": run_id,
        "key": TrialKey(**key),
        "family": "de_impl",
        "status": status,
        "metrics": metrics,
        "primary": "cfs" if status == "scored" else None,
        "success": success if status == "scored" else None,
        "termination": "finished" if status != "infra_error" else "llm_error",
        "detail": detail,
    }
    fields.update(extra)
    return TrialScore(**fields)


# alpha and beta, 3 tasks x 3 epochs; (cfs, cs) per epoch. Success iff cfs == 100.
GRID = {
    "alpha": {
        "t1": [(100, 100), (100, 100), (100, 100)],  # cfs 100, cs 100, c=3
        "t2": [(0, 20), (50, 60), (100, 100)],  # cfs 50, cs 60, c=1
        "t3": [(30, 40), (30, 40), (60, 40)],  # cfs 40, cs 40, c=0
    },
    "beta": {
        "t1": [(80, 80), (90, 90), (100, 100)],  # cfs 90, cs 90, c=1
        "t2": [(60, 70), (60, 70), (60, 70)],  # cfs 60, cs 70, c=0
        "t3": [(20, 0), (40, 0), (60, 30)],  # cfs 40, cs 10, c=0
    },
}


def grid_scores() -> list[TrialScore]:
    return [
        ts(agent, task, epoch, cfs=cfs, cs=cs)
        for agent, tasks in GRID.items()
        for task, epochs in tasks.items()
        for epoch, (cfs, cs) in enumerate(epochs)
    ]


@pytest.fixture
def grid() -> Leaderboard:
    return build_leaderboard(grid_scores(), run_id=RUN)


# --- numbers -------------------------------------------------------------------------------


def test_pass_at_k_unbiased_estimator() -> None:
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)
    assert pass_at_k(3, 1, 3) == 1.0
    assert pass_at_k(3, 0, 3) == 0.0
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)


def test_grid_means_are_task_balanced(grid: Leaderboard) -> None:
    alpha, beta = grid.row("alpha", "m"), grid.row("beta", "m")
    assert alpha.primary_mean == pytest.approx(190 / 3)
    assert alpha.metrics == pytest.approx({"cfs": 190 / 3, "cs": 200 / 3})
    assert beta.primary_mean == pytest.approx(190 / 3)
    assert beta.metrics == pytest.approx({"cfs": 190 / 3, "cs": 170 / 3})
    assert alpha.success_rate == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert beta.success_rate == pytest.approx((1 / 3 + 0 + 0) / 3)
    for row in (alpha, beta):
        assert (row.tasks_attempted, row.tasks_scored) == (3, 3)
        assert (row.trials, row.trials_scored, row.infra_errors, row.unscored) == (9, 9, 0, 0)
        assert row.terminations == {"finished": 9}
    assert grid.max_epochs == 3
    assert grid.primary_metrics == ["cfs"] and grid.metric_names == ["cfs", "cs"]


def test_grid_pass_at_k(grid: Leaderboard) -> None:
    # alpha: t1 n=3,c=3 -> 1,1,1; t2 n=3,c=1 -> 1/3, 2/3, 1; t3 c=0 -> 0,0,0.
    assert grid.row("alpha", "m").pass_at_k == pytest.approx(
        {1: 4 / 9, 2: (1 + 2 / 3) / 3, 3: 2 / 3}
    )
    # beta: only t1 has a success (c=1).
    assert grid.row("beta", "m").pass_at_k == pytest.approx({1: 1 / 9, 2: 2 / 9, 3: 1 / 3})


def test_grid_per_task_table(grid: Leaderboard) -> None:
    t2 = grid.task("t2")
    assert (t2.suite, t2.family, t2.primary) == ("mini", "de_impl", "cfs")
    assert [c.agent for c in t2.cells] == ["alpha", "beta"]
    a = t2.cell("alpha", "m")
    assert a is not None
    assert a.primary_mean == pytest.approx(50)
    assert a.metrics == pytest.approx({"cfs": 50, "cs": 60})
    assert (a.n_scored, a.n_epochs, a.successes, a.n_success_known) == (3, 3, 1, 3)
    b = grid.task("t3").cell("beta", "m")
    assert b is not None and b.metrics == pytest.approx({"cfs": 40, "cs": 10})
    assert [t.task_id for t in grid.tasks] == ["t1", "t2", "t3"]


def test_ranking_ties_broken_by_success_rate_then_name(grid: Leaderboard) -> None:
    # alpha and beta tie on the primary mean (190/3); alpha has the higher success rate.
    assert grid.ranking == [("alpha", "m"), ("beta", "m")]
    assert [r.rank for r in grid.rows] == [1, 2]

    scores = [
        ts("zed", "t1", 0, cfs=70),
        ts("amy", "t1", 0, cfs=70),  # same numbers as zed: name decides
        ts("best", "t1", 0, cfs=90),
        ts("low", "t1", 0, cfs=10),
        ts("down", "t1", 0, status="infra_error", detail="sandbox did not start"),
    ]
    lb = build_leaderboard(scores, run_id=RUN)
    assert [a for a, _ in lb.ranking] == ["best", "amy", "zed", "low", "down"]
    assert [r.rank for r in lb.rows] == [1, 2, 3, 4, None]


def test_infra_errors_excluded_from_means_and_listed() -> None:
    scores = [
        # t1: three scored epochs at 100.
        *(ts("a", "t1", e, cfs=100) for e in range(3)),
        # t2: one scored epoch at 0, two infra errors: the task mean is 0 from one epoch.
        ts("a", "t2", 0, cfs=0),
        ts("a", "t2", 1, status="infra_error", detail="LLM 503 after 5 retries"),
        ts("a", "t2", 2, status="infra_error", detail="LLM 503 after 5 retries"),
        # t3: infra errors only: left out, not a 0.
        *(ts("a", "t3", e, status="infra_error", detail="sandbox") for e in range(3)),
    ]
    lb = build_leaderboard(scores, run_id=RUN)
    row = lb.row("a", "m")
    assert row.primary_mean == pytest.approx(50)  # (100 + 0) / 2: t3 is not a 0, t1 not 3x
    assert (row.tasks_attempted, row.tasks_scored) == (3, 2)
    assert (row.trials, row.trials_scored, row.infra_errors) == (9, 4, 5)
    assert row.success_rate == pytest.approx(0.5)
    # pass@2 and pass@3: t2 has only one graded epoch, so only t1 qualifies.
    assert row.pass_at_k == pytest.approx({1: 0.5, 2: 1.0, 3: 1.0})
    assert row.terminations == {"finished": 4, "llm_error": 5}
    assert len(lb.infra_errors) == 5
    first = lb.infra_errors[0]
    assert (first.trial, first.agent, first.model, first.task_id, first.epoch) == (
        "mini/t2@1/a-hash-a/m/epoch-1",
        "a",
        "m",
        "t2",
        1,
    )
    assert first.detail == "LLM 503 after 5 retries"
    t3 = lb.task("t3").cell("a", "m")
    assert t3 is not None
    assert t3.primary_mean is None and t3.metrics == {}
    assert (t3.n_scored, t3.n_epochs, t3.n_infra_error) == (0, 3, 3)
    assert lb.task("t3").primary is None


def test_pass_at_k_is_none_when_no_task_has_k_graded_epochs() -> None:
    scores = [
        ts("a", "t1", 0, cfs=100),
        ts("a", "t1", 1, cfs=0),
        ts("a", "t1", 2, status="infra_error", detail="x"),
    ]
    row = build_leaderboard(scores, run_id=RUN).row("a", "m")
    assert row.pass_at_k[1] == pytest.approx(0.5)
    assert row.pass_at_k[2] == 1.0
    assert row.pass_at_k[3] is None  # not 0


def test_only_infra_errors_gives_an_unranked_row() -> None:
    scores = [
        ts("ok", "t1", 0, cfs=40),
        ts("broken", "t1", 0, status="infra_error", detail="sandbox"),
    ]
    lb = build_leaderboard(scores, run_id=RUN)
    broken = lb.row("broken", "m")
    assert broken.rank is None
    assert broken.primary_mean is None and broken.primary_ci is None
    assert broken.success_rate is None and broken.pass_at_k == {1: None}
    assert broken.metrics == {} and broken.mean_agent_wall_s is None
    assert lb.ranking == [("ok", "m"), ("broken", "m")]


def test_unscored_listed_and_excluded() -> None:
    scores = [
        ts("a", "t1", 0, cfs=80),
        ts("a", "arch1", 0, status="unscored", detail="de_arch rubric has no judge yet"),
    ]
    lb = build_leaderboard(scores, run_id=RUN)
    row = lb.row("a", "m")
    assert row.primary_mean == 80
    assert (row.tasks_attempted, row.tasks_scored, row.unscored, row.infra_errors) == (2, 1, 1, 0)
    assert [(u.task_id, u.detail) for u in lb.unscored] == [
        ("arch1", "de_arch rubric has no judge yet")
    ]
    assert lb.infra_errors == []


def test_scoring_errors_listed_apart_and_never_a_zero() -> None:
    detail = "AbsoluteLinkError: 'repo' is a link to an absolute path"
    scores = [
        ts("a", "t1", 0, cfs=80),
        ts("a", "t1", 1, status="scoring_error", detail=detail),
        ts("a", "t2", 0, cfs=40),
        ts("a", "t3", 0, status="scoring_error", detail=detail),  # t3: nothing scored
        ts("a", "t2", 1, status="infra_error", detail="sandbox"),
    ]
    lb = build_leaderboard(scores, run_id=RUN)
    row = lb.row("a", "m")
    assert row.primary_mean == pytest.approx(60)  # (80 + 40) / 2: no 0 for t1@1, none for t3
    assert (row.trials, row.trials_scored, row.scoring_errors, row.infra_errors) == (5, 2, 2, 1)
    assert (row.tasks_attempted, row.tasks_scored) == (3, 2)
    assert row.pass_at_k[1] == pytest.approx(0.0) and row.pass_at_k[2] is None
    assert [(i.task_id, i.epoch, i.detail) for i in lb.scoring_errors] == [
        ("t1", 1, detail),
        ("t3", 0, detail),
    ]
    assert [i.task_id for i in lb.infra_errors] == ["t2"] and lb.unscored == []
    t1 = lb.task("t1").cell("a", "m")
    assert t1 is not None and (t1.n_epochs, t1.n_scored, t1.n_scoring_error) == (2, 1, 1)
    md = to_markdown(lb)
    assert md.index("## Unscored") < md.index("## Scoring errors")
    assert "| Scoring errors |" in md and "AbsoluteLinkError" in md
    html = to_html(lb)
    assert '<section id="scoring">' in html and "scoring error" in html  # the status bars
    assert Leaderboard.model_validate_json(to_json(lb)) == lb


def test_success_none_is_left_out_of_success_rate_and_pass_at_k() -> None:
    scores = [
        ts("a", "t1", 0, cfs=100),
        ts("a", "t2", 0, cfs=50, success=None),
    ]
    # ts() derives success from cfs; force an ungraded trial.
    scores[1] = scores[1].model_copy(update={"success": None})
    row = build_leaderboard(scores, run_id=RUN).row("a", "m")
    assert row.primary_mean == 75
    assert row.success_rate == 1.0 and row.pass_at_k == {1: 1.0}


def test_bootstrap_ci_deterministic_and_contains_mean(grid: Leaderboard) -> None:
    again = build_leaderboard(grid_scores(), run_id=RUN)
    for row in grid.rows:
        assert row.primary_ci is not None and row.primary_mean is not None
        low, high = row.primary_ci
        assert low <= row.primary_mean <= high
        assert low < high  # the per-task means differ
        assert again.row(row.agent, row.model).primary_ci == row.primary_ci
    assert (grid.ci_level, grid.bootstrap_resamples, grid.bootstrap_seed) == (0.95, 1000, 0)

    values = [10.0, 20.0, 90.0, 55.0, 70.0]
    ci = bootstrap_mean_ci(values, resamples=1000, seed=0)
    assert ci == bootstrap_mean_ci(values, resamples=1000, seed=0)
    assert ci is not None and ci[0] <= 49 <= ci[1]
    assert ci[0] >= 10 and ci[1] <= 90
    assert bootstrap_mean_ci([42.0, 42.0, 42.0], resamples=1000, seed=7) == (42.0, 42.0)
    assert bootstrap_mean_ci([42.0], resamples=1000, seed=0) is None  # one task: no spread


def test_tokens_cost_and_wall_time() -> None:
    scores = [
        ts(
            "a",
            "t1",
            0,
            cfs=1,
            llm_calls=2,
            prompt_tokens=100,
            completion_tokens=10,
            cost_usd=0.5,
            agent_wall_s=10.0,
        ),
        ts(
            "a",
            "t2",
            0,
            cfs=1,
            llm_calls=1,
            prompt_tokens=50,
            completion_tokens=5,
            cost_usd=0.25,
            agent_wall_s=20.0,
        ),
        # No calls, no cost: adds 0, not "partial".
        ts("a", "t3", 0, cfs=1, llm_calls=0, cost_usd=None, agent_wall_s=30.0),
        # Infra errors do not count in the totals of a leaderboard of scores.
        ts("a", "t4", 0, status="infra_error", llm_calls=9, prompt_tokens=999, cost_usd=9.0),
    ]
    row = build_leaderboard(scores, run_id=RUN).row("a", "m")
    assert (row.llm_calls, row.prompt_tokens, row.completion_tokens, row.total_tokens) == (
        3,
        150,
        15,
        165,
    )
    assert row.cost_usd == pytest.approx(0.75) and not row.cost_partial
    assert row.mean_agent_wall_s == pytest.approx(20.0)

    scores.append(ts("a", "t5", 0, cfs=1, llm_calls=4, cost_usd=None))
    lb = build_leaderboard(scores, run_id=RUN)
    row = lb.row("a", "m")
    assert row.cost_usd is None and row.cost_partial
    assert row.cost_usd_known == pytest.approx(0.75)
    assert "partial" in to_markdown(lb)
    assert "partial" in to_html(lb)


def test_mock_flag() -> None:
    plain = build_leaderboard(grid_scores(), run_id=RUN)
    assert not plain.mock_llm_used
    mocked = grid_scores()
    mocked[4] = mocked[4].model_copy(update={"used_mock_llm": True})
    assert build_leaderboard(mocked, run_id=RUN).mock_llm_used
    assert build_leaderboard(grid_scores(), run_id=RUN, mock_llm_used=True).mock_llm_used
    # An explicit False cannot hide that a trial used the mock.
    assert build_leaderboard(mocked, run_id=RUN, mock_llm_used=False).mock_llm_used


# --- bad input -----------------------------------------------------------------------------


def test_empty_input_raises() -> None:
    with pytest.raises(ValueError, match="no trial scores"):
        build_leaderboard([], run_id=RUN)


def test_mixed_run_ids_raise() -> None:
    scores = [ts("a", "t1", 0, cfs=1), ts("a", "t2", 0, cfs=1, run_id="run-2")]
    with pytest.raises(ValueError, match="run-2"):
        build_leaderboard(scores, run_id=RUN)
    with pytest.raises(ValueError, match="must all come from run"):
        build_leaderboard([ts("a", "t1", 0, cfs=1)], run_id="another-run")


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([ts("a", "t1", 0, cfs=1), ts("a", "t1", 0, cfs=2)], "appears twice"),
        (
            [ts("a", "t1", 0, cfs=1), ts("a", "t1", 0, cfs=2, suite="other")],
            "two trials for agent",
        ),
        (
            [ts("a", "t1", 0, cfs=1), ts("a", "t2", 0, cfs=1, agent_config_hash="h2")],
            "two configs",
        ),
        ([ts("a", "t1", 0, cfs=1), ts("b", "t1", 0, cfs=1, task_version="2")], "version"),
        ([ts("a", "t1", 0, cfs=1, primary="sr")], "lacks its primary metric"),
        ([ts("a", "t1", 0, cfs=float("nan"))], "non-finite"),
        (
            [
                ts("a", "t1", 0, cfs=1),
                ts("b", "t1", 0, cfs=1).model_copy(
                    update={"metrics": {"cfs": 1.0, "sr": 0.0}, "primary": "sr"}
                ),
            ],
            "two primary metrics",
        ),
    ],
)
def test_inconsistent_input_raises(scores: list[TrialScore], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_leaderboard(scores, run_id=RUN)


# --- renderings ----------------------------------------------------------------------------

NASTY_TASK = "t<b>&amp|x"
NASTY_DETAIL = "<script>alert('x')</script> | broke & left"


def nasty_scores() -> list[TrialScore]:
    return [
        *grid_scores(),
        ts("alpha", NASTY_TASK, 0, cfs=10),
        ts("beta", NASTY_TASK, 0, status="infra_error", detail=NASTY_DETAIL),
        ts("beta", "arch", 0, status="unscored", detail="no <judge> yet"),
    ]


def test_markdown_sections_and_banner(grid: Leaderboard) -> None:
    md = to_markdown(grid)
    assert MOCK_BANNER not in md
    headings = [
        "## Leaderboard",
        "## Details",
        "## pass@k",
        "## Per task",
        "## Infra errors",
        "## Unscored",
    ]
    assert [md.index(h) for h in headings] == sorted(md.index(h) for h in headings)
    assert "63.3" in md  # the primary means
    assert "44.4%" in md  # alpha's success rate and pass@1
    # A narrow summary first (it fits a Prefect artifact page), every column after it.
    summary, details = [line for line in md.splitlines() if line.startswith("| # | Agent")][:2]
    assert summary.count(" | ") == 6 and "| cfs (mean) | Success |" in summary
    assert "| cfs (mean) |" in details and "| cs |" in details and "| cfs |" not in details
    assert "not scored on the same tasks" not in md

    mocked = build_leaderboard(grid_scores(), run_id=RUN, mock_llm_used=True)
    md = to_markdown(mocked)
    # Prominent: right under the title, before any table.
    assert md.index(MOCK_BANNER) < md.index("## Leaderboard")
    assert "not a real model" in md


def test_markdown_escapes_table_breakers() -> None:
    md = to_markdown(build_leaderboard(nasty_scores(), run_id=RUN))
    assert "not scored on the same tasks" in md  # beta lost a task to an infra error
    assert "<script>" not in md and "<b>" not in md
    assert "&lt;script&gt;" in md
    assert r"t&lt;b&gt;&amp;amp\|x" in md
    # Every table line has the same number of unescaped pipes as its header.
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            width = _cells(line)
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                assert _cells(lines[j]) == width, lines[j]
                j += 1


def _cells(line: str) -> int:
    return line.replace("\\|", "").count("|")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def test_html_self_contained_well_formed_and_escaped() -> None:
    lb = build_leaderboard(nasty_scores(), run_id=RUN, mock_llm_used=True)
    page = to_html(lb)
    # Well-formed as XML: every tag closed, every entity XML-safe.
    root = ET.fromstring(page)
    svg = root.findall(".//{http://www.w3.org/2000/svg}svg")
    assert len(svg) == 3  # bar chart with CI, heatmap, status bars
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags
    assert "link" not in parser.tags and "img" not in parser.tags
    namespaces = (
        'xmlns="http://www.w3.org/2000/svg"',
        'xmlns:xlink="http://www.w3.org/1999/xlink"',
    )
    assert "<script>" not in page
    assert "http://" not in functools.reduce(
        lambda text, ns: text.replace(ns, ""), namespaces, page
    )
    assert "&lt;script&gt;" in page
    assert "t&lt;b&gt;&amp;amp|x" in page
    assert MOCK_BANNER in page
    assert page.index(MOCK_BANNER) < page.index("<svg")
    text = "".join(root.itertext())
    assert NASTY_DETAIL in text  # escaped in the source, intact when read back
    assert NASTY_TASK in text


def test_html_without_mock_has_no_banner(grid: Leaderboard) -> None:
    page = to_html(grid)
    assert MOCK_BANNER not in page
    ET.fromstring(page)


def test_json_round_trip() -> None:
    lb = build_leaderboard(nasty_scores(), run_id=RUN)
    text = to_json(lb)
    assert json.loads(text)["run_id"] == RUN
    assert Leaderboard.model_validate_json(text) == lb


# --- judges and their calibration ----------------------------------------------------------

CALIBRATED_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def judged_ts(agent: str, task: str, rubric_version: str, *, judge_model: str = "j1") -> TrialScore:
    judges = [
        {
            "judge": "rubric",
            "model": judge_model,
            "prompt_version": "rp-1",
            "rubric_version": rubric_version,
            "mode": "per_item",
        },
        {"judge": "gsb", "model": judge_model, "prompt_version": "gp-1", "mode": "per_item"},
    ]
    return TrialScore(
        run_id=RUN,
        key=TrialKey(
            suite="da",
            task_id=task,
            task_version="1",
            agent=agent,
            agent_config_hash="h",
            model="m",
            epoch=0,
        ),
        family="da_open",
        status="scored",
        metrics={"score_da": 50.0, "rubric": 60.0, "gsb": 40.0},
        primary="score_da",
        success=False,
        termination="finished",
        breakdown=JudgeRecord(judges=judges),
    )


def entry(
    accepted: bool,
    *,
    prompts: dict[str, str] | None = None,
    kinds: tuple[str, ...] = ("rubric_item", "gsb_pair"),
    at: datetime = CALIBRATED_AT,
    model: str = "j1",
    report: str = "calibration/reports/r1/report.json",
) -> CalibrationEntry:
    return CalibrationEntry(
        model=model,
        prompt_versions=prompts or {"rubric": "rp-1", "gsb": "gp-0", "architecture": "ap-1"},
        kinds=list(kinds),
        accepted=accepted,
        reasons=[] if accepted else ["rubric_item: pearson_r 0.41 vs humans 0.80"],
        report=report,
        created_at=at,
    )


def judged_board(calibrations: list[CalibrationEntry] | None) -> Leaderboard:
    scores = [judged_ts("a", "t1", "rv-a"), judged_ts("a", "t2", "rv-b"), ts("b", "t3", 0)]
    return build_leaderboard(scores, run_id=RUN, calibrations=calibrations)


def test_the_judges_of_judged_metrics_are_named_with_their_calibration() -> None:
    lb = judged_board([entry(True)])
    lines = {j.judge: j for j in lb.judges}
    rubric, gsb = lines["rubric"], lines["gsb"]
    assert (rubric.model, rubric.prompt_version, rubric.rubric_versions) == (
        "j1",
        "rp-1",
        ["rv-a", "rv-b"],
    )
    assert (rubric.tasks, rubric.trials, rubric.modes) == (["t1", "t2"], 2, ["per_item"])
    assert rubric.calibration.state == "passed"
    assert rubric.calibration.report == "calibration/reports/r1/report.json"
    assert gsb.calibration.state == "never"  # calibrated with another GSB prompt version
    assert lb.judged_metrics == ["gsb", "rubric", "score_da"]

    line = fmt.judges_line(lb)
    assert line is not None
    assert (
        "rubric judge j1 (prompt rp-1; rubrics rv-a, rv-b) — calibrated and passed (2026-01-02)"
        in line
    )
    assert "gsb judge j1 (prompt gp-1) — never calibrated" in line
    warning = fmt.calibration_warning(lb)
    assert warning is not None and "gsb judge j1: never calibrated" in warning
    assert "rubric judge" not in warning

    md = to_markdown(lb)
    assert md.index(line) < md.index("## Leaderboard")  # up front, with the summary
    assert md.index("## Judges") < md.index("## Judging")
    row = next(r for r in md.splitlines() if r.startswith("| rubric |"))
    assert "| j1 | rp-1 | rv-a, rv-b | per_item | 2 | 2 | calibrated and passed" in row
    assert "calibration/reports/r1/report.json" in row
    page = to_html(lb)
    root = ET.fromstring(page)
    text = "".join(root.itertext())
    assert line in text and "never calibrated" in text
    assert root.find(".//section[@id='judges']") is not None


def test_calibration_status_failed_never_and_latest_decides() -> None:
    later = datetime(2026, 2, 1, tzinfo=UTC)
    failed = entry(False, at=later, report="calibration/reports/r2/report.json")
    assert calibration_status([entry(True), failed], "rubric", "j1", "rp-1").state == "failed"
    status = calibration_status([failed, entry(True)], "rubric", "j1", "rp-1")
    assert status.state == "failed" and status.reasons == failed.reasons
    assert calibration_status([entry(True)], "rubric", "j1", "rp-2").state == "never"
    assert calibration_status([entry(True)], "rubric", "j2", "rp-1").state == "never"
    # a calibration on GSB pairs only does not calibrate the rubric judge
    gsb_only = entry(True, kinds=("gsb_pair",))
    assert calibration_status([gsb_only], "rubric", "j1", "rp-1").state == "never"
    assert calibration_status([], "rubric", "j1", "rp-1").state == "never"
    assert calibration_status(None, "rubric", "j1", "rp-1").state == "unchecked"

    lb = judged_board([failed])
    md = to_markdown(lb)
    assert "calibrated and failed (2026-02-01): rubric_item: pearson_r 0.41" in md
    assert "calibration not checked" in to_markdown(judged_board(None))
    assert "## Judges" not in to_markdown(build_leaderboard(grid_scores(), run_id=RUN))


def test_judge_names_are_escaped(tmp_path: Path) -> None:
    hostile = "<script>alert(1)</script>|x"
    scores = [judged_ts("a", "t1", "rv-a", judge_model=hostile)]
    lb = build_leaderboard(scores, run_id=RUN, calibrations=[])
    md, page = to_markdown(lb), to_html(lb)
    assert "<script>" not in md and "<script>" not in page
    assert hostile in "".join(ET.fromstring(page).itertext())


def test_calibrations_are_read_from_the_store(tmp_path: Path) -> None:
    """The markers and reports ``calibration.store.save_report`` writes (the fields read)."""
    store = open_store(str(tmp_path / "store"))

    def calibrated(fingerprint: str, model: str, report_id: str, accepted: bool) -> None:
        report = report_key(report_id, "report.json")
        payload = {
            "created_at": CALIBRATED_AT.isoformat(),
            "prompt_versions": {"rubric": "rp-1", "gsb": "gp-1"},
            "judges": [
                {
                    "model": model,
                    "fingerprint": fingerprint,
                    "kinds": [{"kind": "rubric_item"}],
                    "gate": {"accepted": accepted, "reasons": [] if accepted else ["too noisy"]},
                }
            ],
        }
        store.put_bytes(report, json.dumps(payload).encode())
        marker = CalibrationMarker(
            fingerprint=fingerprint,
            model=model,
            report=report,
            accepted=accepted,
            created_at=CALIBRATED_AT,
        )
        store.put_bytes(marker_key(fingerprint), marker.model_dump_json().encode())

    calibrated("f1", "j1", "r1", True)
    calibrated("f2", "j2", "r2", False)
    store.put_bytes(marker_key("broken"), b"{not json")
    entries = read_calibrations(store, {"j1", "j2"})
    assert [(e.model, e.accepted, e.kinds) for e in entries] == [
        ("j1", True, ["rubric_item"]),
        ("j2", False, ["rubric_item"]),
    ]
    assert entries[1].reasons == ["too noisy"]
    assert [e.model for e in read_calibrations(store, {"j1"})] == ["j1"]
    assert read_calibrations(store, set()) == []
    lb = build_leaderboard(
        [judged_ts("a", "t1", "rv-a")], run_id=RUN, calibrations=read_calibrations(store)
    )
    assert {j.judge: j.calibration.state for j in lb.judges} == {"rubric": "passed", "gsb": "never"}

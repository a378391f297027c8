"""The exploration report's aggregation, pinned by hand."""

from __future__ import annotations

import pytest

from benchforge.evaluation.explore.report import ExploreTrial, accuracy_drop, build_report


def trial(
    agent: str, task: str, epoch: int, difficulty: str, acc: float, **kw: object
) -> ExploreTrial:
    return ExploreTrial.model_validate(
        {
            "agent": agent,
            "task_id": task,
            "epoch": epoch,
            "difficulty": difficulty,
            "accuracy": acc,
            "correct": acc == 1.0,
            **kw,
        }
    )


def test_report_rows_by_hand() -> None:
    trials = [
        # agent a: t1 easy correct both epochs (ee 0.5, 0.25), t2 hard wrong both epochs
        trial("a", "t1", 0, "easy", 1.0, gpr=1.0, tpe=1.0, ee=0.5, termination="answered"),
        trial("a", "t1", 1, "easy", 1.0, gpr=1.0, tpe=1.0, ee=0.25, termination="answered"),
        trial(
            "a",
            "t2",
            0,
            "hard",
            0.0,
            gpr=0.5,
            tpe=0.9,
            first_missed_index=2,
            termination="wrong_answer_stop",
        ),
        trial(
            "a",
            "t2",
            1,
            "hard",
            0.0,
            gpr=0.0,
            tpe=None,
            first_missed_index=1,
            termination="timeout",
        ),
        # agent b: wrong everywhere but far along; one unscored trial
        trial(
            "b",
            "t1",
            0,
            "easy",
            0.0,
            gpr=0.75,
            tpe=1.0,
            first_missed_index=4,
            termination="give_up",
        ),
        trial("b", "t2", 0, "hard", 0.0, gpr=1.0, tpe=0.81, termination="wrong_answer_stop"),
        ExploreTrial(agent="b", task_id="t2", epoch=1, difficulty="hard", scored=False),
    ]
    a, b = build_report(trials, resamples=100, seed=0).rows
    assert a.accuracy.mean == pytest.approx(0.5) and a.accuracy.std == pytest.approx(0.0)
    assert a.gpr.mean == pytest.approx((0.75 + 0.5) / 2)  # epoch means (1+0.5)/2, (1+0)/2
    assert a.gpr_failed.mean == pytest.approx(0.25)
    assert a.tpe.mean == pytest.approx((0.95 + 1.0) / 2)  # a None TPE is left out
    assert a.ee.mean == pytest.approx(0.375)
    assert a.accuracy_by_difficulty == {"easy": 1.0, "medium": None, "hard": 0.0}
    assert accuracy_drop(a) == {"easy_to_medium": None, "medium_to_hard": None}
    assert a.first_missed == {1: 1, 2: 1}
    assert a.terminations == {"answered": 2, "timeout": 1, "wrong_answer_stop": 1}
    assert (b.unscored, b.accuracy.trials, b.ee.mean) == (1, 2, None)
    # a is first by accuracy (0.5 vs 0) but second by GPR (0.625 vs 0.875): gap +1 / -1
    assert (a.rank_accuracy, a.rank_gpr, a.rank_gap) == (1, 2, 1)
    assert (b.rank_accuracy, b.rank_gpr, b.rank_gap) == (2, 1, -1)


def test_the_report_pages_have_the_three_plots_and_escape_agent_names() -> None:
    from benchforge.evaluation.explore.pages import ExploreRunReport, to_html, to_markdown

    trials = [
        ExploreTrial(
            agent="<b>agent</b>",
            task_id=f"t{i}",
            epoch=0,
            difficulty="easy",
            accuracy=0.0,
            correct=False,
            gpr=0.5,
            tpe=1.0,
            first_missed_index=2,
            termination="wrong_answer_stop",
        )
        for i in range(3)
    ] + [
        ExploreTrial(
            agent="oracle",
            task_id="t0",
            epoch=0,
            difficulty="easy",
            accuracy=1.0,
            correct=True,
            gpr=1.0,
            tpe=1.0,
            ee=0.5,
            termination="answered",
        )
    ]
    run = ExploreRunReport(run_id="r", report=build_report(trials, resamples=50), trials=4)
    markdown = to_markdown(run)
    assert "| <b>agent</b> | 0.0 [0.0, 0.0] | 50.0 [50.0, 50.0] |" in markdown
    # first missed: milestone 2, three times; termination: three wrong-answer stops
    assert "| agent | milestone 2 |\n| --- | --- |\n| <b>agent</b> | 3 |" in markdown
    assert "| <b>agent</b> | 0 | 0 | 0 | 0 | 3 | 0 |" in markdown
    page = to_html(run)
    assert page.count("<svg") == 3 and "<b>agent</b>" not in page
    assert 'id="explore-first-missed"' in page and 'id="explore-terminations"' in page

"""The run's DAB report on hand-made trials: pass@k per query and stratified by dataset,
cost, latency, tool mix, failure modes counted per agent, and the markdown and HTML carry the
failure-mode table and plot."""

from __future__ import annotations

import pytest

from benchforge.evaluation.dab.failure_modes import FailureLabel
from benchforge.evaluation.dab.report import build_dab_report, to_html, to_markdown
from tests.support.dab_trials import EXACT_JOIN, NO_DATA, SOLVED, result, score

DATASETS = {"q1": "crm", "q2": "crm", "q3": "shop"}


def _trials():  # type: ignore[no-untyped-def]
    trials = []
    # q1: 1 of 3 passed; q2: 0 of 3; q3: 3 of 3
    for epoch, passed in enumerate([True, False, False]):
        r = result(
            SOLVED if passed else EXACT_JOIN, "55" if passed else "0", task_id="q1", epoch=epoch
        )
        trials.append((score(r, passed), r))
    for epoch in range(3):
        r = result(NO_DATA, "12", task_id="q2", epoch=epoch)
        trials.append((score(r, False, cost=None if epoch == 0 else 0.01), r))
    for epoch in range(3):
        r = result(SOLVED, "55", task_id="q3", epoch=epoch)
        trials.append((score(r, True, wall=5.0), r))
    return trials


def _label(res, mode, source="judge", infra=None):  # type: ignore[no-untyped-def]
    return FailureLabel(
        trial=res.key.slug,
        task_id=res.key.task_id,
        agent=res.key.agent,
        model=res.key.model,
        epoch=res.key.epoch,
        mode=mode,
        source=source,
        infra_error=infra,
    )


def test_report_numbers_by_hand():
    trials = _trials()
    failed = [r for s, r in trials if not s.success]
    labels = [
        _label(failed[0], "implementation"),
        _label(failed[1], "implementation"),
        _label(failed[2], "plan"),
        _label(failed[3], "runtime", source="code"),
        _label(failed[4], None, infra="judge failed"),
    ]
    report = build_dab_report("dab-run", trials, dataset_of=DATASETS, failures=labels)
    (row,) = report.rows
    assert row.trials == 9
    q1 = row.queries[0]
    assert (q1.task_id, q1.n, q1.c) == ("q1", 3, 1)
    assert q1.pass_at_k == pytest.approx({1: 1 / 3, 2: 2 / 3, 3: 1.0})
    # crm: (1/3 + 0) / 2 = 1/6; shop: 1; overall (1/6 + 1) / 2 = 7/12
    assert row.pass_at_1_by_dataset == pytest.approx({"crm": 1 / 6, "shop": 1.0})
    assert row.pass_at_k[1] == pytest.approx(7 / 12)
    assert row.pass_at_k[2] == pytest.approx(((2 / 3 + 0) / 2 + 1) / 2)
    assert row.pass_at_k[3] == pytest.approx(((1 + 0) / 2 + 1) / 2)
    assert row.cost_usd is None and row.cost_usd_known == pytest.approx(0.08)
    assert row.mean_latency_s == pytest.approx((6 * 2.0 + 3 * 5.0) / 9)
    # SOLVED x4: 1 sql + 2 other (list_db exploratory); EXACT_JOIN x2: 1 sql 1 py 2 other
    # (the sql is `select * from contacts` without LIMIT: not exploratory); NO_DATA x3: 1 other
    assert (row.tools.sql, row.tools.python, row.tools.other) == (6, 2, 15)
    assert row.tools.exploratory == 6
    assert row.failures == {"implementation": 2, "plan": 1, "runtime": 1, "infra_error": 1}


def test_report_renders_the_failure_table_and_plot():
    trials = _trials()
    failed = [r for s, r in trials if not s.success]
    labels = [_label(r, "implementation") for r in failed]
    report = build_dab_report("dab-run", trials, dataset_of=DATASETS, failures=labels)
    markdown = to_markdown(report)
    assert "### Failure modes of failed trials" in markdown
    assert "| react-dab · m | 0 | 0 | 0 | 5 | 0 | 0 | 5 |" in markdown
    assert "| react-dab · m | 9 | 58.3% | 66.7% | 75.0% |" in markdown
    html = to_html(report)
    assert 'id="dab-failure-modes"' in html
    assert '<svg role="img" aria-label="failed trials by failure mode"' in html
    assert html.count("implementation") >= 5


def test_no_graded_trial_gives_an_empty_report():
    report = build_dab_report("dab-run", [], dataset_of={})
    assert report.rows == [] and report.max_k == 0
    assert "Failure modes" in to_markdown(report)
    assert "<svg" not in to_html(report)

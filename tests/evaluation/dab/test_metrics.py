"""DAB metrics by hand: unbiased pass@k per query (the leaderboard's estimator), stratified
averages (query -> dataset -> overall), and the tool-call mix of a trajectory."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from benchforge.core.records.trials import Step
from benchforge.evaluation.dab.metrics import (
    is_exploratory_sql,
    query_pass_at_k,
    stratified_mean,
    tool_mix,
)


def test_pass_at_k_of_one_success_in_three():
    assert query_pass_at_k(n=3, c=1) == pytest.approx({1: 1 / 3, 2: 2 / 3, 3: 1.0})


def test_pass_at_k_edges():
    assert query_pass_at_k(n=3, c=0) == {1: 0.0, 2: 0.0, 3: 0.0}
    assert query_pass_at_k(n=2, c=2) == {1: 1.0, 2: 1.0}
    # n - c < k: every draw of k holds a success
    assert query_pass_at_k(n=4, c=3)[2] == 1.0
    assert query_pass_at_k(n=4, c=2) == pytest.approx({1: 0.5, 2: 5 / 6, 3: 1.0, 4: 1.0})
    assert query_pass_at_k(n=0, c=0) == {}
    with pytest.raises(ValueError):
        query_pass_at_k(n=2, c=3)


def test_stratified_mean_weighs_datasets_not_queries():
    per_query = {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 0.5}
    dataset_of = {"q1": "crm", "q2": "crm", "q3": "crm", "q4": "shop"}
    result = stratified_mean(per_query, dataset_of)
    assert result.by_dataset == pytest.approx({"crm": 1 / 3, "shop": 0.5})
    assert result.overall == pytest.approx((1 / 3 + 0.5) / 2)  # 0.41666..., not 1.5 / 4


def test_stratified_mean_of_nothing_is_none_and_unknown_dataset_refused():
    assert stratified_mean({}, {}).overall is None
    with pytest.raises(KeyError):
        stratified_mean({"q1": 1.0}, {})


def _tool(index: int, tool_name: str, ok: bool = True, **arguments: Any) -> Step:
    return Step(
        kind="tool",
        index=index,
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        seconds=0.1,
        name=tool_name,
        arguments=arguments,
        ok=ok,
    )


def test_exploratory_sql():
    assert is_exploratory_sql("SELECT * FROM accounts LIMIT 5")
    assert is_exploratory_sql("select column_name from information_schema.columns")
    assert is_exploratory_sql("PRAGMA table_info(cases)")
    assert is_exploratory_sql("DESCRIBE accounts")
    assert not is_exploratory_sql("SELECT count(*) FROM accounts WHERE industry = 'x'")
    assert not is_exploratory_sql("SELECT * FROM accounts")


def test_tool_mix_counts_sql_python_and_exploration():
    steps = [
        _tool(0, "list_db"),
        _tool(1, "read_doc", doc="hints"),
        _tool(2, "query_db", db="crm", sql="SELECT * FROM cases LIMIT 3"),
        _tool(3, "query_db", db="crm", sql="SELECT count(*) FROM cases"),
        _tool(4, "query_db", ok=False, db="crm", sql="SELECT nope"),
        _tool(5, "execute_python", code="print(1)"),
        _tool(6, "return_answer", answer="3"),
    ]
    model_step = steps[0].model_copy(update={"kind": "model", "name": "gpt"})
    mix = tool_mix([model_step, *steps])
    assert (mix.sql, mix.python, mix.other, mix.exploratory) == (3, 1, 3, 3)
    assert mix.calls == 7
    assert mix.failed == 1
    assert mix.exploratory_share == pytest.approx(3 / 7)
    assert tool_mix([]).exploratory_share is None
    total = mix.plus(mix)
    assert (total.sql, total.calls, total.exploratory) == (6, 14, 6)

"""Failure modes classified by code: no answer, a limit hit without one, tool errors only
(before planning), a SQL or Python error in the last steps (runtime); the rest is the judge's."""

from __future__ import annotations

from benchforge.evaluation.dab.failure_modes import classify_by_code, trajectory_text
from tests.support.dab_trials import EXACT_JOIN, SOLVED, result, said, tool


def _code(res):  # type: ignore[no-untyped-def]
    verdict = classify_by_code(res)
    return None if verdict is None else (verdict.mode, verdict.code)


def test_no_answer_is_before_planning():
    res = result([said(0, "I cannot do this.")], None, termination="no_action")
    assert _code(res) == ("before_planning", "no_answer")


def test_limit_without_answer_is_before_planning_turn_limit():
    steps = [tool(i, "query_db", db="sales", sql="select 1") for i in range(4)]
    for termination in ("round_limit", "wall_clock", "repeated_action"):
        assert _code(result(steps, None, termination=termination)) == (
            "before_planning",
            "turn_limit",
        )


def test_only_failed_tool_calls_is_before_planning():
    steps = [tool(0, "list_db", ok=False, output="boom"), tool(1, "query_db", ok=False, db="x")]
    assert _code(result(steps, None, termination="round_limit")) == (
        "before_planning",
        "tool_errors_only",
    )


def test_runtime_error_in_the_final_steps():
    sql_failed = [*SOLVED[:2], tool(2, "query_db", ok=False, output="Binder Error: no col x")]
    verdict = classify_by_code(result([*sql_failed, tool(3, "return_answer")], "3"))
    assert verdict is not None
    assert (verdict.mode, verdict.code) == ("runtime", "sql_error")
    assert "Binder Error" in verdict.reason
    py_failed = [*SOLVED[:2], tool(2, "execute_python", ok=False, output="KeyError: 'id'")]
    assert _code(result(py_failed, "3")) == ("runtime", "python_error")


def test_an_early_error_recovered_from_goes_to_the_judge():
    steps = [
        tool(0, "query_db", ok=False, output="syntax error", db="s", sql="selec"),
        *[tool(i, "query_db", output="ok", db="s", sql="select 1") for i in range(1, 5)],
    ]
    assert _code(result(steps, "4")) is None
    assert _code(result(EXACT_JOIN, "0")) is None


def test_trajectory_text_shows_tools_status_and_clips():
    text = trajectory_text(EXACT_JOIN)
    assert '[1] query_db {"db": "customers", "sql": "select * from contacts"} -> ok: a,b' in text
    long = [said(i, "x" * 400) for i in range(100)]
    clipped = trajectory_text(long, limit=2000)
    assert len(clipped) < 2100 and "middle of the trajectory left out" in clipped

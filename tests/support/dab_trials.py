"""Hand-made ``dab_query`` trials (results and scores) for the DAB metrics, failure-mode and
report tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from benchforge.core.records import TrialScore
from benchforge.core.records.trials import Step, TrialKey, TrialResult

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RUN = "dab-run"


def tool(index: int, tool_name: str, ok: bool = True, output: str = "", **arguments: Any) -> Step:
    return Step(
        kind="tool",
        index=index,
        started_at=T0,
        seconds=0.1,
        name=tool_name,
        arguments=arguments,
        ok=ok,
        output=output,
        error=None if ok else output,
    )


def said(index: int, text: str) -> Step:
    return Step(kind="model", index=index, started_at=T0, seconds=0.2, name="m", output=text)


def key(task_id: str, epoch: int = 0, agent: str = "react-dab", model: str = "m") -> TrialKey:
    return TrialKey(
        suite="dab-crm",
        task_id=task_id,
        task_version="v1",
        agent=agent,
        agent_config_hash="abc",
        model=model,
        epoch=epoch,
    )


def result(
    trajectory: list[Step],
    answer: str | None,
    termination: str = "finished",
    task_id: str = "q1",
    epoch: int = 0,
    agent: str = "react-dab",
) -> TrialResult:
    return TrialResult(
        run_id=RUN,
        key=key(task_id, epoch, agent),
        family="dab_query",
        status="completed",
        termination=termination,  # type: ignore[arg-type]
        answer=answer,
        trajectory=trajectory,
        started_at=T0,
        finished_at=T0,
        wall_s=2.0,
    )


def score(
    res: TrialResult, passed: bool, cost: float | None = 0.01, wall: float = 2.0
) -> TrialScore:
    return TrialScore(
        run_id=RUN,
        key=res.key,
        family="dab_query",
        status="scored",
        metrics={"passed": 100.0 if passed else 0.0},
        primary="passed",
        success=passed,
        termination=res.termination,
        cost_usd=cost,
        llm_calls=1,
        agent_wall_s=wall,
    )


SOLVED = [
    tool(0, "list_db"),
    tool(1, "query_db", output="55", db="sales", sql="select count(*) from accounts"),
    tool(2, "return_answer", output="answer recorded", answer="55"),
]
EXACT_JOIN = [
    tool(0, "list_db"),
    tool(1, "query_db", output="a,b", db="customers", sql="select * from contacts"),
    tool(2, "execute_python", output="0", code="print(0)"),
    tool(3, "return_answer", output="answer recorded", answer="0"),
]
NO_DATA = [said(0, "I think the answer is 12."), tool(1, "return_answer", answer="12")]

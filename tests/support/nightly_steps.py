"""Small summaries of runs, scores and reports, as the nightly's recorded steps return them
(``tests/flows/conftest.py``: ``nightly_steps``)."""

from __future__ import annotations

from benchforge.core.sandbox import default_backend
from benchforge.flows.report import ReportSummary
from benchforge.flows.runs import RunSummary, ScoreSummary

ISOLATION = default_backend().isolation()


def run_summary(run_id: str, *, ran: int = 0, mock: bool = False) -> RunSummary:
    # constructed: only the fields the nightly's summary reads (other fields are others' work)
    return RunSummary.model_construct(
        run_id=run_id,
        uri=f"/a/runs/{run_id}",
        trials=2,
        skipped=2 - ran,
        ran=ran,
        completed=2,
        infra_errors=0,
        seconds=1.0,
        chunks=0,
        mock_llm=mock,
        isolation=ISOLATION,
        terminations={},
    )


def report_summary(run_id: str, *, mock: bool = False, judge: bool = False) -> ReportSummary:
    return ReportSummary(
        run_id=run_id, markdown="", uris={}, mock_llm=mock, mock_judge=judge, judged=judge
    )


def score_summary(run_id: str) -> ScoreSummary:
    return ScoreSummary.model_construct(
        run_id=run_id, scored=0, skipped=2, statuses={}, seconds=0.1
    )

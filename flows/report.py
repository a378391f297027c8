"""Flow ``report``: the leaderboard of a scored run, saved (markdown, HTML, JSON) beside the
run and published as a Prefect artifact."""

from __future__ import annotations

from prefect import flow
from prefect.artifacts import create_markdown_artifact
from pydantic import BaseModel

from agents.runs.store import RunStore
from benchforge.artifacts import open_store
from benchforge.errors import BenchforgeError
from benchforge.settings import load_settings
from evaluation.leaderboard import build_leaderboard, to_html, to_json, to_markdown


class ReportSummary(BaseModel):
    run_id: str
    markdown: str
    uris: dict[str, str]
    mock_llm: bool


@flow(name="report")
def report(run_id: str) -> ReportSummary:
    settings = load_settings()
    run = RunStore(open_store(settings.artifact_root), run_id)
    spec = run.require_spec()
    scores = run.read_scores()
    if not scores:
        raise BenchforgeError(f"run {run_id!r} has no scores yet: run `benchforge score-run`")
    board = build_leaderboard(scores, run_id=run_id, mock_llm_used=spec.mock_llm or None)
    markdown = to_markdown(board)
    uris = {}
    for name, payload in (
        ("leaderboard.md", markdown),
        ("leaderboard.html", to_html(board)),
        ("leaderboard.json", to_json(board)),
    ):
        uris[name] = run.store.uri(run.write_report(name, payload.encode()))
    key = "leaderboard-" + "".join(c if c.isalnum() else "-" for c in run_id.lower())
    create_markdown_artifact(key=key[:100], markdown=markdown, description=f"run {run_id}")
    return ReportSummary(run_id=run_id, markdown=markdown, uris=uris, mock_llm=board.mock_llm_used)

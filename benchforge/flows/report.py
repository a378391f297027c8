"""Flow ``report``: the leaderboard of a scored run, saved (markdown, HTML, JSON) beside the
run and published as Prefect artifacts.

:func:`publish_report` is a plain function so the flows that end in a report (``nightly``,
``report``) publish the artifacts on their *own* flow run, where operators look, not on a
subflow run with a generated name.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from prefect import flow
from prefect.artifacts import create_link_artifact, create_markdown_artifact
from pydantic import BaseModel

from benchforge.core.artifacts import open_store
from benchforge.core.errors import BenchforgeError
from benchforge.core.settings import BenchforgeSettings, load_settings
from benchforge.evaluation.families import families
from benchforge.evaluation.leaderboard import (
    build_leaderboard,
    judge_models,
    read_calibrations,
    to_html,
    to_json,
    to_markdown,
)
from benchforge.harness.run_report import run_report_context
from benchforge.harness.store import RunStore


class ReportSummary(BaseModel):
    run_id: str
    markdown: str
    uris: dict[str, str]
    mock_llm: bool  # a stored trial of the run called the mock LLM server
    mock_judge: bool = False  # a stored judged score came from the mock server's judge
    judged: bool = False  # the run has judged metrics


def link_url(uri: str, settings: BenchforgeSettings) -> str:
    """Where a person opens a stored artifact: on S3, its HTTP(S) address (the configured
    endpoint, path-style, e.g. MinIO; else the bucket's AWS address), never a path on the
    worker that wrote it; a local artifact root: a ``file://`` URL of the path."""
    if uri.startswith("s3://"):
        bucket, _, key = uri[len("s3://") :].partition("/")
        if settings.s3_endpoint_url:
            return f"{settings.s3_endpoint_url.rstrip('/')}/{bucket}/{quote(key)}"
        region = f".{settings.s3_region}" if settings.s3_region else ""
        return f"https://{bucket}.s3{region}.amazonaws.com/{quote(key)}"
    if "://" in uri:
        return uri
    return Path(uri).resolve().as_uri()


def artifact_key(prefix: str, run_id: str) -> str:
    """Prefect artifact keys allow lower-case letters, digits and dashes."""
    return (prefix + "-" + "".join(c if c.isalnum() else "-" for c in run_id.lower()))[:100]


def publish_report(run_id: str) -> ReportSummary:
    """Writes the leaderboard of ``run_id`` beside the run and publishes it (markdown) and a
    link to its HTML page as artifacts of the calling flow run."""
    settings = load_settings()
    run = RunStore(open_store(settings.artifact_root), run_id)
    run.require_spec()
    scores = run.read_scores()
    if not scores:
        raise BenchforgeError(f"run {run_id!r} has no scores yet: run `benchforge score-run`")
    # The mock label comes from the trials that called the mock server, not from the run's
    # configuration: an oracle-only run calls no model at all.
    # Judged metrics name their judges and whether each passed calibration (stored here too).
    calibrations = read_calibrations(run.store, judge_models(scores))
    board = build_leaderboard(scores, run_id=run_id, calibrations=calibrations)
    markdown = to_markdown(board)
    pages = [("leaderboard.html", to_html(board)), ("leaderboard.json", to_json(board))]
    # Each family with scores in the run adds its own section (by family name: a stable order)
    for name, family in sorted(families().items()):
        ours = [s for s in scores if s.family == name]
        section = family.run_report(run_report_context(run, settings, ours)) if ours else None
        if section is not None:
            markdown = markdown.rstrip("\n") + "\n\n" + section.markdown
            pages += list(section.pages.items())
    uris = {}
    for name, payload in [("leaderboard.md", markdown), *pages]:
        uris[name] = run.store.uri(run.write_report(name, payload.encode()))
    create_markdown_artifact(
        key=artifact_key("leaderboard", run_id), markdown=markdown, description=f"run {run_id}"
    )
    html = uris["leaderboard.html"]
    create_link_artifact(
        key=artifact_key("leaderboard-html", run_id),
        link=link_url(html, settings),
        link_text=f"leaderboard of {run_id} (HTML, with plots)",
        description=f"run {run_id}: {html}",
    )
    return ReportSummary(
        run_id=run_id,
        markdown=markdown,
        uris=uris,
        mock_llm=board.mock_llm_used,
        mock_judge=board.mock_judge_used,
        judged=bool(board.judges) or board.mock_judge_used,
    )


@flow(name="report", flow_run_name="report-{run_id}")
def report(run_id: str) -> ReportSummary:
    """The leaderboard of a scored run: markdown, HTML and JSON beside the run, and artifacts.

    Args:
        run_id: a run that `score_run` has scored.
    """
    return publish_report(run_id)

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

from benchforge.agents.dsstar.usage import rounds_to_sufficiency, usage_by_role
from benchforge.core.artifacts import open_store
from benchforge.core.catalogue import catalogue
from benchforge.core.errors import BenchforgeError
from benchforge.core.records import TrialScore
from benchforge.core.settings import BenchforgeSettings, load_settings
from benchforge.evaluation.dab import report as dab
from benchforge.evaluation.dab.spec import DabQueryTask
from benchforge.evaluation.explore import pages as explore
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.lake import report as lake
from benchforge.evaluation.lake.spec import LakePipelineTask
from benchforge.evaluation.leaderboard import (
    build_leaderboard,
    judge_models,
    read_calibrations,
    to_html,
    to_json,
    to_markdown,
)
from benchforge.evaluation.tasks import load_task
from benchforge.harness.judging import judge_session
from benchforge.harness.sandbox_policy import work_root
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
    dab_report = dab_section(run, settings, scores)
    if dab_report is not None:
        dab_markdown = dab.to_markdown(dab_report)
        markdown = markdown.rstrip("\n") + "\n\n" + dab_markdown
        pages += [
            ("dab-report.md", dab_markdown),
            ("dab-report.html", dab.to_html(dab_report)),
            ("dab-report.json", dab_report.model_dump_json(indent=1)),
        ]
    explore_report = explore.explore_run_report(run_id, scores)
    if explore_report is not None:
        explore_markdown = explore.to_markdown(explore_report)
        markdown = markdown.rstrip("\n") + "\n\n" + explore_markdown
        pages += [
            ("explore-report.md", explore_markdown),
            ("explore-report.html", explore.to_html(explore_report)),
            ("explore-report.json", explore_report.model_dump_json(indent=1)),
        ]
    lake_report = lake_section(run, settings, scores)
    if lake_report is not None:
        lake_markdown = lake.to_markdown(lake_report)
        markdown = markdown.rstrip("\n") + "\n\n" + lake_markdown
        pages += [
            ("lake-report.md", lake_markdown),
            ("lake-report.html", lake.to_html(lake_report)),
            ("lake-report.json", lake_report.model_dump_json(indent=1)),
        ]
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


def dab_section(
    run: RunStore, settings: BenchforgeSettings, scores: list[TrialScore]
) -> dab.DabReport | None:
    """The run's DAB report (``dab_query`` trials only; None without any): the trials' results,
    their tasks' questions and datasets, and the judge for failure modes (the mock server's
    without an API key), opened only when a failed trial needs it."""
    ours = [s for s in scores if s.family == dab.FAMILY]
    if not ours:
        return None
    trials: list[dab.Trial] = [
        (s, run.read_result(s.key.slug) if run.has_result(s.key.slug) else None) for s in ours
    ]
    root = catalogue(settings).path(run.require_spec().tasks_root)
    specs = {s.key.task_id: load_task(root / s.key.suite / s.key.task_id).spec for s, _ in trials}
    questions = {t: spec.question for t, spec in specs.items() if isinstance(spec, DabQueryTask)}
    dataset_of = {t: spec.dataset.location or spec.dataset.domain for t, spec in specs.items()}

    def build(judge: Judge | None) -> dab.DabReport:
        return Judge.run(
            dab.dab_run_report(
                run.run_id, trials, questions=questions, dataset_of=dataset_of, judge=judge
            )
        )

    if not dab.failed(trials):
        return build(None)
    with judge_session(settings, work_root(settings)) as (judge, _mock):
        return build(judge)


def lake_section(
    run: RunStore, settings: BenchforgeSettings, scores: list[TrialScore]
) -> lake.LakeReport | None:
    """The run's lake report (``lake_pipeline`` trials only; None without any): the trials'
    results, their tasks' difficulty, and each trial's model calls by role (ds-star's roles)."""
    ours = [s for s in scores if s.family == lake.FAMILY]
    if not ours:
        return None
    trials: list[lake.Trial] = [
        (s, run.read_result(s.key.slug) if run.has_result(s.key.slug) else None) for s in ours
    ]
    root = catalogue(settings).path(run.require_spec().tasks_root)
    difficulty = {}
    for score, _ in trials:
        spec = load_task(root / score.key.suite / score.key.task_id).spec
        if isinstance(spec, LakePipelineTask):
            difficulty[score.key.task_id] = spec.difficulty
    facts = {}
    for score, result in trials:
        if result is None:
            continue
        usage = usage_by_role(result.trajectory)
        facts[score.key.slug] = lake.TrialFacts(
            calls_by_role={role: u.calls for role, u in usage.items()},
            cost_by_role={role: u.cost_usd for role, u in usage.items()},
            rounds=rounds_to_sufficiency(result.trajectory),
        )
    return lake.build_lake_report(run.run_id, trials, difficulty_of=difficulty, facts=facts)


@flow(name="report", flow_run_name="report-{run_id}")
def report(run_id: str) -> ReportSummary:
    """The leaderboard of a scored run: markdown, HTML and JSON beside the run, and artifacts.

    Args:
        run_id: a run that `score_run` has scored.
    """
    return publish_report(run_id)

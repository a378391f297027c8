"""Flow ``nightly``: synthesize (or reuse) -> build gold -> verify tasks -> run the suite ->
score -> report. Every parameter is typed, so a backfill for a past date or another dataset is
a custom run of the deployment from the Prefect UI (see infra/)."""

from __future__ import annotations

from datetime import date

from prefect import flow, get_run_logger
from pydantic import BaseModel

from agents.protocol import AgentLimits
from benchforge.artifacts import open_store
from benchforge.settings import load_settings
from evaluation.tasks.loader import PROJECT_ROOT
from flows.datasets import local_dataset
from flows.gold import build_gold, gold_key
from flows.report import ReportSummary, report
from flows.runs import RunSummary, ScoreSummary, run_suite, score_run, suite_tasks, work_root
from flows.tasks import verify_tasks

DEFAULT_MOCK_MODEL = "mock-script:react-de-crm-sla-solve"
DEFAULT_REAL_MODEL = "gpt-4.1-mini"


class NightlyResult(BaseModel):
    run_id: str
    datasets: dict[str, str]
    gold: dict[str, str]
    verified_tasks: int
    run: RunSummary
    scores: ScoreSummary
    report: ReportSummary


@flow(name="nightly")
def nightly(
    run_date: date | None = None,
    suites: list[str] | None = None,
    agents: list[str] | None = None,
    models: list[str] | None = None,
    epochs: int = 1,
    datasets: dict[str, str] | None = None,
    verify: bool = True,
    verify_mutations: bool = False,
    concurrency: int = 4,
    limits: AgentLimits | None = None,
    run_id: str | None = None,
) -> NightlyResult:
    """The nightly evaluation. ``run_date`` (default today) names the run ``nightly-<date>``:
    rerunning a date resumes it. ``datasets`` maps a domain to a dataset location (folder or
    s3:// URI) for backfills on another dataset version; default: each task's own
    (domain, scale, seed), synthesized once and reused. ``models`` default to the Benchforge
    mock server's scripted ``react-de`` when no API key is configured. ``verify_mutations``
    adds the exhaustive checks to verification: the mutation and reward-hack catalogues."""
    logger = get_run_logger()
    settings = load_settings()
    suites = suites or ["de-crm"]
    agents = agents or ["oracle", "null", "react-de"]
    if models is None:
        models = [DEFAULT_REAL_MODEL if settings.openai_api_key else DEFAULT_MOCK_MODEL]
    run_id = run_id or f"nightly-{(run_date or date.today()).isoformat()}"
    tasks = suite_tasks("task_specs", suites, None)
    work = work_root(settings)
    store = open_store(settings.artifact_root)

    dataset_dirs: dict[str, str] = {}
    gold: dict[str, str] = {}
    for loaded in tasks:
        ref = loaded.spec.dataset
        if ref.domain in dataset_dirs:
            continue
        folder = local_dataset(
            ref.domain,
            (datasets or {}).get(ref.domain),
            work / "datasets" / ref.domain,
            ref.scale,
            ref.seed,
        )
        dataset_dirs[ref.domain] = str(folder)
        key = gold_key(ref.domain, folder, PROJECT_ROOT / loaded.spec.repo)
        gold[ref.domain] = (
            store.uri(key)
            if store.exists(f"{key}/build.json")
            else build_gold(domain=ref.domain, dataset=str(folder))
        )
    verified = 0
    if verify:
        for suite in suites:
            verified += len(
                verify_tasks(
                    path=f"task_specs/{suite}",
                    work=str(work),
                    mutations=verify_mutations,
                    hacks=verify_mutations,
                )
            )
    summary = run_suite(
        suites=suites,
        agents=agents,
        models=models,
        epochs=epochs,
        concurrency=concurrency,
        run_id=run_id,
        limits=limits,
        datasets=dataset_dirs,
    )
    scores = score_run(run_id=run_id)
    board = report(run_id=run_id)
    logger.info(
        "nightly %s: %d trials, report %s",
        run_id,
        summary.trials,
        board.uris.get("leaderboard.html"),
    )
    return NightlyResult(
        run_id=run_id,
        datasets=dataset_dirs,
        gold=gold,
        verified_tasks=verified,
        run=summary,
        scores=scores,
        report=board,
    )

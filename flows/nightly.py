"""Flow ``nightly``: check the request -> synthesize (or reuse) -> build gold -> verify tasks ->
run the suite -> score -> report. Every parameter is typed and described, so a backfill for a
past date or another dataset is a custom run of the deployment from the Prefect UI (see
infra/)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.runtime import flow_run
from pydantic import BaseModel, Field

from benchforge.agents.registry import AgentSpelling
from benchforge.core.artifacts import open_store
from benchforge.core.records import AgentLimits, LlmOptions
from benchforge.core.settings import load_settings
from benchforge.flows.calibrate import CalibrationCheck, calibrate_if_changed
from benchforge.flows.datasets import resolve_datasets, resolve_heldout
from benchforge.flows.defaults import (
    NIGHTLY_AGENTS,
    NIGHTLY_DA_AGENTS,
    NIGHTLY_DA_SUITES,
    NIGHTLY_SUITES,
    nightly_da_models,
    nightly_models,
)
from benchforge.flows.gold import build_gold, gold_key
from benchforge.flows.report import ReportSummary, artifact_key, publish_report
from benchforge.flows.runs import RunId, RunSummary, ScoreSummary, run_suite, score_run
from benchforge.flows.verify import verify_tasks
from benchforge.harness.datasets import datasets_by_domain
from benchforge.harness.identity import check_rerun, run_identity
from benchforge.harness.infra_errors import fail_on_infra_errors, kept
from benchforge.harness.preflight import check_request
from benchforge.harness.sandbox_policy import work_root
from benchforge.harness.store import RunStore


class JudgedNightly(BaseModel):
    """The nightly's run of judged suites (analysis tasks): its own run, agents and report."""

    run_id: str
    verified_tasks: int
    run: RunSummary
    scores: ScoreSummary
    report: ReportSummary


class NightlyResult(BaseModel):
    run_id: str
    run_date: date
    datasets: dict[str, str]
    gold: dict[str, str]
    verified_tasks: int
    run: RunSummary
    scores: ScoreSummary
    report: ReportSummary
    judged: JudgedNightly | None = None
    calibration: CalibrationCheck | None = None  # None: no labelled cases configured


def scheduled_date() -> date:
    """The date the flow run was scheduled for (UTC): a retry or a late pickup of last
    night's run resumes that night's run instead of starting one named after today."""
    start = flow_run.scheduled_start_time
    return datetime.fromtimestamp(start.timestamp(), UTC).date()


def nightly_run_id(run_date: date, datasets: dict[str, str]) -> str:
    """``nightly-<date>``; a backfill on other datasets gets its own run,
    ``nightly-<date>-<8 hex digits of the datasets>``, never the default run's results."""
    if not datasets:
        return f"nightly-{run_date.isoformat()}"
    digest = hashlib.sha256(json.dumps(datasets, sort_keys=True).encode()).hexdigest()[:8]
    return f"nightly-{run_date.isoformat()}-{digest}"


def _flow_run_name() -> str:
    params = flow_run.parameters
    if params.get("run_id"):
        return str(params["run_id"])
    given = params.get("run_date")
    return f"nightly-{given or scheduled_date().isoformat()}"


@flow(name="nightly", flow_run_name=_flow_run_name)
def nightly(
    run_date: date | None = None,
    suites: list[str] | None = None,
    agents: list[AgentSpelling] | None = None,
    models: list[str] | None = None,
    epochs: Annotated[int, Field(ge=1, le=100)] = 1,
    datasets: dict[str, str] | None = None,
    verify: bool = True,
    verify_mutations: bool = False,
    visible_scores: bool = False,
    concurrency: Annotated[int, Field(ge=1, le=256)] = 4,
    limits: AgentLimits | None = None,
    run_id: RunId | None = None,
    da_suites: list[str] | None = None,
    da_agents: list[AgentSpelling] | None = None,
    da_models: list[str] | None = None,
    calibration_cases: str | None = None,
    calibration_labels: list[str] | None = None,
    judge_models: list[str] | None = None,
) -> NightlyResult:
    """The nightly evaluation. Every parameter is checked before any data work; rerunning a
    date resumes that date's run, and resuming with other inputs is refused.

    Args:
        run_date: the night this run is for (names the run nightly-DATE); default the date
            the flow run was scheduled for, so a retry or late pickup resumes it.
        suites: task suites under task_specs/ (default de-crm).
        agents: agents to run (default oracle, null, react-de): oracle, null, react-de,
            single-call, or NAME=CONFIG.yaml (command=AGENT.yaml for an external agent).
        models: models for agents that call one; default gpt-4.1-mini with an API key, else
            the mock server's scripted react-de (mock-script:react-de-crm-sla-solve).
        epochs: trials per (task, agent, model); pass@k needs k epochs.
        datasets: domain -> dataset folder or s3:// prefix, for a backfill on another dataset
            version (the run is then nightly-DATE-<digest>); default each task's generated
            dataset, synthesized once and reused.
        verify: self-verify every task (gold scores 100, do-nothing 0) before the run.
        verify_mutations: add the exhaustive checks to verification: the mutation and
            reward-hack catalogues, and the judged reward-hack catalogue on the judged suites
            (the scheduled nightly does).
        visible_scores: also score each DE trial on the visible dataset (its ``_visible``
            columns, which show answers fitted to the data the agent saw). Off by default: the
            leaderboard ranks by the held-out seed, and the visible scores would double the
            night's scoring and gold builds; ``score-run --rescore --visible-scores`` adds
            them.
        concurrency: trials at once.
        limits: per-trial budgets (rounds, seconds, memory).
        run_id: name the run yourself (resuming it needs the same inputs); default
            nightly-DATE.
        da_suites: judged analysis suites run beside the DE run, as a run of their own
            (RUN_ID-da) with their own agents (default da-crm; [] for none).
        da_agents: agents of the analysis run (default oracle, null, react-da).
        da_models: models of the analysis run; default gpt-4.1-mini with an API key, else the
            mock server's scripted react-da (mock-script:react-da-report).
        calibration_cases: labelled judge cases (`benchforge judge export-labelling`); with
            calibration_labels, the judges are re-calibrated first whenever the judge model,
            its prompts, a rubric or the labels changed (else skipped).
        calibration_labels: the human labels of calibration_cases (CSV or JSON lines).
        judge_models: the judge models calibrated (default: the scoring judge).
    """
    logger = get_run_logger()
    settings = load_settings()
    suites = suites or list(NIGHTLY_SUITES)
    agents = list(agents or NIGHTLY_AGENTS)
    overrides = dict(datasets or {})
    limits = limits or AgentLimits()
    if models is None:
        models = nightly_models(settings.openai_api_key is not None)
    has_key = settings.openai_api_key is not None
    request = check_request("task_specs", suites, None, agents, models, overrides, has_key)
    da_suites = list(NIGHTLY_DA_SUITES if da_suites is None else da_suites)
    da_agents = list(da_agents or NIGHTLY_DA_AGENTS)
    da_models = list(da_models if da_models is not None else nightly_da_models(has_key))
    if da_suites:
        check_request("task_specs", da_suites, None, da_agents, da_models, overrides, has_key)
    run_date = run_date or scheduled_date()
    run_id = run_id or nightly_run_id(run_date, overrides)
    store = open_store(settings.artifact_root)
    work = work_root(settings)

    # Datasets first (they are inputs of the run's identity), then refuse a resume with other
    # inputs before the gold builds, verification and trials.
    dataset_dirs = resolve_datasets(request.tasks, overrides, work)
    heldout_dirs = resolve_heldout(request.tasks, overrides, work)
    identity = run_identity(
        request.tasks,
        request.agents,
        models,
        epochs,
        limits,
        LlmOptions(),
        dataset_dirs,
        heldout_dirs,
    )
    previous = RunStore(store, run_id).read_spec()
    check_rerun(previous, identity, (sorted(suites), agents, models, epochs))

    # Gold per domain, on the dataset the run resolved for the domain's tasks.
    by_domain = datasets_by_domain(request.tasks, dataset_dirs)
    repos = {t.spec.dataset.domain: t.repo for t in reversed(request.tasks)}  # first task's
    gold: dict[str, str] = {}
    for domain, folder in by_domain.items():
        key = gold_key(domain, Path(folder), repos[domain])
        gold[domain] = (
            store.uri(key)
            if store.exists(f"{key}/build.json")
            else build_gold(domain=domain, dataset=folder)
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
                    datasets=overrides,
                )
            )
    summary = kept(run_suite)(
        suites=suites,
        agents=agents,
        models=models,
        epochs=epochs,
        concurrency=concurrency,
        run_id=run_id,
        limits=limits,
        datasets=overrides,
    )
    scores = kept(score_run)(run_id=run_id, visible_scores=visible_scores)
    board = publish_report(run_id)
    calibration = None
    if calibration_cases and calibration_labels:
        calibration = calibrate_if_changed(
            calibration_cases, list(calibration_labels), judge_models=judge_models
        )
    judged = None
    if da_suites:
        judged = _judged_run(
            f"{run_id}-da",
            da_suites,
            da_agents,
            da_models,
            epochs,
            concurrency,
            limits,
            overrides,
            verify,
            verify_mutations,
            work,
        )
    create_markdown_artifact(
        key=artifact_key("nightly", run_id),
        markdown=_nightly_markdown(run_id, run_date, by_domain, gold, verified, summary),
        description=f"nightly {run_date.isoformat()}",
    )
    logger.info(
        "nightly %s: %d trials, report %s",
        run_id,
        summary.trials,
        board.uris.get("leaderboard.html"),
    )
    result = NightlyResult(
        run_id=run_id,
        run_date=run_date,
        datasets=by_domain,
        gold=gold,
        verified_tasks=verified,
        run=summary,
        scores=scores,
        report=board,
        judged=judged,
        calibration=calibration,
    )
    return fail_on_infra_errors(result)  # FAILED past max_infra_error_share, all written


def _judged_run(
    run_id: str,
    suites: list[str],
    agents: list[AgentSpelling],
    models: list[str],
    epochs: int,
    concurrency: int,
    limits: AgentLimits,
    overrides: dict[str, str],
    verify: bool,
    verify_exhaustive: bool,
    work: Path,
) -> JudgedNightly:
    """Verifies, runs, scores (through the judge) and reports the judged suites. As for the
    executed suites, the judged reward-hack catalogue (40 hostile reports per task, each judged)
    runs only when the exhaustive checks were asked for."""
    verified = 0
    if verify:
        for suite in suites:
            verified += len(
                verify_tasks(
                    path=f"task_specs/{suite}",
                    work=str(work),
                    mutations=verify_exhaustive,
                    hacks=verify_exhaustive,
                    datasets=overrides,
                )
            )
    summary = kept(run_suite)(
        suites=suites,
        agents=agents,
        models=models,
        epochs=epochs,
        concurrency=concurrency,
        run_id=run_id,
        limits=limits,
        datasets=overrides,
    )
    scores = kept(score_run)(run_id=run_id)
    return JudgedNightly(
        run_id=run_id,
        verified_tasks=verified,
        run=summary,
        scores=scores,
        report=publish_report(run_id),
    )


def _nightly_markdown(
    run_id: str,
    run_date: date,
    datasets: dict[str, str],
    gold: dict[str, str],
    verified: int,
    run: RunSummary,
) -> str:
    lines = [
        f"# Nightly {run_date.isoformat()} (`{run_id}`)",
        "",
        "| domain | dataset | gold |",
        "|---|---|---|",
    ]
    lines += [f"| {d} | `{datasets[d]}` | `{gold[d]}` |" for d in sorted(datasets)]
    ended = ", ".join(f"{k} {v}" for k, v in sorted(run.terminations.items())) or "-"
    lines += [
        "",
        f"- tasks verified: {verified}",
        f"- trials: {run.trials} ({run.ran} run now, {run.skipped} already done), "
        f"infra errors: {run.infra_errors}",
        f"- terminations: {ended}",
        f"- sandbox: {run.isolation.backend}",
        f"- mock LLM server: {'yes' if run.mock_llm else 'no'}",
    ]
    return "\n".join(lines)

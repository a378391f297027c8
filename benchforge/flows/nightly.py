"""Flow ``nightly``: check the request -> synthesize (or reuse) -> build gold -> verify tasks ->
run the suite -> score -> report. Every parameter is typed and described, so a backfill for a
past date or another dataset is a custom run of the deployment from the Prefect UI (see
infra/)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any

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
from benchforge.flows.liveness import beat
from benchforge.flows.report import ReportSummary, artifact_key, publish_report
from benchforge.flows.runs import RunId, RunSummary, ScoreSummary, run_suite, score_run
from benchforge.flows.verify import verify_tasks
from benchforge.harness.datasets import datasets_by_domain
from benchforge.harness.identity import check_rerun, run_identity
from benchforge.harness.infra_errors import fail_on_infra_errors, kept
from benchforge.harness.preflight import CheckedRequest, check_request
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


# A calendar date, YYYY-MM-DD. The deployment's parameter schema carries it as a pattern: the
# server checks patterns when it creates a run (enforce_parameter_schema), but Prefect 3.8 does
# not check ``format: date`` there (its validator is called without a format checker), so
# without the pattern "2026-13-45" would be accepted and fail on the worker.
DATE_PATTERN = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"
RunDate = Annotated[date, Field(json_schema_extra={"pattern": DATE_PATTERN})]


def nightly_run_id(
    run_date: date, datasets: Mapping[str, str], task_ids: list[str] | None = None
) -> str:
    """``nightly-<date>``; a backfill on other datasets, or a nightly of only some tasks, gets
    its own run, ``nightly-<date>-<8 hex digits of the datasets (and task ids)>``, never the
    default run's results."""
    if not datasets and not task_ids:
        return f"nightly-{run_date.isoformat()}"
    payload: object = dict(datasets)
    if task_ids:  # datasets alone keep the digest runs stored before task_ids existed got
        payload = {"datasets": dict(datasets), "task_ids": sorted(set(task_ids))}
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:8]
    return f"nightly-{run_date.isoformat()}-{digest}"


def planned_run_id(parameters: Mapping[str, Any], scheduled: date) -> str:
    """The run id a nightly flow run with ``parameters`` (as the API holds them: a date is a
    string) scheduled on ``scheduled`` will use: also the name of its flow run, so the UI tells
    two backfills of one date apart. Unreadable values fall back to the scheduled date (the
    run itself then refuses them with the reason)."""
    if parameters.get("run_id"):
        return str(parameters["run_id"])
    given = parameters.get("run_date")
    run_date = scheduled
    if isinstance(given, date):
        run_date = given
    elif isinstance(given, str):
        with contextlib.suppress(ValueError):
            run_date = date.fromisoformat(given)
    datasets = parameters.get("datasets") or {}
    task_ids = parameters.get("task_ids") or None
    if not isinstance(datasets, Mapping) or not isinstance(task_ids, list | None):
        return f"nightly-{run_date.isoformat()}"
    return nightly_run_id(run_date, {str(k): str(v) for k, v in datasets.items()}, task_ids)


def _flow_run_name() -> str:
    return planned_run_id(flow_run.parameters, scheduled_date())


@dataclass(frozen=True)
class NightlyRequest:
    """What a nightly's parameters resolved to, checked (no data work yet)."""

    suites: list[str]
    agents: list[str]
    models: list[str]
    request: CheckedRequest
    da_suites: list[str]
    da_agents: list[str]
    da_models: list[str]


def check_nightly(
    suites: list[str] | None = None,
    task_ids: list[str] | None = None,
    agents: list[str] | None = None,
    models: list[str] | None = None,
    datasets: dict[str, str] | None = None,
    da_suites: list[str] | None = None,
    da_task_ids: list[str] | None = None,
    da_agents: list[str] | None = None,
    da_models: list[str] | None = None,
) -> NightlyRequest:
    """Every cheap check of a nightly's request (suites, task ids, agents, models, datasets of
    both runs), with the defaults filled in: what the flow does first, and what
    ``benchforge schedule add`` does before it creates a schedule. Raises ConfigError."""
    has_key = load_settings().openai_api_key is not None
    suites = list(suites or NIGHTLY_SUITES)
    agents = list(agents or NIGHTLY_AGENTS)
    models = list(models) if models is not None else nightly_models(has_key)
    overrides = dict(datasets or {})
    request = check_request("task_specs", suites, task_ids, agents, models, overrides, has_key)
    da_suites = list(NIGHTLY_DA_SUITES if da_suites is None else da_suites)
    da_agents = list(da_agents or NIGHTLY_DA_AGENTS)
    da_models = list(da_models if da_models is not None else nightly_da_models(has_key))
    if da_suites:
        check_request(
            "task_specs", da_suites, da_task_ids, da_agents, da_models, overrides, has_key
        )
    return NightlyRequest(suites, agents, models, request, da_suites, da_agents, da_models)


@flow(name="nightly", flow_run_name=_flow_run_name, on_running=[beat])
def nightly(
    run_date: RunDate | None = None,
    suites: list[str] | None = None,
    task_ids: list[str] | None = None,
    agents: list[AgentSpelling] | None = None,
    models: list[str] | None = None,
    epochs: Annotated[int, Field(ge=1, le=100)] = 1,
    datasets: dict[str, str] | None = None,
    verify: bool = True,
    verify_mutations: bool = False,
    verify_hacks: bool | None = None,
    visible_scores: bool = False,
    concurrency: Annotated[int, Field(ge=1, le=256)] = 4,
    score_concurrency: Annotated[int, Field(ge=1, le=64)] = 2,
    limits: AgentLimits | None = None,
    run_id: RunId | None = None,
    da_suites: list[str] | None = None,
    da_task_ids: list[str] | None = None,
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
        task_ids: only these tasks of the suites (verified, run and scored); default all. The
            run is then nightly-DATE-<digest>, apart from the whole suite's.
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
        verify_hacks: the reward-hack catalogues on their own (default: as verify_mutations).
        visible_scores: also score each DE trial on the visible dataset (its ``_visible``
            columns, which show answers fitted to the data the agent saw). Off by default: the
            leaderboard ranks by the held-out seed, and the visible scores would double the
            night's scoring and gold builds; ``score-run --rescore --visible-scores`` adds
            them.
        concurrency: trials at once.
        score_concurrency: scoring chunks at once (score_run's workers), in both runs.
        limits: per-trial budgets (rounds, seconds, memory).
        run_id: name the run yourself (resuming it needs the same inputs); default
            nightly-DATE.
        da_suites: judged analysis suites run beside the DE run, as a run of their own
            (RUN_ID-da) with their own agents (default da-crm; [] for none).
        da_agents: agents of the analysis run (default oracle, null, react-da).
        da_models: models of the analysis run; default gpt-4.1-mini with an API key, else the
            mock server's scripted react-da (mock-script:react-da-report).
        da_task_ids: only these tasks of da_suites; default all.
        calibration_cases: labelled judge cases (`benchforge judge export-labelling`); with
            calibration_labels, the judges are re-calibrated first whenever the judge model,
            its prompts, a rubric or the labels changed (else skipped).
        calibration_labels: the human labels of calibration_cases (CSV or JSON lines).
        judge_models: the judge models calibrated (default: the scoring judge).
    """
    logger = get_run_logger()
    settings = load_settings()
    overrides = dict(datasets or {})
    limits = limits or AgentLimits()
    checked = check_nightly(
        suites, task_ids, agents, models, overrides, da_suites, da_task_ids, da_agents, da_models
    )
    suites, agents, models, request = (
        checked.suites,
        checked.agents,
        checked.models,
        checked.request,
    )
    hacks = verify_mutations if verify_hacks is None else verify_hacks
    run_date = run_date or scheduled_date()
    run_id = run_id or nightly_run_id(run_date, overrides, task_ids)
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
                    hacks=hacks,
                    datasets=overrides,
                    task_ids=_of_suite(request, suite) if task_ids else None,
                )
            )
    summary = kept(run_suite)(
        suites=suites,
        agents=agents,
        models=models,
        epochs=epochs,
        concurrency=concurrency,
        run_id=run_id,
        task_ids=task_ids,
        limits=limits,
        datasets=overrides,
    )
    scores = kept(score_run)(
        run_id=run_id, visible_scores=visible_scores, workers=score_concurrency
    )
    board = publish_report(run_id)
    calibration = None
    if calibration_cases and calibration_labels:
        calibration = calibrate_if_changed(
            calibration_cases, list(calibration_labels), judge_models=judge_models
        )
    judged = None
    if checked.da_suites:
        judged = _judged_run(
            f"{run_id}-da",
            JudgedRequest(
                suites=checked.da_suites,
                task_ids=da_task_ids,
                agents=checked.da_agents,
                models=checked.da_models,
                epochs=epochs,
                concurrency=concurrency,
                score_concurrency=score_concurrency,
                limits=limits,
                datasets=overrides,
                verify=verify,
                mutations=verify_mutations,
                hacks=hacks,
            ),
            work,
        )
    create_markdown_artifact(
        key=artifact_key("nightly", run_id),
        markdown=nightly_markdown(
            run_id, run_date, by_domain, gold, verified, summary, board, judged
        ),
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


class JudgedRequest(BaseModel):
    """The judged run's side of a nightly's parameters."""

    suites: list[str]
    task_ids: list[str] | None
    agents: list[str]
    models: list[str]
    epochs: int
    concurrency: int
    score_concurrency: int
    limits: AgentLimits
    datasets: dict[str, str]
    verify: bool
    mutations: bool
    hacks: bool


def _of_suite(request: CheckedRequest, suite: str) -> list[str]:
    """The task ids of ``request`` in ``suite`` (a nightly of some tasks verifies only them)."""
    return [t.spec.id for t in request.tasks if t.spec.suite == suite]


def _judged_run(run_id: str, asked: JudgedRequest, work: Path) -> JudgedNightly:
    """Verifies, runs, scores (through the judge) and reports the judged suites. As for the
    executed suites, the judged reward-hack catalogue (40 hostile reports per task, each judged)
    runs only when the exhaustive checks were asked for."""
    verified = 0
    if asked.verify:
        for suite in asked.suites:
            verified += len(
                verify_tasks(
                    path=f"task_specs/{suite}",
                    work=str(work),
                    mutations=asked.mutations,
                    hacks=asked.hacks,
                    datasets=asked.datasets,
                    task_ids=asked.task_ids,
                )
            )
    summary = kept(run_suite)(
        suites=asked.suites,
        agents=asked.agents,
        models=asked.models,
        epochs=asked.epochs,
        concurrency=asked.concurrency,
        run_id=run_id,
        task_ids=asked.task_ids,
        limits=asked.limits,
        datasets=asked.datasets,
    )
    scores = kept(score_run)(run_id=run_id, workers=asked.score_concurrency)
    return JudgedNightly(
        run_id=run_id,
        verified_tasks=verified,
        run=summary,
        scores=scores,
        report=publish_report(run_id),
    )


def _run_lines(run: RunSummary, report: ReportSummary) -> list[str]:
    """What one run of the nightly did. The mock labels come from the stored trials and
    scores (the report's), not from this invocation: a resumed run that ran nothing now still
    says that its trials called the mock server, and that its judge was the mock one."""
    ended = ", ".join(f"{k} {v}" for k, v in sorted(run.terminations.items())) or "-"
    lines = [
        f"- trials: {run.trials} ({run.ran} run now, {run.skipped} already done), "
        f"infra errors: {run.infra_errors}",
        f"- terminations: {ended}",
        f"- sandbox: {run.isolation.backend}",
        f"- mock LLM server (agents' model calls): {'yes' if report.mock_llm else 'no'}",
    ]
    if report.judged:
        lines.append(f"- mock judge: {'yes' if report.mock_judge else 'no'}")
    return lines


def nightly_markdown(
    run_id: str,
    run_date: date,
    datasets: dict[str, str],
    gold: dict[str, str],
    verified: int,
    run: RunSummary,
    report: ReportSummary,
    judged: JudgedNightly | None = None,
) -> str:
    """The nightly's summary artifact: datasets, gold, and each run's trials and mock use."""
    lines = [
        f"# Nightly {run_date.isoformat()} (`{run_id}`)",
        "",
        "| domain | dataset | gold |",
        "|---|---|---|",
    ]
    lines += [f"| {d} | `{datasets[d]}` | `{gold[d]}` |" for d in sorted(datasets)]
    lines += ["", f"- tasks verified: {verified}", *_run_lines(run, report)]
    if judged is not None:
        lines += [
            "",
            f"## Judged run `{judged.run_id}`",
            "",
            f"- tasks verified: {judged.verified_tasks}",
            *_run_lines(judged.run, judged.report),
        ]
    return "\n".join(lines)

"""Flow ``nightly``: check the request -> synthesize (or reuse) -> build gold -> then, for each
configured run kind (``flows/run_kinds.py``), verify its tasks -> run them -> score -> report,
as a run of its own. Every parameter is typed and described, so a backfill for a past date or
another dataset, or a night of other kinds, is a custom run of the deployment from the Prefect
UI (see infra/)."""

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

from benchforge.core.artifacts import ArtifactStore, open_store
from benchforge.core.errors import ConfigError
from benchforge.core.records import AgentLimits, LlmOptions
from benchforge.core.settings import load_settings
from benchforge.flows.calibrate import CalibrationCheck, calibrate_if_changed
from benchforge.flows.datasets import resolve_datasets, resolve_heldout
from benchforge.flows.gold import build_gold, gold_key
from benchforge.flows.liveness import beat
from benchforge.flows.report import ReportSummary, artifact_key, publish_report
from benchforge.flows.run_kinds import RunKind, checked_kinds, kind_models, kind_run_ids
from benchforge.flows.runs import RunId, RunSummary, ScoreSummary, run_suite, score_run
from benchforge.flows.verify import verify_tasks
from benchforge.harness.datasets import datasets_by_domain
from benchforge.harness.identity import check_rerun, run_identity
from benchforge.harness.infra_errors import fail_on_infra_errors, kept
from benchforge.harness.preflight import CheckedRequest, check_request
from benchforge.harness.sandbox_policy import work_root
from benchforge.harness.store import RunStore


class KindRun(BaseModel):
    """What the nightly did for one run kind: its run's verification, trials, scores, report."""

    kind: str
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
    runs: list[KindRun] = Field(description="one per run kind, in the kinds' order")
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
    string, a run kind a mapping) scheduled on ``scheduled`` will use: also the name of its
    flow run, so the UI tells two backfills of one date apart. Unreadable values fall back to
    the scheduled date (the run itself then refuses them with the reason)."""
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
    task_ids = _named_task_ids(parameters.get("run_kinds"))
    if not isinstance(datasets, Mapping) or task_ids is None:
        return f"nightly-{run_date.isoformat()}"
    return nightly_run_id(run_date, {str(k): str(v) for k, v in datasets.items()}, task_ids)


def _named_task_ids(kinds: object) -> list[str] | None:
    """Every task id the run kinds name ([] when they name none; None when unreadable)."""
    if kinds is None:
        return []
    if not isinstance(kinds, list):
        return None
    named: list[str] = []
    for kind in kinds:
        ids = kind.task_ids if isinstance(kind, RunKind) else None
        if isinstance(kind, Mapping):
            ids = kind.get("task_ids")
        if not isinstance(ids, list | None):
            return None
        named += [str(i) for i in ids or []]
    return named


def _flow_run_name() -> str:
    return planned_run_id(flow_run.parameters, scheduled_date())


@dataclass(frozen=True)
class CheckedKind:
    """One run kind of a nightly, checked (no data work yet), with its run id and models."""

    kind: RunKind
    run_id: str
    models: list[str]
    request: CheckedRequest
    # What run_suite is asked for: [] when the kind names no models and there is no API key,
    # so each model-calling agent runs its own mock script (``models`` is their union).
    requested_models: list[str]

    def task_ids_of(self, suite: str) -> list[str] | None:
        """The ids of the kind's tasks in ``suite`` when it names some (else all: None)."""
        if self.kind.task_ids is None:
            return None
        return [t.spec.id for t in self.request.tasks if t.spec.suite == suite]


def check_nightly(
    run_kinds: list[RunKind] | None = None,
    datasets: dict[str, str] | None = None,
    run_id: str = "nightly",
) -> list[CheckedKind]:
    """Every cheap check of a nightly's request (each run kind's suites, task ids, agents and
    models, and the dataset overrides), with the defaults filled in: what the flow does first,
    and what ``benchforge schedule add`` does before it creates a schedule. ``run_id`` (the
    nightly's) names the kinds' runs. Raises ConfigError."""
    has_key = load_settings().openai_api_key is not None
    overrides = dict(datasets or {})
    kinds = checked_kinds(run_kinds)
    checked = []
    for kind, kind_run_id in zip(kinds, kind_run_ids(run_id, kinds), strict=True):
        models = kind_models(kind, has_key)
        try:
            request = check_request(
                "task_specs", kind.suites, kind.task_ids, kind.agents, models, overrides, has_key
            )
        except ConfigError as err:
            raise ConfigError(f"run kind {kind.name}: {err}") from None
        own_scripts = kind.models is None and kind.mock_models is None and not has_key
        checked.append(
            CheckedKind(kind, kind_run_id, models, request, [] if own_scripts else models)
        )
    return checked


@flow(name="nightly", flow_run_name=_flow_run_name, on_running=[beat])
def nightly(
    run_date: RunDate | None = None,
    run_kinds: list[RunKind] | None = None,
    datasets: dict[str, str] | None = None,
    verify: bool = True,
    verify_mutations: bool = False,
    verify_hacks: bool | None = None,
    concurrency: Annotated[int, Field(ge=1, le=256)] = 4,
    score_concurrency: Annotated[int, Field(ge=1, le=64)] = 2,
    limits: AgentLimits | None = None,
    run_id: RunId | None = None,
    calibration_cases: str | None = None,
    calibration_labels: list[str] | None = None,
    judge_models: list[str] | None = None,
) -> NightlyResult:
    """The nightly evaluation: one run per run kind, each verified, run, scored and reported.
    Every parameter is checked before any data work; rerunning a date resumes that date's
    runs, and resuming with other inputs is refused.

    Args:
        run_date: the night this run is for (names the run nightly-DATE); default the date
            the flow run was scheduled for, so a retry or late pickup resumes it.
        run_kinds: the night's runs, each a name, suites (or some of their task_ids), agents,
            models, epochs and visible_scores. The first kind's run is nightly-DATE, each
            other's nightly-DATE-NAME. Default: de (de-crm; oracle, null, react-de) and da
            (da-crm; oracle, null, react-da), on gpt-4.1-mini with an API key, else on the
            mock server's scripts. Naming task_ids makes the run nightly-DATE-<digest>, apart
            from the whole suites'.
        datasets: domain -> dataset folder or s3:// prefix, for a backfill on another dataset
            version (the run is then nightly-DATE-<digest>); default each task's generated
            dataset, synthesized once and reused.
        verify: self-verify every task (gold scores 100, do-nothing 0) before its run.
        verify_mutations: add the exhaustive checks to verification: the mutation and
            reward-hack catalogues, and the judged reward-hack catalogue on judged tasks
            (the scheduled nightly does).
        verify_hacks: the reward-hack catalogues on their own (default: as verify_mutations).
        concurrency: trials at once.
        score_concurrency: scoring chunks at once (score_run's workers), in every run.
        limits: per-trial budgets (rounds, seconds, memory).
        run_id: name the run yourself (resuming it needs the same inputs); default
            nightly-DATE.
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
    run_date = run_date or scheduled_date()
    if run_id is None:
        named = [i for k in checked_kinds(run_kinds) for i in k.task_ids or []]
        run_id = nightly_run_id(run_date, overrides, named)
    kinds = check_nightly(run_kinds, overrides, run_id)
    hacks = verify_mutations if verify_hacks is None else verify_hacks
    store = open_store(settings.artifact_root)
    work = work_root(settings)

    # Datasets first (they are inputs of each run's identity), then refuse a resume with other
    # inputs before the gold builds, verification and trials of any run.
    dataset_dirs: dict[str, str] = {}
    for checked in kinds:
        dataset_dirs |= _check_resume(store, checked, overrides, limits, work)
    tasks = [t for checked in kinds for t in checked.request.tasks]

    calibration = None
    if calibration_cases and calibration_labels:
        calibration = calibrate_if_changed(
            calibration_cases, list(calibration_labels), judge_models=judge_models
        )

    # Gold per domain, on the dataset the runs resolved for the domain's tasks.
    by_domain = datasets_by_domain(tasks, dataset_dirs)
    # (first task's repository; a family whose tasks are no repository has no gold build)
    repos = {t.spec.dataset.domain: t.repo for t in reversed(tasks) if t.has_repo}
    gold: dict[str, str] = {}
    for domain, folder in by_domain.items():
        if domain not in repos:
            continue
        key = gold_key(domain, Path(folder), repos[domain])
        gold[domain] = (
            store.uri(key)
            if store.exists(f"{key}/build.json")
            else build_gold(domain=domain, dataset=folder, repo=str(repos[domain]))
        )
    options = NightOptions(
        concurrency=concurrency,
        score_concurrency=score_concurrency,
        limits=limits,
        datasets=overrides,
        verify=verify,
        mutations=verify_mutations,
        hacks=hacks,
    )
    runs = [_kind_run(checked, options, work) for checked in kinds]
    create_markdown_artifact(
        key=artifact_key("nightly", run_id),
        markdown=nightly_markdown(run_id, run_date, by_domain, gold, runs),
        description=f"nightly {run_date.isoformat()}",
    )
    for done in runs:
        logger.info(
            "nightly %s: %d trials, report %s",
            done.run_id,
            done.run.trials,
            done.report.uris.get("leaderboard.html"),
        )
    result = NightlyResult(
        run_id=run_id,
        run_date=run_date,
        datasets=by_domain,
        gold=gold,
        runs=runs,
        calibration=calibration,
    )
    return fail_on_infra_errors(result)  # FAILED past max_infra_error_share, all written


class NightOptions(BaseModel):
    """What every run of a nightly shares: concurrency, budgets, datasets, verification."""

    concurrency: int
    score_concurrency: int
    limits: AgentLimits
    datasets: dict[str, str]
    verify: bool
    mutations: bool
    hacks: bool


def _check_resume(
    store: ArtifactStore,
    checked: CheckedKind,
    overrides: dict[str, str],
    limits: AgentLimits,
    work: Path,
) -> dict[str, str]:
    """Resolves the kind's datasets and refuses to resume its run with other inputs; returns
    task key -> dataset folder."""
    request, kind = checked.request, checked.kind
    dataset_dirs = resolve_datasets(request.tasks, overrides, work)
    heldout_dirs = resolve_heldout(request.tasks, overrides, work)
    identity = run_identity(
        request.tasks,
        request.agents,
        checked.models,
        kind.epochs,
        limits,
        LlmOptions(),
        dataset_dirs,
        heldout_dirs,
    )
    previous = RunStore(store, checked.run_id).read_spec()
    check_rerun(previous, identity, (sorted(kind.suites), kind.agents, checked.models, kind.epochs))
    return dataset_dirs


def _kind_run(checked: CheckedKind, options: NightOptions, work: Path) -> KindRun:
    """Verifies, runs, scores and reports one run kind's tasks. The exhaustive checks (the
    mutation and reward-hack catalogues) run only when they were asked for."""
    kind = checked.kind
    verified = 0
    if options.verify:
        for suite in kind.suites:
            verified += len(
                verify_tasks(
                    path=f"task_specs/{suite}",
                    work=str(work),
                    mutations=options.mutations,
                    hacks=options.hacks,
                    datasets=options.datasets,
                    task_ids=checked.task_ids_of(suite),
                )
            )
    summary = kept(run_suite)(
        suites=kind.suites,
        agents=kind.agents,
        models=checked.requested_models,
        epochs=kind.epochs,
        concurrency=options.concurrency,
        run_id=checked.run_id,
        task_ids=kind.task_ids,
        limits=options.limits,
        datasets=options.datasets,
    )
    scores = kept(score_run)(
        run_id=checked.run_id,
        visible_scores=kind.visible_scores,
        workers=options.score_concurrency,
    )
    return KindRun(
        kind=kind.name,
        run_id=checked.run_id,
        verified_tasks=verified,
        run=summary,
        scores=scores,
        report=publish_report(checked.run_id),
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
    runs: list[KindRun],
) -> str:
    """The nightly's summary artifact: datasets, gold, and each run's trials and mock use."""
    lines = [
        f"# Nightly {run_date.isoformat()} (`{run_id}`)",
        "",
        "| domain | dataset | gold |",
        "|---|---|---|",
    ]
    lines += [
        f"| {d} | `{datasets[d]}` | {f'`{gold[d]}`' if d in gold else '(no repository)'} |"
        for d in sorted(datasets)
    ]
    for done in runs:
        lines += [
            "",
            f"## Run kind {done.kind}: `{done.run_id}`",
            "",
            f"- tasks verified: {done.verified_tasks}",
            *_run_lines(done.run, done.report),
        ]
    return "\n".join(lines)

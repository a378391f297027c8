"""Judge calibration: the labelling material from a scored run (``export_labelling``) and the
``calibrate_judge`` flow (judge models against human labels, gated, reported).

``export_labelling`` is a plain function (no Prefect): it rebuilds each judged trial's
workspace and its family's gold the way ``score_run`` does, so a case holds the very text and
rubric the judge saw; the cases themselves are built by
:mod:`benchforge.evaluation.calibration.trial_cases`, from what each family declares.

The flow starts the Benchforge mock server when no API key is configured (models must then be
the mock's judges: ``mock-judge``, ``mock-judge-noisy:<params>``); the noisy judges answer from
a truth file, by default the humans' consensus of the labels given.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from pydantic import BaseModel, Field

from benchforge.agents.mock_llm import MockServerConfig, run_server
from benchforge.agents.mock_llm.noisy_judge import noisy_policies
from benchforge.core.artifacts import open_store
from benchforge.core.catalogue import catalogue
from benchforge.core.errors import BenchforgeError, ConfigError
from benchforge.core.llm import LlmConfig
from benchforge.core.settings import BenchforgeSettings, load_settings
from benchforge.evaluation.calibration.cases import CalibrationCase, read_cases
from benchforge.evaluation.calibration.gate import DEFAULT_MIN_CASES, GateSettings
from benchforge.evaluation.calibration.labels import load_labels, truth_records, write_truth
from benchforge.evaluation.calibration.models import CalibrationReport
from benchforge.evaluation.calibration.render import position_text, to_html, to_markdown
from benchforge.evaluation.calibration.runner import calibrate_judge as run_calibration
from benchforge.evaluation.calibration.runner import fingerprint_for
from benchforge.evaluation.calibration.sheets import sample_cases, write_labelling
from benchforge.evaluation.calibration.stats import BootstrapSettings
from benchforge.evaluation.calibration.store import calibration_needed, save_report
from benchforge.evaluation.calibration.trial_cases import (
    JudgedTrial,
    case_set,
    judged_material,
    judged_text,
)
from benchforge.evaluation.families import families, family_of
from benchforge.evaluation.judges.breakdown import judge_record_of
from benchforge.evaluation.judges.client import (
    DEFAULT_JUDGE_MODEL,
    MOCK_JUDGE_MODEL,
    Judge,
    JudgeSettings,
)
from benchforge.evaluation.tasks.loader import load_task
from benchforge.evaluation.tasks.models import LoadedTask
from benchforge.harness.endpoints import MOCK_API_KEY, uses_mock
from benchforge.harness.executor import rebuild_workspace
from benchforge.harness.judging import open_judge
from benchforge.harness.sandbox_policy import work_root
from benchforge.harness.scoring import GoldCache
from benchforge.harness.store import RunStore

__all__ = ["CalibrationSummary", "ExportSummary", "calibrate_judge", "export_labelling"]

AtLeastOne = Annotated[int, Field(ge=1)]


# --------------------------------------------------------------------------- export


class ExportSummary(BaseModel):
    run_id: str
    judged_trials: int
    candidates: int = Field(description="cases before sampling")
    cases: int
    strata: int
    files: dict[str, str]


def _find_task(tasks_root: str, suite: str, task_id: str, version: str) -> LoadedTask:
    loaded = load_task(catalogue().path(Path(tasks_root)) / suite / task_id)
    if loaded.spec.version != version:
        raise BenchforgeError(
            f"{suite}/{task_id}: the run used version {version}, the task is now "
            f"{loaded.spec.version}; export with the task version the trials ran on"
        )
    return loaded


def export_labelling(
    run_id: str,
    out: Path,
    *,
    per_stratum: int = 5,
    seed: int = 0,
    settings: BenchforgeSettings | None = None,
) -> ExportSummary:
    """Samples the judged cases of a scored run, stratified by (task, agent, kind), and writes
    ``cases.jsonl``, ``labelling.csv`` and ``labelling.html`` into ``out``. Trials whose
    judged output is empty are left out (code scores them 0; no judge reads them); the
    verdicts a family's judge gave on a trial's record (``TaskFamily.verdict_cases``, e.g.
    milestones) are cases too."""
    settings = settings or load_settings()
    run = RunStore(open_store(settings.artifact_root), run_id)
    spec = run.require_spec()
    judged_families = {name for name, f in families().items() if f.judged}
    # a judge record: a judged output; another breakdown of a judged family: maybe verdicts
    # on the trial's record (milestones), which the family's verdict_cases says
    judged = [
        s
        for s in run.read_scores()
        if s.status == "scored"
        and (judge_record_of(s) or (s.breakdown is not None and s.family in judged_families))
    ]
    if not judged:
        raise BenchforgeError(
            f"run {run_id!r} has no judged trials (tasks of a family scored by a judge: "
            f"{', '.join(n for n, f in sorted(families().items()) if f.judged)}): nothing to label"
        )
    # the scoring flow's gold folder: a task's gold built for scoring is reused here
    gold_cache = GoldCache(work_root(settings) / "scoring")
    tasks: dict[tuple[str, str, str], LoadedTask] = {}
    trials: list[JudgedTrial] = []
    verdicts: list[CalibrationCase] = []
    with tempfile.TemporaryDirectory(prefix="benchforge-export-") as tmp:
        for n, score in enumerate(judged):
            key = score.key
            ident = (key.suite, key.task_id, key.task_version)
            if ident not in tasks:
                tasks[ident] = _find_task(spec.tasks_root, *ident)
            task = tasks[ident]
            datasets = spec.heldout_datasets if score.scored_on == "heldout" else spec.datasets
            dataset = datasets.get(task.key) or spec.datasets.get(task.key)
            if dataset is None:
                raise BenchforgeError(f"run {run_id}: no dataset recorded for {task.key}")
            family = family_of(task)
            if judge_record_of(score) is None:
                gold = gold_cache.get(task, Path(dataset))
                verdicts += family.verdict_cases(task, gold, score)
                continue
            workspace = rebuild_workspace(run, run.read_result(key.slug), Path(tmp) / f"trial-{n}")
            output = judged_text(family, task, workspace)
            if not output.strip():
                continue
            gold = gold_cache.get(task, Path(dataset))
            material = judged_material(family, task, gold)
            trials.append(JudgedTrial(score=score, task=task, material=material, output=output))
            verdicts += family.verdict_cases(task, gold, score)
    everything = case_set(trials, verdicts)
    if not everything.cases:
        raise BenchforgeError(f"run {run_id!r}: every judged trial left an empty output")
    sampled = sample_cases(everything, per_stratum, seed)
    files = write_labelling(sampled, Path(out))
    return ExportSummary(
        run_id=run_id,
        judged_trials=len(trials),
        candidates=len(everything.cases),
        cases=len(sampled.cases),
        strata=len({(c.task, c.agent, c.kind) for c in sampled.cases}),
        files={name: str(path) for name, path in files.items()},
    )


# --------------------------------------------------------------------------- calibration


class JudgeSummary(BaseModel):
    model: str
    accepted: bool
    reasons: list[str]
    figures: dict[str, str] = Field(description="figure -> value [95% interval]")


class CalibrationSummary(BaseModel):
    cases: int
    labels: int
    raters: int
    repeats: int
    mock_llm: bool
    judges: list[JudgeSummary]
    accepted: list[str]
    uris: dict[str, str]
    markdown: str


FIGURE_PREFIXES = {"rubric_item": "rubric", "gsb_pair": "gsb"}


def _summary(report: CalibrationReport, uris: dict[str, str], mock: bool) -> CalibrationSummary:
    judges = []
    for judge in report.judges:
        figures: dict[str, str] = {}
        for stats in judge.kinds:
            prefix = FIGURE_PREFIXES.get(stats.kind, stats.kind)
            figures[f"{prefix} {stats.agreement_name}"] = stats.agreement.judge.text()
            figures[f"{prefix} {stats.agreement_name} (humans)"] = stats.agreement.humans.text()
            if stats.accuracy is not None:
                figures[f"{prefix} accuracy"] = stats.accuracy.judge.text()
                figures[f"{prefix} accuracy (humans)"] = stats.accuracy.humans.text()
            figures[f"{prefix} alpha (humans)"] = stats.alpha.humans.text()
            figures[f"{prefix} alpha (with judge)"] = stats.alpha.judge.text()
            figures[f"{prefix} model spearman"] = stats.model_spearman.judge.text()
            if stats.inconsistency is not None:
                figures[f"{prefix} inconsistency"] = stats.inconsistency.text()
            if stats.position_bias is not None:
                figures[f"{prefix} first-position wins"] = position_text(stats)
            if stats.length_bias is not None:
                figures[f"{prefix} length bias"] = stats.length_bias.text()
        judges.append(
            JudgeSummary(
                model=judge.model,
                accepted=judge.gate.accepted,
                reasons=judge.gate.reasons,
                figures=figures,
            )
        )
    return CalibrationSummary(
        cases=report.cases,
        labels=report.labels,
        raters=len(report.raters),
        repeats=report.repeats,
        mock_llm=mock,
        judges=judges,
        accepted=report.accepted,
        uris=uris,
        markdown=to_markdown(report),
    )


def _table(report: CalibrationReport) -> list[dict[str, Any]]:
    rows = []
    for judge in report.judges:
        for stats in judge.kinds:
            rows.append(
                {
                    "judge": judge.model,
                    "kind": stats.kind,
                    "agreement": stats.agreement_name,
                    "judge_value": stats.agreement.judge.text(),
                    "humans_value": stats.agreement.humans.text(),
                    "accuracy": stats.accuracy.judge.text() if stats.accuracy else "",
                    "alpha_with_judge": stats.alpha.judge.text(),
                    "alpha_humans": stats.alpha.humans.text(),
                    "model_spearman": stats.model_spearman.judge.text(),
                    "inconsistency": stats.inconsistency.text() if stats.inconsistency else "",
                    "first_position_wins": position_text(stats) if stats.position_bias else "",
                    "length_bias": stats.length_bias.text() if stats.length_bias else "",
                    "accepted": judge.gate.accepted,
                }
            )
    return rows


@contextmanager
def judge_endpoint(
    settings: BenchforgeSettings, models: list[str], truth: Path | None
) -> Iterator[tuple[str | None, bool]]:
    """(base URL, mock?): the configured endpoint, or, with no API key, the mock server
    started here with ``truth`` as its ``judge_labels_file`` (noisy judges answer from it)."""
    mock = uses_mock(settings, True)
    if not mock:
        yield settings.openai_base_url, False
        return
    not_mock = [m for m in models if not m.startswith("mock-")]
    if not_mock:
        raise ConfigError(
            f"no API key is configured, so judges run on the mock server, which has no "
            f"{', '.join(not_mock)}; use mock-judge or mock-judge-noisy:<params>"
        )
    config = MockServerConfig(judge_labels_file=truth)
    policies = noisy_policies(models, truth) if truth is not None else {}
    with run_server(config=config, policies=policies) as handle:
        yield handle.url, True


@flow(name="calibrate_judge", flow_run_name="calibrate-judge")
def calibrate_judge(
    cases: str,
    labels: list[str],
    judge_models: list[str] | None = None,
    repeats: AtLeastOne = 2,
    max_agreement_gap: Annotated[float, Field(ge=0, le=2)] = 0.1,
    max_inconsistency: Annotated[float, Field(ge=0, le=1)] = 0.2,
    min_cases: Annotated[int, Field(ge=3)] = DEFAULT_MIN_CASES,
    truth: str | None = None,
    out: str | None = None,
    resamples: Annotated[int, Field(ge=50)] = 1000,
    seed: int = 0,
    concurrency: AtLeastOne = 8,
) -> CalibrationSummary:
    """Calibrates judge models against human labels: every labelled case judged `repeats`
    times per model, agreement with the humans (beside the humans' own), bootstrap intervals,
    cost and latency, and the promotion gate's decision per model. The report (JSON + HTML)
    is stored under the artifact root (``calibration/``, with one marker per judge
    fingerprint) and in `out`, and published as artifacts of this flow run.

    Args:
        cases: the cases file (`benchforge judge export-labelling` writes one).
        labels: labels files (CSV or JSON lines: case_id, rater, label).
        judge_models: models to calibrate; default gpt-4.1-mini, or mock-judge without an
            API key (then only mock judges: mock-judge, mock-judge-noisy:sigma=..,bias=..).
        repeats: judgments of each case per model (self-consistency, score stability).
        max_agreement_gap: accepted only if the lower bound of the judge's agreement >= one
            rater's agreement (both leave one out) - this.
        max_inconsistency: accepted only if at most this share of GSB pairs flip with order.
        min_cases: accepted only with at least this many labelled cases of each kind.
        truth: the mock noisy judges' truth file; default the humans' consensus.
        out: also write report.json and report.html here.
        resamples: bootstrap resamples per figure.
        seed: the bootstrap's seed.
        concurrency: judgments at once.
    """
    case_set = read_cases(Path(cases))
    label_set = load_labels([Path(p) for p in labels], case_set)  # refused before any call
    logger = get_run_logger()
    settings = load_settings()
    mock = uses_mock(settings, True)
    models = list(judge_models or [MOCK_JUDGE_MODEL if mock else DEFAULT_JUDGE_MODEL])
    gate = GateSettings(
        max_agreement_gap=max_agreement_gap,
        max_inconsistency=max_inconsistency,
        min_cases=min_cases,
    )
    with ExitStack() as stack:
        truth_file = Path(truth) if truth else None
        if mock and truth_file is None and any(m.startswith("mock-judge-noisy") for m in models):
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bf-truth-")))
            consensus = label_set.consensus(case_set.cases)
            truth_file = write_truth(truth_records(case_set, consensus), folder / "truth.jsonl")
        base_url, mock = stack.enter_context(judge_endpoint(settings, models, truth_file))

        def judge_for(model: str) -> Judge:
            overrides: dict[str, object] = {"concurrency": concurrency}
            if base_url:
                overrides["base_url"] = base_url
            if mock:
                overrides["api_key"] = MOCK_API_KEY
            config = LlmConfig.from_settings(settings, role="judge", model=model, **overrides)
            return stack.enter_context(open_judge(config, JudgeSettings(mode="per_item")))

        logger.info(
            "calibrating %s on %d labelled cases (%d labels), %d repeats",
            ", ".join(models),
            len(label_set.case_ids()),
            len(label_set.labels),
            repeats,
        )
        report = run_calibration(
            models,
            case_set,
            label_set,
            repeats,
            gate,
            judge_for=judge_for,
            bootstrap=BootstrapSettings(resamples=resamples, seed=seed),
            concurrency=concurrency,
        )
    uris = save_report(open_store(settings.artifact_root), report)
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.json").write_text(report.model_dump_json(indent=1), encoding="utf-8")
        (folder / "report.html").write_text(to_html(report), encoding="utf-8")
        uris["out"] = str(folder.resolve())
    summary = _summary(report, uris, mock)
    create_markdown_artifact(
        key="judge-calibration", markdown=summary.markdown, description="judge calibration"
    )
    create_table_artifact(
        key="judge-calibration-figures", table=_table(report), description="judge calibration"
    )
    for judge in summary.judges:
        logger.info("%s: %s", judge.model, "accepted" if judge.accepted else "rejected")
    return summary


class CalibrationCheck(BaseModel):
    """What the nightly did about calibration: ``ran`` (the judge, a prompt, a rubric or the
    labels changed since the last calibration) or skipped, with the fingerprints asked."""

    ran: bool
    fingerprints: dict[str, str] = Field(description="judge model -> fingerprint")
    summary: CalibrationSummary | None = None


def calibrate_if_changed(
    cases: str,
    labels: list[str],
    judge_models: list[str] | None = None,
    truth: str | None = None,
    repeats: int = 2,
    resamples: int = 1000,
) -> CalibrationCheck:
    """Runs ``calibrate_judge`` only when some judge model has no calibration stored for its
    fingerprint (model, judge prompt versions, rubric versions of the cases, cases and labels):
    the scheduled nightly calls it, so a judge is re-calibrated whenever it, its prompts or a
    rubric change, and not otherwise."""
    case_set = read_cases(Path(cases))
    label_set = load_labels([Path(p) for p in labels], case_set)
    settings = load_settings()
    mock = uses_mock(settings, True)
    models = list(judge_models or [MOCK_JUDGE_MODEL if mock else DEFAULT_JUDGE_MODEL])
    store = open_store(settings.artifact_root)
    prints = {m: fingerprint_for(m, case_set, label_set) for m in models}
    if not any(calibration_needed(store, fp) for fp in prints.values()):
        logging.getLogger(__name__).info("judge calibration unchanged (%s): skipped", prints)
        return CalibrationCheck(ran=False, fingerprints=prints)
    summary = calibrate_judge(
        cases=cases,
        labels=labels,
        judge_models=models,
        truth=truth,
        repeats=repeats,
        resamples=resamples,
    )
    return CalibrationCheck(ran=True, fingerprints=prints, summary=summary)

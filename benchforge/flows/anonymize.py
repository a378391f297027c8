"""Flow ``anonymize``: a dataset -> a shareable release, proven useful and safe before it is
published.

stage (policy check, transform, Parquet, report) -> benchmark check (the domain's gold dbt
repository builds on the release with every test passing; the domain's tasks self-verify on it:
gold 100, do-nothing 0) -> thresholds -> publish. A release below any threshold of its policy is
refused: the flow fails, nothing is published, and the report (published as a Prefect artifact
either way) says why. A domain without a gold dbt project is found before the transform: refused
there when the policy requires the benchmark check (the message names
``thresholds.require_benchmark``), else the check is skipped and the report says why.

The flow and ``benchforge anonymize --no-prefect`` run one sequence, :func:`make_release`: the
flow passes its Prefect tasks as the :class:`ReleaseSteps`, :data:`PLAIN_STEPS` are the same
functions called directly (no Prefect API, no artifact).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from benchforge.anonymize.policy.loader import LoadedPolicy, load_policy, shipped_policies
from benchforge.anonymize.release import (
    ReleaseRefused,
    StagedRelease,
    benchmark_preflight,
    preflight,
    source_record,
    stage_release,
    write_release_record,
)
from benchforge.anonymize.report.models import BenchmarkSection, TaskCheck
from benchforge.core.catalogue import catalogue as find_catalogue
from benchforge.core.errors import BenchforgeError, ConfigError
from benchforge.core.progress import StageDone, emit
from benchforge.core.publish import Target, discard, prepare_target, publish
from benchforge.core.records import DatasetRecord
from benchforge.core.records.verification import EMPTY, REFERENCE
from benchforge.core.settings import load_settings
from benchforge.evaluation.de.tasks import gold_cache
from benchforge.evaluation.families import VerifyOptions, family_of
from benchforge.evaluation.gold import load_gold
from benchforge.evaluation.tasks import load_tasks
from benchforge.flows.datasets import local_dataset, plain_local_dataset
from benchforge.flows.synthesize import Scale, Seed, artifact_key
from benchforge.flows.verify import verification_cells
from benchforge.harness.judging import judge_session
from benchforge.synthesis.spec.loader import shipped_domains

NO_SUITE = "none"
STAGES = ["transform, Parquet, report", "gold build + task verification", "publish"]


def default_release_location(domain: str, scale: float | None, seed: int | None) -> str:
    root = load_settings().artifact_root.rstrip("/")
    if scale is None or seed is None:  # an imported dataset: named, not generated
        return f"{root}/releases/{domain}"
    return f"{root}/releases/{domain}/scale-{scale:g}/seed-{seed}"


def resolve_policy(policy: str | None, domain: str) -> LoadedPolicy:
    """The policy named (a shipped name or a YAML path), else the dataset's domain's shipped
    one."""
    if policy is None:
        if domain not in shipped_policies():
            raise ConfigError(
                f"no shipped anonymization policy for domain '{domain}' "
                f"(shipped: {', '.join(shipped_policies())}): pass --policy PATH"
            )
        policy = domain
    return load_policy(policy)


@task(name="stage-release")
def stage_task(
    source: str, loaded: LoadedPolicy, target: Target, sample_rows: int
) -> StagedRelease:
    return stage_release(
        Path(source), loaded, target.staging, on_progress=emit, sample_rows=sample_rows
    )


@task(name="benchmark-check")
def benchmark_task(staged: StagedRelease, suite: str | None, work: str) -> BenchmarkSection:
    """The release used as a benchmark dataset: the domain's gold repository builds on it with
    every dbt test passing, and each task of ``suite`` on this domain self-verifies (gold 100,
    do-nothing 0; mutations and reward hacks are the nightly's business)."""
    domain = staged.source.domain
    catalogue = find_catalogue()
    section = BenchmarkSection(gold_build_success=False, models=0, tests=0, tasks=[], passed=False)
    repo = catalogue.repo(domain)
    scratch = Path(work) / "scoring"
    try:
        # the gold cache the tasks' verification uses too: a de_impl task reuses this build
        gold = load_gold(gold_cache(scratch / "gold", domain, repo, staged.folder))
        section = section.model_copy(
            update={"gold_build_success": True, "models": gold.models, "tests": gold.tests}
        )
    except BenchforgeError as err:
        section = section.model_copy(update={"error": str(err)[:2000]})
    checks: list[TaskCheck] = []
    if suite and suite != NO_SUITE:
        tasks = [
            t
            for t in load_tasks(catalogue.path(suite))
            if family_of(t).verifiable and t.spec.dataset.domain == domain
        ]
        options = VerifyOptions(mutations=False, hacks=False)
        with ExitStack() as stack:
            judge = None
            if any(family_of(t).judged for t in tasks):
                judge, _ = stack.enter_context(judge_session(load_settings(), Path(work)))
            for loaded in tasks:
                family = family_of(loaded)
                try:
                    if family.judged:
                        result = family.verify(loaded, staged.folder, scratch, options, judge=judge)
                    else:
                        result = family.verify(loaded, staged.folder, scratch, options)
                except BenchforgeError as err:
                    checks.append(
                        TaskCheck(
                            task=loaded.key,
                            family=loaded.spec.family,
                            gold=0.0,
                            empty=0.0,
                            passed=False,
                            detail=str(err)[:500],
                        )
                    )
                    continue
                primary = result.score(REFERENCE) or 0.0
                empty = result.score(EMPTY) or 0.0
                checks.append(
                    TaskCheck(
                        task=loaded.key,
                        family=loaded.spec.family,
                        gold=float(primary),
                        empty=float(empty),
                        passed=result.ok,
                        detail=" | ".join(verification_cells(result))
                        + ("" if result.ok else "; " + "; ".join(result.problems)),
                    )
                )
    passed = section.gold_build_success and all(c.passed for c in checks)
    return section.model_copy(update={"tasks": checks, "passed": passed})


@task(name="publish-release")
def publish_task(staged: StagedRelease, target: Target) -> DatasetRecord:
    record = write_release_record(staged, target.out)
    publish(target, load_settings())
    return record


def _summary(staged: StagedRelease, location: str | None) -> str:
    r = staged.report
    verdict = "PASSED" if r.passed else "REFUSED"
    lines = [
        f"# Release of {staged.source.domain}: {verdict}",
        "",
        f"- source: `{r.dataset}`" + (f"\n- release: `{location}`" if location else ""),
        f"- policy: `{staged.manifest.policy}` (sha256 {staged.manifest.policy_sha256[:12]})",
        f"- rows: {staged.manifest.total_rows:,} in {len(staged.manifest.tables)} tables",
        "",
        "| threshold | value | limit | ok |",
        "|---|---|---|---|",
    ]
    for t in sorted(r.thresholds, key=lambda t: t.passed):
        lines.append(f"| {t.name} | {t.value} | {t.op} {t.limit} | {'yes' if t.passed else 'NO'} |")
    return "\n".join(lines)


@dataclass(frozen=True)
class ReleaseSteps:
    """How each step of :func:`make_release` runs: the flow's Prefect tasks, or
    :data:`PLAIN_STEPS`."""

    source: Callable[[str, str | None, Path, float, int], Path]  # (domain, dataset, scratch, ...)
    stage: Callable[[str, LoadedPolicy, Target, int], StagedRelease]
    benchmark: Callable[[StagedRelease, str | None, str], BenchmarkSection]
    publish: Callable[[StagedRelease, Target], DatasetRecord]
    summarize: Callable[[StagedRelease, str, str | None], None]  # (staged, domain, location)
    log: Callable[..., Any]  # logger.info


PLAIN_STEPS = ReleaseSteps(
    source=plain_local_dataset,
    stage=stage_task.fn,
    benchmark=benchmark_task.fn,
    publish=publish_task.fn,
    summarize=lambda staged, domain, location: None,
    log=logging.getLogger(__name__).info,
)


def _publish_summary(staged: StagedRelease, domain: str, location: str | None) -> None:
    create_markdown_artifact(
        key=artifact_key(f"release-{domain}"),
        markdown=_summary(staged, location),
        description=f"Anonymized release of {domain}",
    )


@flow(name="anonymize")
def anonymize(
    dataset: str = "crm",
    policy: str | None = None,
    out: str | None = None,
    verify_suite: str | None = None,
    scale: Scale = 1.0,
    seed: Seed = 7,
    sample_rows: int = 5000,
) -> DatasetRecord:
    """Anonymizes ``dataset`` under ``policy`` and publishes the release to ``out`` with its
    report (``report/release-report.{json,html}``), if it passes every threshold.

    Args:
        dataset: a dataset folder or s3:// prefix, or a shipped domain name (its dataset at
            ``scale`` and ``seed``, synthesized first if missing).
        policy: a shipped policy name or a policy YAML path; default the domain's shipped one.
            The HMAC secret is read from the environment variable the policy names.
        out: a folder or s3:// prefix; default <artifact_root>/releases/DOMAIN/scale-S/seed-N.
        verify_suite: the task suite self-verified on the release (default de-DOMAIN when it
            exists; "none" skips task verification, the gold build still runs).
        scale: with a domain name: the dataset's scale.
        seed: with a domain name: the dataset's seed.
        sample_rows: records sampled by the linkage and attack measurements.
    """
    steps = ReleaseSteps(
        source=local_dataset,
        stage=stage_task,
        benchmark=benchmark_task,
        publish=publish_task,
        summarize=_publish_summary,
        log=get_run_logger().info,
    )
    return make_release(dataset, policy, out, verify_suite, scale, seed, sample_rows, steps)


def make_release(
    dataset: str,
    policy: str | None,
    out: str | None,
    verify_suite: str | None,
    scale: float,
    seed: int,
    sample_rows: int,
    steps: ReleaseSteps = PLAIN_STEPS,
) -> DatasetRecord:
    """The ``anonymize`` flow's sequence (its arguments), each step run by ``steps``; with
    the default :data:`PLAIN_STEPS`, the whole stage without an orchestrator."""
    with tempfile.TemporaryDirectory(prefix="benchforge-anonymize-") as tmp:
        is_domain = dataset in shipped_domains() and not Path(dataset).exists()
        source = steps.source(
            dataset if is_domain else "",
            None if is_domain else dataset,
            Path(tmp) / "source",
            scale,
            seed,
        )
        record = source_record(source)
        loaded = resolve_policy(policy, record.domain)
        preflight(source, loaded)  # bad policy, missing secret: fails before anything is written
        skipped = benchmark_preflight(record.domain, loaded, find_catalogue().repo(record.domain))
        location = out or default_release_location(record.domain, record.scale, record.seed)
        suite = verify_suite
        if suite is None:
            default = find_catalogue().tasks_dir / f"de-{record.domain}"
            suite = str(default) if default.is_dir() else NO_SUITE
        target = prepare_target(location)
        try:
            staged = steps.stage(str(source), loaded, target, sample_rows)
            emit(StageDone(stage=STAGES[0]))
            failing = [t.name for t in staged.report.failing if t.name != "require_benchmark"]
            if failing:  # refused whatever the benchmark says: do not spend minutes on it
                steps.log("thresholds failed (%s): benchmark check skipped", ", ".join(failing))
            elif skipped:
                steps.log("benchmark check skipped: %s", skipped)
                bench = _skipped_benchmark(skipped)
                staged.report = staged.report.with_benchmark(bench, loaded.policy.thresholds)
            else:
                write_release_record(staged, target.out)  # staging: tasks need a dataset.json
                bench = steps.benchmark(staged, suite, str(Path(tmp) / "bench"))
                staged.report = staged.report.with_benchmark(bench, loaded.policy.thresholds)
            emit(StageDone(stage=STAGES[1]))
            steps.summarize(staged, record.domain, location if staged.report.passed else None)
            if not staged.report.passed:
                kept = _keep_refused_report(staged, location)
                raise ReleaseRefused(staged.report, kept)
            published = steps.publish(staged, target)
            emit(StageDone(stage=STAGES[2]))
        except BaseException:
            discard(target)
            raise
    steps.log("release of %s published to %s", record.domain, published.location)
    return published


def _skipped_benchmark(reason: str) -> BenchmarkSection:
    return BenchmarkSection(
        gold_build_success=False, models=0, tests=0, passed=False, skipped=reason
    )


def _keep_refused_report(staged: StagedRelease, location: str) -> Path | None:
    """A refused release's report is kept beside the destination (local) so the maintainer can
    read it; the data itself is discarded."""
    from benchforge.anonymize.report.html import write_report

    if location.startswith("s3://"):
        folder = Path(tempfile.mkdtemp(prefix="benchforge-refused-release-"))
    else:
        dest = Path(location)
        folder = dest.parent / f"{dest.name}.refused-report"
    write_report(staged.report, folder)
    return folder

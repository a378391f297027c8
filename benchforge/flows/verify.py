"""Flow ``verify_tasks``: every authored task proves its gold and its scorer (the verify stage;
``benchforge task verify`` and the ``verify-tasks`` deployments run it)."""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from benchforge.core.artifacts import open_store
from benchforge.core.catalogue import catalogue as find_catalogue
from benchforge.core.errors import ArtifactError, BenchforgeError, ConfigError
from benchforge.core.records.verification import EMPTY, HACKS, REFERENCE, TaskVerification
from benchforge.core.settings import load_settings
from benchforge.evaluation.families import VerifyOptions, family_of
from benchforge.evaluation.judges.client import Judge
from benchforge.evaluation.tasks import LoadedTask, load_tasks
from benchforge.flows.datasets import heldout_dataset, resolve_datasets, resolve_heldout
from benchforge.harness.concurrent_check import ConcurrentScores, score_concurrently
from benchforge.harness.datasets import roles_of
from benchforge.harness.judging import judge_session
from benchforge.harness.verifications import write_verifications


def verification_cells(r: TaskVerification) -> list[str]:
    """reference, empty, the family's own checks, reward hacks: as the verify table and
    ``benchforge task verify`` show them (``gold 100/100/100``, ``empty 0/0/0``,
    ``mutations 6/6``, ``28/28``)."""
    own = [g for g in r.groups() if g not in (REFERENCE, EMPTY, HACKS)]
    return [
        r.shown(REFERENCE),
        r.shown(EMPTY),
        ", ".join(f"{g} {r.tally(g)}" for g in own) or "-",
        r.tally(HACKS),
    ]


def _claim_twins(
    tasks: list[LoadedTask], overrides: dict[str, str], root: Path
) -> dict[str, list[str]]:
    """task key -> [the held-out twin of its dataset], for the tasks verified on their visible
    dataset that check something on a second seed without a judge (DA claims). The twin is the
    one held-out families of the same domain verify on (built once per run)."""
    out: dict[str, list[str]] = {}
    for loaded in tasks:
        ref = loaded.spec.dataset
        if not family_of(loaded).verifies_on_twin or ref.domain in overrides or ref.location:
            continue
        twin = heldout_dataset(ref.domain, root / "heldout" / ref.domain, ref.scale, ref.seed)
        out[loaded.key] = [str(Path(twin).resolve())]
    return out


@task(name="concurrent-scorers", cache_policy=NO_CACHE)
def concurrent_check(
    loaded: LoadedTask, dataset_dir: Path, root: Path, copies: int
) -> ConcurrentScores:
    """The task's gold solution scored by ``copies`` processes at once on one work folder."""
    work = root / "concurrent" / loaded.spec.suite / loaded.spec.id
    solution = family_of(loaded).solution(loaded, root / "solutions", dataset_dir)
    if solution is None:
        return ConcurrentScores(task=loaded.key, copies=0)
    checked = score_concurrently(loaded.key, loaded.folder, solution, dataset_dir, work, copies)
    get_run_logger().info(
        "%s: %d concurrent scorings: %s", loaded.key, copies, checked.problem() or "agree"
    )
    return checked


class TaskVerificationFailed(BenchforgeError):
    """A task's gold, do-nothing, mutation or reward-hack check did not hold."""


@task(name="verify-task", cache_policy=NO_CACHE)
def verify_one(
    loaded: LoadedTask,
    dataset_dir: str,
    work: str,
    mutations: bool = True,
    hacks: bool = True,
    visible_dataset: str | None = None,
    judge: Judge | None = None,
    claim_datasets: list[str] | None = None,
    datasets: dict[str, str] | None = None,
) -> TaskVerification:
    """The task's family's checks (the DE families: their mutation catalogue and the
    reward-hack catalogue, where they apply; judged families: the reference output high, the
    empty one 0, a report with wrong anchor values losing exactly the items citing them; DA
    tasks: their claims agree with the data, here and on ``claim_datasets``). ``datasets``:
    the task's datasets by role, on the seed verified on."""
    visible = Path(visible_dataset) if visible_dataset else None
    options = VerifyOptions(
        mutations=mutations,
        hacks=hacks,
        visible_dataset=visible,
        claim_datasets=tuple(Path(d) for d in claim_datasets or []),
        datasets={role: Path(folder) for role, folder in (datasets or {}).items()},
    )
    family = family_of(loaded)
    if family.judged:
        return family.verify(loaded, Path(dataset_dir), Path(work), options, judge=judge)
    return family.verify(loaded, Path(dataset_dir), Path(work), options)


# Tasks verified at once: each is mostly one core of dbt and DuckDB work (gold builds shared by
# tasks of a domain are built once, the others wait for it).
VERIFY_AT_ONCE = 2
_RUNNER: Any = ThreadPoolTaskRunner(max_workers=VERIFY_AT_ONCE)  # Prefect's stub types it Never


@flow(name="verify_tasks", task_runner=_RUNNER)
def verify_tasks(
    path: str = "task_specs",
    work: str | None = None,
    mutations: bool = True,
    heldout: bool = True,
    hacks: bool = True,
    datasets: dict[str, str] | None = None,
    judge_model: str | None = None,
    task_ids: list[str] | None = None,
    concurrent_scorers: int = 1,
) -> list[TaskVerification]:
    """Validates every task under ``path``; for executable tasks checks gold = 100/100/100,
    the do-nothing submission = 0 and every mutation = its predicted score (de_impl: the
    domain's catalogue ``task_specs/mutations/<domain>.yaml``; de_evol: the task's own
    ``mutations.yaml``, on the models v2 adds or changes), on the held-out dataset trials are
    scored on (``heldout``, the default) or on the visible one (DA tasks, scored on the visible
    one, check their claims on the held-out twin too: a second seed); with ``hacks``, every entry of
    the reward-hack catalogue must score 0 on each de_impl task and leave the host untouched.
    A task whose authored files have problems (a stale contract or base_version, an invalid
    mutation catalogue) fails too. Fails (naming the tasks) if any check does not hold.

    Args:
        path: a task folder, a suite, or a folder of suites (relative to the checkout).
        work: scratch folder (datasets, gold builds); default a temporary one.
        mutations: check every mutation of the task's catalogue scores as predicted.
        heldout: verify on the held-out seed trials are scored on (not for custom datasets).
        hacks: check every reward hack of the catalogue scores 0 and leaves the host intact.
        datasets: domain -> dataset folder or s3:// prefix, as a run was given: tasks of
            that domain are verified on it (a custom dataset has no held-out twin).
        judge_model: the judge of judged tasks (default: mock-judge on the mock server
            without an API key, else gpt-4.1-mini).
        task_ids: only the tasks of these ids under ``path``; default all (an id not found
            there is refused).
        concurrent_scorers: above 1, each DE task's gold solution is also scored by that
            many ``benchforge score de`` processes at once on one shared work folder, and
            each must get the gold's score (the cross-process scratch check).
    """
    logger = get_run_logger()
    overrides = datasets or {}
    root_path = find_catalogue().path(path)
    tasks = [t for t in load_tasks(root_path) if family_of(t).verifiable]
    if task_ids is not None:
        unknown = set(task_ids) - {t.spec.id for t in load_tasks(root_path)}
        if unknown:
            raise ConfigError(f"task_ids: no task {', '.join(sorted(unknown))} under {path}")
        tasks = [t for t in tasks if t.spec.id in task_ids]
    with tempfile.TemporaryDirectory(prefix="benchforge-verify-") as tmp, ExitStack() as stack:
        root = Path(work) if work else Path(tmp)
        results = []
        judge: Judge | None = None
        if any(family_of(t).judged for t in tasks):
            judge, _ = stack.enter_context(judge_session(load_settings(), root, model=judge_model))
        # The run's resolution (a run given the same work root finds the same folders).
        visible_dirs = resolve_datasets(tasks, overrides, root)
        heldout_dirs = resolve_heldout(tasks, overrides, root) if heldout else {}
        twins = _claim_twins(tasks, overrides, root) if heldout else {}
        futures = []
        for loaded in tasks:
            visible = visible_dirs[loaded.key]
            use_heldout = loaded.key in heldout_dirs
            dataset_dir = heldout_dirs[loaded.key] if use_heldout else visible
            # "scoring": the gold cache score_run uses too, when both get the same work root
            futures.append(
                verify_one.submit(
                    loaded,
                    str(dataset_dir),
                    str(root / "scoring"),
                    mutations,
                    hacks,
                    str(visible) if use_heldout else None,
                    judge,
                    twins.get(loaded.key),
                    roles_of(loaded, heldout_dirs if use_heldout else visible_dirs),
                )
            )
        for loaded, future in zip(tasks, futures, strict=True):
            results.append(future.result())
            if concurrent_scorers > 1 and family_of(loaded).shares_scoring_work:
                data = heldout_dirs.get(loaded.key) or visible_dirs[loaded.key]
                checked = concurrent_check(loaded, Path(data), root, concurrent_scorers)
                if checked.problem():
                    results[-1].problems.append(str(checked.problem()))
            logger.info(
                "%s: %s", results[-1].task, "ok" if results[-1].ok else results[-1].problems
            )
    lines = [
        "| task | gold / reference | empty | mutations, wrong anchors | reward hacks held | ok |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.task} | {' | '.join(verification_cells(r))} | {'yes' if r.ok else 'NO'} |"
        )
    create_markdown_artifact(key="verify-tasks", markdown="\n".join(lines))
    try:  # kept for the catalogue page; a store that cannot take it fails nothing here
        write_verifications(open_store(load_settings().artifact_root), results)
    except ArtifactError as err:
        logger.warning("verifications not stored: %s", err)
    failed = [r for r in results if not r.ok]
    if failed:
        raise TaskVerificationFailed(
            "task verification failed: "
            + "; ".join(f"{r.task}: {', '.join(r.problems)}" for r in failed)
        )
    return results

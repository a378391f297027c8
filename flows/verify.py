"""Flow ``verify_tasks``: every authored task proves its gold and its scorer (the verify stage;
``benchforge task verify`` and the ``verify-tasks`` deployments run it)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from benchforge.core.catalogue import catalogue as find_catalogue
from benchforge.core.errors import BenchforgeError
from benchforge.evaluation.de.tasks import TaskVerification
from benchforge.evaluation.families import VerifyOptions, family_of
from benchforge.evaluation.tasks import LoadedTask, load_tasks
from benchforge.flows.datasets import resolve_datasets, resolve_heldout


class TaskVerificationFailed(BenchforgeError):
    """A task's gold, do-nothing, mutation or reward-hack check did not hold."""


@task(name="verify-task")
def verify_one(
    loaded: LoadedTask,
    dataset_dir: str,
    work: str,
    mutations: bool = True,
    hacks: bool = True,
    visible_dataset: str | None = None,
) -> TaskVerification:
    """The task's family's checks (the DE families: the domain's mutation catalogue and the
    reward-hack catalogue, where they apply)."""
    visible = Path(visible_dataset) if visible_dataset else None
    options = VerifyOptions(mutations=mutations, hacks=hacks, visible_dataset=visible)
    return family_of(loaded).verify(loaded, Path(dataset_dir), Path(work), options)


@flow(name="verify_tasks")
def verify_tasks(
    path: str = "task_specs",
    work: str | None = None,
    mutations: bool = True,
    heldout: bool = True,
    hacks: bool = True,
    datasets: dict[str, str] | None = None,
) -> list[TaskVerification]:
    """Validates every task under ``path``; for executable tasks checks gold = 100/100/100,
    the do-nothing submission = 0 and every mutation of the domain's catalogue = its predicted
    score, on the held-out dataset trials are scored on (``heldout``, the default) or on the
    visible one; with ``hacks``, every entry of the reward-hack catalogue must score 0 on each
    de_impl task and leave the host untouched. Fails (naming the tasks) if any check does not
    hold.

    Args:
        path: a task folder, a suite, or a folder of suites (relative to the checkout).
        work: scratch folder (datasets, gold builds); default a temporary one.
        mutations: check every mutation of the domain's catalogue scores as predicted.
        heldout: verify on the held-out seed trials are scored on (not for custom datasets).
        hacks: check every reward hack of the catalogue scores 0 and leaves the host intact.
        datasets: domain -> dataset folder or s3:// prefix, as a run was given: tasks of
            that domain are verified on it (a custom dataset has no held-out twin).
    """
    logger = get_run_logger()
    overrides = datasets or {}
    root_path = find_catalogue().path(path)
    tasks = [t for t in load_tasks(root_path) if family_of(t).verifiable]
    with tempfile.TemporaryDirectory(prefix="benchforge-verify-") as tmp:
        root = Path(work) if work else Path(tmp)
        results = []
        # The run's resolution (a run given the same work root finds the same folders).
        visible_dirs = resolve_datasets(tasks, overrides, root)
        heldout_dirs = resolve_heldout(tasks, overrides, root) if heldout else {}
        for loaded in tasks:
            visible = visible_dirs[loaded.key]
            use_heldout = loaded.key in heldout_dirs
            dataset_dir = heldout_dirs[loaded.key] if use_heldout else visible
            # "scoring": the gold cache score_run uses too, when both get the same work root
            results.append(
                verify_one(
                    loaded,
                    str(dataset_dir),
                    str(root / "scoring"),
                    mutations,
                    hacks,
                    str(visible) if use_heldout else None,
                )
            )
            logger.info("%s: %s", loaded.key, "ok" if results[-1].ok else results[-1].problems)
    lines = [
        "| task | gold CS/CFS/SR | empty | mutations | reward hacks held | ok |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        muts = f"{sum(m.ok for m in r.mutations)}/{len(r.mutations)}" if r.mutations else "-"
        held = f"{sum(h.ok for h in r.hacks)}/{len(r.hacks)}" if r.hacks else "-"
        lines.append(
            f"| {r.task} | {r.gold.cs:.0f}/{r.gold.cfs:.0f}/{r.gold.sr:.0f} | "
            f"{r.empty.cs:.0f}/{r.empty.cfs:.0f}/{r.empty.sr:.0f} | {muts} | {held} | "
            f"{'yes' if r.ok else 'NO'} |"
        )
    create_markdown_artifact(key="verify-tasks", markdown="\n".join(lines))
    failed = [r for r in results if not r.ok]
    if failed:
        raise TaskVerificationFailed(
            "task verification failed: "
            + "; ".join(f"{r.task}: {', '.join(r.problems)}" for r in failed)
        )
    return results

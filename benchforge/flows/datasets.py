"""The harness's dataset resolution (:mod:`benchforge.harness.datasets`) bound to the
``synthesize`` flow: a missing default or held-out dataset is synthesized as a flow run (or,
for a stage run with ``--no-prefect``, by the library's builder: :func:`plain_local_dataset`)."""

from __future__ import annotations

from pathlib import Path

from benchforge.core.progress import emit
from benchforge.core.records import DatasetRecord
from benchforge.evaluation.tasks import LoadedTask
from benchforge.flows.synthesize import synthesize
from benchforge.harness import datasets
from benchforge.synthesis.dataset import build_dataset


def local_dataset(
    domain: str, dataset: str | None, scratch: Path, scale: float = 1.0, seed: int = 7
) -> Path:
    """A local folder holding ``dataset`` (downloaded from S3 if needed). With no dataset given,
    the default one for (domain, scale, seed) is used, synthesized first if it does not exist."""
    return datasets.local_dataset(domain, dataset, scratch, scale, seed, synthesize=synthesize)


def plain_local_dataset(
    domain: str, dataset: str | None, scratch: Path, scale: float = 1.0, seed: int = 7
) -> Path:
    """:func:`local_dataset` without Prefect: a missing dataset is built by the library, as
    the ``synthesize`` flow builds it (generate, validate, publish)."""
    return datasets.local_dataset(domain, dataset, scratch, scale, seed, synthesize=_build)


def _build(*, domain: str, scale: float, seed: int, out: str) -> DatasetRecord:
    return build_dataset(domain, scale=scale, seed=seed, out=out, on_progress=emit)


def task_dataset(loaded: LoadedTask, override: str | None, scratch: Path) -> Path:
    """One task's dataset folder (:func:`benchforge.harness.datasets.task_dataset`)."""
    return datasets.task_dataset(loaded, override, scratch, synthesize=synthesize)


def heldout_dataset(domain: str, scratch: Path, scale: float, visible_seed: int) -> Path:
    """The held-out dataset of (domain, scale, visible seed), synthesized once, then reused."""
    return datasets.heldout_dataset(domain, scratch, scale, visible_seed, synthesize=synthesize)


def resolve_datasets(
    tasks: list[LoadedTask], overrides: dict[str, str], scratch: Path
) -> dict[str, str]:
    """The run's dataset map: task key (and ``<task key>#<role>`` for a task on several
    datasets) -> local folder (:func:`benchforge.harness.datasets.resolve_datasets`)."""
    return datasets.resolve_datasets(tasks, overrides, scratch, synthesize=synthesize)


def resolve_heldout(
    tasks: list[LoadedTask], overrides: dict[str, str], scratch: Path
) -> dict[str, str]:
    """The run's held-out dataset map, keyed as :func:`resolve_datasets`'
    (:func:`benchforge.harness.datasets.resolve_heldout`)."""
    return datasets.resolve_heldout(tasks, overrides, scratch, synthesize=synthesize)

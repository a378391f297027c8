"""A run's identity: every input that decides its results.

A run id names one set of inputs. Resuming it must ask for the same ones again: the same tasks
(version and content), agent configurations, models, epochs, limits, model-client options and
datasets (by content version, not by location; each role of a task on several datasets under
``<task key>#<role>``: :func:`benchforge.harness.datasets.role_keys`). Anything else is another
run, and :func:`check_rerun` refuses it with the differences and how to start a new run, so a
backfill on another dataset can never come back with the old results.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from benchforge.agents.protocol import Agent, config_hash
from benchforge.core.artifacts import LAYOUT
from benchforge.core.digest import folder_digest
from benchforge.core.errors import BenchforgeError
from benchforge.core.records import AgentLimits, DatasetRecord, LlmOptions, RunIdentity, RunSpec
from benchforge.evaluation.tasks import LoadedTask


class RunInputsChanged(BenchforgeError):
    """A run id was asked to resume with inputs other than those it was started with."""


def dataset_version(folder: Path) -> str:
    """16 hex digits over a dataset's content (domain, seed, scale, every table's checksum),
    read from its completion record; the same data at another location has the same version.
    A record that is not a Benchforge dataset record (data brought by hand) is versioned by its
    bytes."""
    record_path = LAYOUT.dataset_record_file(folder)
    try:
        raw = record_path.read_bytes()
    except OSError as exc:
        raise BenchforgeError(
            f"{folder} is not a dataset: cannot read {record_path.name}: {exc}"
        ) from None
    try:
        return record_version(DatasetRecord.model_validate_json(raw))
    except ValidationError:
        return hashlib.sha256(b"raw-record\0" + raw).hexdigest()[:16]


def record_version(record: DatasetRecord) -> str:
    payload = json.dumps(
        {
            "domain": record.domain,
            "seed": record.seed,
            "scale": record.scale,
            "tables": record.table_checksums,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def task_digest(task: LoadedTask) -> str:
    return f"{task.spec.version}:{folder_digest(task.folder)[:12]}"


def run_identity(
    tasks: list[LoadedTask],
    agents: Mapping[str, Agent],
    models: list[str],
    epochs: int,
    limits: AgentLimits,
    llm: LlmOptions,
    datasets: Mapping[str, str],
    heldout_datasets: Mapping[str, str],
) -> RunIdentity:
    versions: dict[str, str] = {}

    def version(folder: str) -> str:
        if folder not in versions:
            versions[folder] = dataset_version(Path(folder))
        return versions[folder]

    return RunIdentity(
        tasks={t.key: task_digest(t) for t in tasks},
        agents={spec: config_hash(agent.config) for spec, agent in agents.items()},
        models=list(models),
        epochs=epochs,
        limits=limits,
        llm=llm,
        datasets={key: version(folder) for key, folder in datasets.items()},
        heldout_datasets={key: version(folder) for key, folder in heldout_datasets.items()},
    )


def check_rerun(
    previous: RunSpec | None, identity: RunIdentity, matrix: tuple[object, ...]
) -> None:
    """Refuses to resume ``previous`` (the stored spec of this run id) with other inputs.

    Runs stored before identities were recorded are checked on their trial matrix only."""
    if previous is None:
        return
    if previous.identity is None:
        if previous.matrix() != matrix:
            raise RunInputsChanged(
                f"run {previous.run_id!r} exists with another trial matrix ({previous.matrix()}); "
                "start a new run with another run id"
            )
        return
    changes = previous.identity.differences(identity)
    if changes:
        listed = "\n  ".join(changes)
        raise RunInputsChanged(
            f"run {previous.run_id!r} was started with other inputs; its results would not be "
            f"those of this request:\n  {listed}\n"
            "Resuming a run needs exactly its inputs. To run these, start a new run: give "
            "another run id (run_id / --run-id), e.g. "
            f"{previous.run_id}-2."
        )

"""Writing a de_impl task's contract from a gold build: what ``benchforge task contract`` and
``benchforge task new de_impl`` both do, so a scaffolded contract is the one ``task contract``
would regenerate."""

from __future__ import annotations

from pathlib import Path

from benchforge.evaluation.tasks.materials import data_contract, write_contract
from benchforge.evaluation.tasks.models import DeImplTask, LoadedTask


def generate_contract(task: LoadedTask, dataset_dir: Path, work: Path) -> Path:
    """Builds (or reuses, under ``work``) the task's gold on ``dataset_dir`` and writes its
    ``contract`` from it and the task's ``contract_metadata``; returns the contract's path."""
    from benchforge.evaluation.de.tasks import prepare_gold

    spec = task.spec
    if not isinstance(spec, DeImplTask):
        raise TypeError(f"{task.key} is a {spec.family} task: only de_impl tasks have contracts")
    gold = prepare_gold(task, dataset_dir, work)
    meta = task.file(spec.contract_metadata) if spec.contract_metadata else None
    path = task.file(spec.contract)
    write_contract(data_contract(gold.gold_folder, meta, spec.domain, spec.scoring.layers), path)
    return path

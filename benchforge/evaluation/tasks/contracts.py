"""Writing a de_impl task's contract from a gold build: what ``benchforge task contract`` and
``benchforge task new de_impl`` both do, so a scaffolded contract is the one ``task contract``
would regenerate."""

from __future__ import annotations

import json
from pathlib import Path

from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.tasks.materials import data_contract, write_contract
from benchforge.evaluation.tasks.models import DeImplTask, LoadedTask
from benchforge.evaluation.tasks.templates import SCAFFOLD_MARK

EMPTY_NOTES = "models: {}\n"


def generate_contract(task: LoadedTask, dataset_dir: Path, work: Path) -> Path:
    """Builds (or reuses, under ``work``) the task's gold on ``dataset_dir`` and writes its
    ``contract`` from it and the task's ``contract_metadata``; returns the contract's path."""
    from benchforge.evaluation.de.tasks import gold_docs, prepare_gold

    spec = task.spec
    if not isinstance(spec, DeImplTask):
        raise TypeError(f"{task.key} is a {spec.family} task: only de_impl tasks have contracts")
    gold = prepare_gold(task, dataset_dir, work)
    meta = task.file(spec.contract_metadata) if spec.contract_metadata else None
    path = task.file(spec.contract)
    folder = gold_docs(gold.gold_folder, gold.repo)  # the contract's column types: its catalog
    write_contract(data_contract(folder, meta, spec.domain, spec.scoring.layers), path)
    return path


def undescribed_models(contract: Path) -> dict[str, list[str]]:
    """Model -> what its contract entry lacks (description, grain, primary_key): what the gold
    project's YAML does not say (a description with 'One row per ...', a unique + not_null
    key test)."""
    data = read_yaml(contract.read_text()) or {}
    return {
        entry["name"]: missing
        for entry in data.get("models", [])
        if (missing := [k for k in ("description", "grain", "primary_key") if not entry.get(k)])
    }


def mark_undescribed_models(task: LoadedTask, contract: Path) -> int:
    """In a freshly scaffolded ``contract_metadata`` (its ``models: {}`` untouched), one
    ``TODO(scaffold)`` note per model whose contract entry lacks a description, a grain or a
    key, so ``task validate`` warns until the maintainer says them; the contract is rewritten
    with the notes. Returns how many models were marked."""
    spec = task.spec
    if not isinstance(spec, DeImplTask) or spec.contract_metadata is None:
        return 0
    metadata = task.file(spec.contract_metadata)
    text = metadata.read_text()
    missing = undescribed_models(contract)
    if not missing or EMPTY_NOTES not in text:
        return 0
    lines = ["models:\n"]
    for name, fields in missing.items():
        note = (
            f"{SCAFFOLD_MARK}: the gold project gives no {', '.join(fields)} for {name}. Say "
            "them in the project's YAML (a description with 'One row per ...', a unique + "
            "not_null test on the key), or replace this note with what an agent needs."
        )
        lines.append(f"  {name}:\n    - {json.dumps(note)}\n")
    metadata.write_text(text.replace(EMPTY_NOTES, "".join(lines), 1))
    return len(missing)

"""The data folder a ``dab_query`` agent gets: the dataset perturbed by the task's perturb spec
(seeded by the dataset's seed), without the record of what was changed.

One folder per (dataset version, seed, perturb spec digest) under ``work/dab-data``:

    <key>/perturbations.json   the record (what the perturbation did): never given to agents
    <key>/postgres/            the PostgreSQL databases as scripts, if any: the harness loads
                               them into template databases (never given to agents either)
    <key>/agent/               db_config.yaml, databases/, schema.md, hints.md: the agent's

built in a temporary folder and renamed into place, so concurrent trials either find the
finished folder or build their own copy, and never read a half-written one. The perturbation
itself is the synthesis library's (``perturb``), called by name through
:mod:`benchforge.core.derivations` (evaluation does not import synthesis).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from pathlib import Path

from benchforge.core.artifacts import LAYOUT
from benchforge.core.derivations import derivation
from benchforge.core.records import DatasetRecord
from benchforge.evaluation.gold import dataset_version

DAB_DATA = "dab-data"
AGENT_FOLDER = "agent"
RECORD_FILE = "perturbations.json"  # written by perturb; kept beside the agent's folder
POSTGRES_DIR = "postgres"  # perturb's scripts of PostgreSQL databases; beside it too
PERTURB = "perturb"


def dataset_seed(dataset_dir: Path) -> int:
    """The seed the perturbation uses: the dataset's own (0 for an imported dataset)."""
    record = DatasetRecord.model_validate_json(
        LAYOUT.dataset_record_file(dataset_dir).read_text(encoding="utf-8")
    )
    return record.seed if record.seed is not None else 0


def spec_digest(spec_file: Path) -> str:
    return hashlib.sha256(spec_file.read_bytes()).hexdigest()


def perturbed_data(dataset_dir: Path, spec_file: Path, work: Path) -> Path:
    """The agent's folder of ``dataset_dir`` perturbed by ``spec_file``, built once."""
    seed = dataset_seed(dataset_dir)
    key = hashlib.sha256(
        f"{dataset_version(dataset_dir)}\0{seed}\0{spec_digest(spec_file)}".encode()
    ).hexdigest()[:20]
    root = work / DAB_DATA
    built = root / key
    if (built / AGENT_FOLDER).is_dir():
        return built / AGENT_FOLDER
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{key}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        derivation(PERTURB)(dataset_dir, spec_file, tmp / AGENT_FOLDER, seed)
        os.replace(tmp / AGENT_FOLDER / RECORD_FILE, tmp / RECORD_FILE)
        if (tmp / AGENT_FOLDER / POSTGRES_DIR).is_dir():
            os.replace(tmp / AGENT_FOLDER / POSTGRES_DIR, tmp / POSTGRES_DIR)
        try:
            os.rename(tmp, built)
        except OSError:  # another trial finished first: its copy is the same
            if not (built / AGENT_FOLDER).is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return built / AGENT_FOLDER


def perturb_folder(agent_folder: Path) -> Path:
    """The folder of an agent's data folder's record and PostgreSQL scripts."""
    return agent_folder.parent

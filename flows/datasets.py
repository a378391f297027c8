"""Finding a dataset on local disk for the stages that need files (dbt, DuckDB)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from benchforge.core.artifacts import open_store
from benchforge.core.errors import BenchforgeError
from benchforge.core.heldout import heldout_secret, heldout_seed
from benchforge.core.settings import load_settings
from benchforge.flows.synthesize import default_dataset_location, synthesize
from benchforge.synthesis.dataset import RECORD


def local_dataset(
    domain: str, dataset: str | None, scratch: Path, scale: float = 1.0, seed: int = 7
) -> Path:
    """A local folder holding ``dataset`` (downloaded from S3 if needed). With no dataset given,
    the default one for (domain, scale, seed) is used, synthesized first if it does not exist."""
    location = dataset or default_dataset_location(domain, scale, seed)
    return _fetch(location, scratch, domain, scale, seed, synthesize_missing=dataset is None)


def heldout_dataset(domain: str, scratch: Path, scale: float, visible_seed: int) -> Path:
    """The held-out dataset of (domain, scale, visible seed): same spec and scale, a seed derived
    from the held-out secret (:mod:`benchforge.core.heldout`); synthesized once, then reused. Its
    location names a digest, not the seed."""
    settings = load_settings()
    seed = heldout_seed(heldout_secret(settings), domain, scale, visible_seed)
    tag = hashlib.sha256(f"{domain}|{scale:g}|{seed}".encode()).hexdigest()[:16]
    location = f"{settings.artifact_root.rstrip('/')}/datasets-heldout/{domain}/{tag}"
    return _fetch(location, scratch, domain, scale, seed, synthesize_missing=True)


def _fetch(
    location: str, scratch: Path, domain: str, scale: float, seed: int, synthesize_missing: bool
) -> Path:
    if location.startswith("s3://"):
        parent, _, name = location.rstrip("/").rpartition("/")
        store = open_store(parent)
        if synthesize_missing and not store.exists(f"{name}/{RECORD}"):
            synthesize(domain=domain, scale=scale, seed=seed, out=location)
        store.get_dir(name, scratch, marker=RECORD)
        return scratch
    folder = Path(location)
    if not (folder / RECORD).exists():
        if not synthesize_missing:
            raise BenchforgeError(f"{folder} is not a dataset (no {RECORD})")
        synthesize(domain=domain, scale=scale, seed=seed, out=str(folder))
    return folder

"""Finding a dataset on local disk for the stages that need files (dbt, DuckDB)."""

from __future__ import annotations

from pathlib import Path

from benchforge.artifacts import open_store
from benchforge.errors import BenchforgeError
from flows.synthesize import default_dataset_location, synthesize
from synthesis.dataset import RECORD


def local_dataset(domain: str, dataset: str | None, scratch: Path, scale: float = 1.0,
                  seed: int = 7) -> Path:  # fmt: skip
    """A local folder holding ``dataset`` (downloaded from S3 if needed). With no dataset given,
    the default one for (domain, scale, seed) is used, synthesized first if it does not exist."""
    location = dataset or default_dataset_location(domain, scale, seed)
    if location.startswith("s3://"):
        parent, _, name = location.rstrip("/").rpartition("/")
        open_store(parent).get_dir(name, scratch, marker=RECORD)
        return scratch
    folder = Path(location)
    if not (folder / RECORD).exists():
        if dataset is not None:
            raise BenchforgeError(f"{folder} is not a dataset (no {RECORD})")
        synthesize(domain=domain, scale=scale, seed=seed, out=str(folder))
    return folder

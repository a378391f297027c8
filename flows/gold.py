"""Flow ``build_gold``: a gold dbt repository built on a dataset, stored as artifacts."""

from __future__ import annotations

import tempfile
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.catalogue import catalogue
from benchforge.core.records import GoldBuild
from benchforge.core.settings import load_settings
from benchforge.evaluation.gold import build_gold as build_gold_library
from benchforge.evaluation.gold import dataset_version, repo_version
from benchforge.flows.datasets import local_dataset


def gold_key(domain: str, dataset_dir: Path, repo: Path) -> str:
    return LAYOUT.gold(domain, dataset_version(dataset_dir), repo_version(repo))


@task(name="dbt-build-gold")
def dbt_build_task(domain: str, repo: str, dataset_dir: str, out: str) -> GoldBuild:
    return build_gold_library(domain, Path(repo), Path(dataset_dir), Path(out))


@task(name="store-gold")
def store_task(build: GoldBuild, key: str) -> str:
    store = open_store(load_settings().artifact_root)
    store.put_dir(key, build.folder, marker=LAYOUT.GOLD_RECORD)
    return store.uri(key)


@flow(name="build_gold")
def build_gold(domain: str = "crm", dataset: str | None = None, repo: str | None = None) -> str:
    """Runs ``dbt build`` of ``dbt_projects/<domain>`` (or ``repo``) on a copy of ``dataset``'s
    warehouse (a folder or s3:// URI; default: the domain's scale-1 seed-7 dataset in the
    artifact store) and stores the gold warehouse, manifest, run results and docs under
    ``gold/<domain>/<dataset version>/<repo version>/``. Returns the stored location.

    Args:
        domain: the dataset's domain (crm, ads, enterprise).
        dataset: a dataset folder or s3:// prefix; default the domain's scale-1 seed-7 one.
        repo: a dbt project folder; default dbt_projects/DOMAIN.
    """
    logger = get_run_logger()
    repo_dir = Path(repo) if repo else catalogue().repo(domain)
    with tempfile.TemporaryDirectory(prefix="benchforge-gold-") as tmp:
        dataset_dir = local_dataset(domain, dataset, Path(tmp) / "dataset")
        key = gold_key(domain, dataset_dir, repo_dir)
        build = dbt_build_task(domain, str(repo_dir), str(dataset_dir), str(Path(tmp) / "gold"))
        logger.info(
            "gold %s: %d models, %d tests in %.1fs",
            domain,
            build.models,
            build.tests,
            build.seconds,
        )
        location = store_task(build, key)
    create_markdown_artifact(
        key=f"gold-{domain}",
        markdown=(
            f"# Gold build {domain}\n\n- stored at `{location}`\n- models: {build.models}\n"
            f"- tests: {build.tests}\n- dbt build: {build.seconds:.1f} s\n"
            f"- dataset version `{build.dataset_version}`, repo version `{build.repo_version}`\n"
        ),
    )
    return location

"""Flow ``build_gold``: a gold dbt repository built on a dataset, stored as artifacts.

The flow and ``benchforge gold build --no-prefect`` run one sequence, :func:`make_gold`: the
flow passes its Prefect tasks as the :class:`GoldSteps`, :data:`PLAIN_STEPS` are the same
functions called directly (no Prefect API, no artifact).
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.catalogue import catalogue
from benchforge.core.errors import ConfigError
from benchforge.core.records import GoldBuild
from benchforge.core.scratch import folder_lock
from benchforge.core.settings import load_settings
from benchforge.evaluation.dbt.project import PROJECT_FILE, require_dbt_project
from benchforge.evaluation.gold import BuildCounts, build_counts, dataset_version, repo_version
from benchforge.evaluation.gold import build_gold as build_gold_library
from benchforge.flows.datasets import local_dataset, plain_local_dataset
from benchforge.flows.synthesize import artifact_key
from benchforge.harness.sandbox_policy import work_root
from benchforge.synthesis.spec.loader import shipped_domains

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def gold_key(domain: str, dataset_dir: Path, repo: Path) -> str:
    return LAYOUT.gold(domain, dataset_version(dataset_dir), repo_version(repo))


@task(name="dbt-build-gold")
def dbt_build_task(domain: str, repo: str, dataset_dir: str, out: str) -> GoldBuild:
    return build_gold_library(domain, Path(repo), Path(dataset_dir), Path(out))


def gold_repo(domain: str, repo: str | None) -> Path:
    """``repo`` (a maintainer's dbt project), else the shipped ``dbt_projects/<domain>``;
    an error that says which to give when neither is a dbt project."""
    if not _NAME.fullmatch(domain):
        raise ConfigError(
            f"gold build name {domain!r}: use letters, digits, '_', '.' and '-' (it names "
            "the build's folder in the artifact store)"
        )
    if repo is not None:
        return require_dbt_project(Path(repo))
    shipped = catalogue().repo(domain)
    if not (shipped / PROJECT_FILE).is_file():
        raise ConfigError(
            f"no shipped gold repository for '{domain}' ({shipped} has no {PROJECT_FILE}): "
            "give your dbt project with --repo PATH"
        )
    return shipped.resolve()


def stored_counts(location: str) -> BuildCounts:
    """What the stored gold build at ``location`` (a folder or s3:// prefix) ran, by kind."""
    if location.startswith("s3://"):
        parent, _, name = location.rstrip("/").rpartition("/")
        return build_counts(open_store(parent).get_bytes(f"{name}/run_results.json"))
    return build_counts((Path(location) / "run_results.json").read_text())


@task(name="store-gold")
def store_task(build: GoldBuild, key: str) -> str:
    store = open_store(load_settings().artifact_root)
    store.put_dir(key, build.folder, marker=LAYOUT.GOLD_RECORD)
    return store.uri(key)


def _publish_summary(
    domain: str, repo_dir: Path, build: GoldBuild, counts: BuildCounts, location: str
) -> None:
    create_markdown_artifact(
        key=artifact_key(f"gold-{domain}"),
        markdown=(
            f"# Gold build {domain}\n\n- stored at `{location}`\n- repository `{repo_dir}`\n"
            f"- models: {counts.models}\n- tests: {counts.tests}\n- seeds: {counts.seeds}\n"
            f"- dbt build: {build.seconds:.1f} s\n"
            f"- dataset version `{build.dataset_version}`, repo version `{build.repo_version}`\n"
        ),
    )


@dataclass(frozen=True)
class GoldSteps:
    """How each step of :func:`make_gold` runs: the flow's Prefect tasks, or
    :data:`PLAIN_STEPS`."""

    source: Callable[[str, str | None, Path], Path]  # (domain, dataset, scratch)
    build: Callable[[str, str, str, str], GoldBuild]  # (domain, repo, dataset dir, out)
    store: Callable[[GoldBuild, str], str]
    summarize: Callable[[str, Path, GoldBuild, BuildCounts, str], None]  # + location
    log: Callable[..., Any]  # logger.info


PLAIN_STEPS = GoldSteps(
    source=plain_local_dataset,
    build=dbt_build_task.fn,
    store=store_task.fn,
    summarize=lambda domain, repo, build, counts, location: None,
    log=logging.getLogger(__name__).info,
)


@flow(name="build_gold")
def build_gold(
    domain: str = "crm", dataset: str | None = None, repo: str | None = None, rebuild: bool = False
) -> str:
    """Runs ``dbt build`` of ``dbt_projects/<domain>`` (or ``repo``, any dbt project: it runs
    with Benchforge's profile whatever profile it names) on a copy of ``dataset``'s warehouse
    (a folder or s3:// URI; default: the domain's scale-1 seed-7 dataset in the artifact
    store) and stores the gold warehouse, manifest, run results and docs under
    ``gold/<domain>/<dataset version>/<repo version>/``. Returns the stored location.

    Args:
        domain: the dataset's domain (crm, ads, enterprise, or the name of an imported one);
            with ``repo`` and ``dataset``, just the build's label.
        dataset: a dataset folder or s3:// prefix; default the domain's scale-1 seed-7 one.
        repo: a dbt project folder; default dbt_projects/DOMAIN.
        rebuild: build again even when a build of the same versions is stored.
    """
    steps = GoldSteps(
        source=local_dataset,
        build=dbt_build_task,
        store=store_task,
        summarize=_publish_summary,
        log=get_run_logger().info,
    )
    return make_gold(domain, dataset, repo, steps, rebuild)


def make_gold(
    domain: str,
    dataset: str | None,
    repo: str | None,
    steps: GoldSteps = PLAIN_STEPS,
    rebuild: bool = False,
) -> str:
    """The ``build_gold`` flow's sequence (its arguments), each step run by ``steps``; with the
    default :data:`PLAIN_STEPS`, the whole stage without an orchestrator. A build already
    stored under the same key (dataset and repository versions) is reused unless
    ``rebuild``."""
    repo_dir = gold_repo(domain, repo)
    if dataset is None and domain not in shipped_domains():
        raise ConfigError(
            f"'{domain}' is not a shipped domain, so there is no default dataset to build on: "
            "give --dataset LOCATION (a dataset folder or s3:// prefix, e.g. one made by "
            "`benchforge dataset import`)"
        )
    settings = load_settings()
    with tempfile.TemporaryDirectory(prefix="benchforge-gold-") as tmp:
        dataset_dir = steps.source(domain, dataset, Path(tmp) / "dataset")
        key = gold_key(domain, dataset_dir, repo_dir)
        # One builder per key on this machine; the others wait, then find it stored.
        with folder_lock(work_root(settings) / "locks" / key):
            store = open_store(settings.artifact_root)
            if not rebuild and store.exists(f"{key}/{LAYOUT.GOLD_RECORD}"):
                location = store.uri(key)
                steps.log(
                    "gold %s: already built at %s (same dataset and repository versions; "
                    "rebuild to build it again)",
                    domain,
                    location,
                )
                return location
            build = steps.build(domain, str(repo_dir), str(dataset_dir), str(Path(tmp) / "gold"))
            counts = build_counts((build.folder / "run_results.json").read_text())
            steps.log("gold %s: %s in %.1fs", domain, counts.summary(), build.seconds)
            location = steps.store(build, key)
    steps.summarize(domain, repo_dir, build, counts, location)
    return location

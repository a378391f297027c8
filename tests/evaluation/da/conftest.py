"""Shared data for the ``da_open`` tests: two small crm datasets (scale 0.02, seeds 7 and 11)
and their gold builds, made once per session.

A gold build through ``gold_cache`` runs ``dbt build`` (58 models, 900+ data tests):
about 30 s. The marts an analysis database copies are the same with ``dbt run`` alone, so the
fixture runs that (both seeds in parallel) and files the result where ``gold_cache`` looks for
it, with its manifest and completion record: every code path under test (``analysis_db``,
``prepare_gold``, ``verify``) then finds a cached gold build, as a second trial would.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchforge.agents.mock_llm import MockServerHandle, run_server
from benchforge.core.artifacts import LAYOUT
from benchforge.core.llm import LlmConfig
from benchforge.core.records import GOLD_DB, GoldBuild
from benchforge.evaluation.dbt.runner import run_dbt
from benchforge.evaluation.de.tasks import gold_cache_folder
from benchforge.evaluation.gold import copy_warehouse, dataset_version, repo_version
from benchforge.evaluation.judges.client import MOCK_JUDGE_MODEL, Judge, JudgeSettings
from benchforge.evaluation.tasks import LoadedTask, load_tasks
from benchforge.harness.judging import open_judge
from benchforge.synthesis.dataset import build_dataset
from tests.paths import REPO_ROOT

SCALE = 0.02
SEEDS = (7, 11)
SUITE = REPO_ROOT / "task_specs" / "da-crm"
CRM_REPO = REPO_ROOT / "dbt_projects" / "crm"


@dataclass(frozen=True)
class DaData:
    """``datasets[seed]``: a crm dataset folder; ``work``: the work root whose ``gold`` cache
    holds both gold builds."""

    datasets: dict[int, Path]
    work: Path


def models_only_gold(dataset: Path, cache: Path, repo: Path = CRM_REPO) -> Path:
    """The gold build ``gold_cache(cache, "crm", repo, dataset)`` would find, by ``dbt run``."""
    folder = gold_cache_folder(cache, "crm", repo, dataset)
    if LAYOUT.gold_record_file(folder).exists():
        return folder
    folder.mkdir(parents=True)
    db = copy_warehouse(dataset, folder / GOLD_DB)
    run = run_dbt(repo, db, ["run"], folder / "_dbt")
    assert run.ok and not run.failed(), run.log_tail[-2000:]
    shutil.copyfile(folder / "_dbt" / "target" / "manifest.json", folder / "manifest.json")
    shutil.rmtree(folder / "_dbt", ignore_errors=True)
    record = GoldBuild(
        domain="crm",
        repo=str(repo),
        repo_version=repo_version(repo),
        dataset_version=dataset_version(dataset),
        folder=folder,
        seconds=run.seconds,
        models=sum(1 for r in run.results if r.unique_id.startswith("model.")),
        tests=0,
    )
    LAYOUT.gold_record_file(folder).write_text(record.model_dump_json(indent=2))
    return folder


@pytest.fixture(scope="session")
def da_data(tmp_path_factory: pytest.TempPathFactory) -> DaData:
    root = tmp_path_factory.mktemp("da-data")
    datasets = {}
    for seed in SEEDS:
        folder = root / f"crm-{SCALE:g}-{seed}"
        build_dataset("crm", scale=SCALE, seed=seed, out=str(folder), validate=False)
        datasets[seed] = folder
    work = root / "work"
    with ThreadPoolExecutor(max_workers=len(SEEDS)) as pool:
        list(pool.map(lambda d: models_only_gold(d, work / "gold"), datasets.values()))
    return DaData(datasets=datasets, work=work)


@pytest.fixture(scope="session")
def da_tasks() -> dict[str, LoadedTask]:
    return {t.spec.id: t for t in load_tasks(SUITE)}


@pytest.fixture(scope="module")
def mock_server() -> Iterator[MockServerHandle]:
    handle = run_server("127.0.0.1", 0)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def judge(mock_server: MockServerHandle) -> Iterator[Judge]:
    """The faithful mock judge (``mock-judge``) on a real client, no response cache."""
    config = LlmConfig(
        role="judge",
        model=MOCK_JUDGE_MODEL,
        base_url=mock_server.url,
        api_key="mock",
        max_retries=0,
    )
    with open_judge(config, JudgeSettings()) as judge:
        yield judge

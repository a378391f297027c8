"""Every shipped task validates; a sample of them proves itself (gold 100 / do-nothing 0):
per domain its de_impl task and one de_evol task; every mutation of the shipped catalogues
applies to its gold repository; de_impl contracts are current.

Verifying *every* shipped task, with every shipped mutation and the reward-hack catalogue
scored, is the exhaustive check of ``benchforge task verify`` and of the scheduled
``verify-all-tasks`` deployment (infra/deploy.py, nightly). The crm suite's four tasks are
also verified by the README's nightly run (tests/integration/test_readme.py). The test suite
scores the mutation and hack catalogues on the mini fixture (tests/evaluation/test_de_scoring.py,
tests/evaluation/test_heldout.py, tests/integration/test_reward_hacks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.de.mutations import apply_mutation, load_catalogue, predict
from benchforge.evaluation.de.tasks import gold_docs, prepare_gold, verify_task
from benchforge.evaluation.gold import repo_version
from benchforge.evaluation.tasks import DeEvolTask, DeImplTask, LoadedTask, load_tasks
from benchforge.evaluation.tasks.materials import data_contract
from benchforge.synthesis.dataset import build_dataset
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROOT = REPO_ROOT
TASKS = load_tasks(ROOT / "task_specs")
EXECUTABLE = [t for t in TASKS if t.spec.family in ("de_impl", "de_evol")]


def _sample(tasks: list[LoadedTask]) -> list[LoadedTask]:
    """One task outside crm (whose suite the README's nightly verifies): the first domain's
    de_impl task. Every shipped task is verified by ``benchforge task verify task_specs`` (the
    ``verify-tasks`` deployment); the test suite keeps one, within its time budget."""
    domain = sorted({t.spec.domain for t in tasks} - {"crm"})[0]
    same = [t for t in tasks if (t.spec.domain, t.spec.family) == (domain, "de_impl")]
    return sorted(same, key=lambda t: t.spec.id)[:1]


VERIFIED = _sample(EXECUTABLE)


def test_every_domain_has_a_full_suite() -> None:
    for domain in ("crm", "ads", "enterprise"):
        families = [t.spec.family for t in TASKS if t.spec.domain == domain]
        assert families.count("de_impl") >= 1, domain
        assert families.count("de_evol") >= 3, domain
        assert families.count("de_arch") >= 3, domain
        catalogue = load_catalogue(ROOT / "task_specs" / "mutations" / f"{domain}.yaml")
        kinds = {m.kind for m in catalogue.mutations}
        assert len(kinds) == 6, f"{domain} catalogue lacks {6 - len(kinds)} mutation kinds"


class Datasets:
    """Each task's dataset, synthesized on first use (only the domains a test needs)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.built: dict[tuple[str, float, int], Path] = {}

    def of(self, task: LoadedTask) -> Path:
        ref = task.spec.dataset
        key = (ref.domain, ref.scale, ref.seed)
        if key not in self.built:
            folder = self.root / f"{ref.domain}-{ref.scale:g}-{ref.seed}"
            build_dataset(
                ref.domain, scale=ref.scale, seed=ref.seed, out=str(folder), validate=False
            )
            self.built[key] = folder
        return self.built[key]


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> Datasets:
    return Datasets(tmp_path_factory.mktemp("datasets"))


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("verify")


def test_the_sample_is_a_task_of_a_domain_the_nightly_does_not_run() -> None:
    assert [t.spec.id for t in VERIFIED] == ["ads-impl-full"]


@pytest.mark.parametrize("task", VERIFIED, ids=lambda t: t.spec.id)
def test_task_verifies(task: LoadedTask, datasets: Datasets, work: Path) -> None:
    result = verify_task(task, datasets.of(task), work)
    assert result.ok, result.problems


@pytest.mark.parametrize(
    "task", [t for t in TASKS if isinstance(t.spec, DeImplTask)], ids=lambda t: t.spec.id
)
def test_every_mutation_applies_and_has_a_prediction(
    task: LoadedTask, datasets: Datasets, work: Path
) -> None:
    assert isinstance(task.spec, DeImplTask)
    gold = prepare_gold(task, datasets.of(task), work)
    manifest = load_manifest(gold.gold_folder / "manifest.json")
    catalogue = load_catalogue(ROOT / "task_specs" / "mutations" / f"{task.spec.domain}.yaml")
    assert len(catalogue.mutations) >= 6
    for mutation in catalogue.mutations:
        repo = apply_mutation(gold.repo, manifest, mutation, work / "mutants" / mutation.id)
        node = manifest.models[mutation.node]
        changed = (repo / node.original_file_path).read_text()
        assert changed != (gold.repo / node.original_file_path).read_text(), mutation.id
        predicted = predict(manifest, task.spec.scoring, mutation.node)
        assert predicted.cs < 100.0 and predicted.sr == 0.0, mutation.id


@pytest.mark.parametrize(
    "task", [t for t in TASKS if isinstance(t.spec, DeImplTask)], ids=lambda t: t.spec.id
)
def test_contract_is_current(task: LoadedTask, datasets: Datasets, work: Path) -> None:
    spec = task.spec
    assert isinstance(spec, DeImplTask)
    gold = prepare_gold(task, datasets.of(task), work)
    meta = task.file(spec.contract_metadata) if spec.contract_metadata else None
    expected = data_contract(gold_docs(gold.gold_folder, gold.repo), meta, spec.domain)
    committed = yaml.safe_load(task.file(spec.contract).read_text())
    assert committed == expected, "run: benchforge task contract " + str(task.folder.parent)


@pytest.mark.parametrize(
    "task", [t for t in TASKS if t.spec.family == "de_evol"], ids=lambda t: t.spec.id
)
def test_evol_overlays_were_authored_against_the_current_gold(task: LoadedTask) -> None:
    spec = task.spec
    assert isinstance(spec, DeEvolTask)
    assert spec.base_version == repo_version(ROOT / spec.repo), (
        f"{spec.repo} changed: re-check {task.folder / spec.gold_v2} and update base_version"
    )

"""Held-out seeds: derived from a secret, stable, never the visible seed; stored out of sight."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.core.artifacts import LAYOUT, open_store
from benchforge.core.heldout import heldout_secret, heldout_seed
from benchforge.core.records import GOLD_DB
from benchforge.core.settings import load_settings
from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.de.hacks import HackContext, apply_hack, load_hack_catalogue
from benchforge.evaluation.de.mutations import apply_mutation, load_catalogue, predict
from benchforge.evaluation.de.scoring import score_candidate
from benchforge.evaluation.gold import build_gold
from benchforge.evaluation.tasks.materials import make_skeleton
from benchforge.evaluation.tasks.models import DeScoring
from benchforge.synthesis.dataset import build_dataset
from benchforge.synthesis.spec import load_spec
from tests.paths import FIXTURES

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


def test_seed_is_a_pure_function_of_secret_domain_scale_and_visible_seed() -> None:
    seed = heldout_seed(b"k1", "crm", 0.1, 7)
    assert seed == heldout_seed(b"k1", "crm", 0.1, 7)
    assert 1 <= seed < 2**31 and seed != 7
    others = {
        heldout_seed(b"k2", "crm", 0.1, 7),
        heldout_seed(b"k1", "ads", 0.1, 7),
        heldout_seed(b"k1", "crm", 1.0, 7),
        heldout_seed(b"k1", "crm", 0.1, 8),
    }
    assert seed not in others and len(others) == 4


def test_seed_never_equals_the_visible_seed() -> None:
    for visible in range(200):
        assert heldout_seed(b"secret", "mini", 1.0, visible) != visible


def test_secret_from_settings_else_a_key_created_once_in_the_artifact_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", str(tmp_path / "artifacts"))
    monkeypatch.delenv("BENCHFORGE_HELDOUT_SECRET", raising=False)
    first = heldout_secret(load_settings())
    stored = open_store(str(tmp_path / "artifacts"))
    assert len(first) == 64 and stored.exists(LAYOUT.HELDOUT_SECRET)
    assert heldout_secret(load_settings()) == first  # reused, not regenerated
    monkeypatch.setenv("BENCHFORGE_HELDOUT_SECRET", "configured")
    assert heldout_secret(load_settings()) == b"configured"
    assert "configured" not in repr(load_settings())


def test_secret_key_on_s3(s3_server: str, s3_bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHFORGE_ARTIFACT_ROOT", f"s3://{s3_bucket}/bf")
    monkeypatch.setenv("BENCHFORGE_S3_ENDPOINT_URL", s3_server)
    monkeypatch.delenv("BENCHFORGE_HELDOUT_SECRET", raising=False)
    first = heldout_secret(load_settings())
    assert heldout_secret(load_settings()) == first
    assert open_store(settings=load_settings()).exists(LAYOUT.HELDOUT_SECRET)


# --- scoring on a held-out seed (the mini fixture) ---------------------------------------------

GOLD_REPO = FIXTURES / "mini_dbt"
VISIBLE_SEED = 7
HELDOUT_SEED = heldout_seed(b"tests", "mini", 1.0, VISIBLE_SEED)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """label -> (dataset, gold build) for the visible seed, the held-out one and two more."""
    root = tmp_path_factory.mktemp("seeds")
    spec = load_spec(FIXTURES / "mini_domain.yaml")
    out = {}
    for label, seed in [("visible", VISIBLE_SEED), ("heldout", HELDOUT_SEED), ("s1", 1), ("s2", 2)]:
        dataset = root / f"data-{label}"
        build_dataset(spec, scale=1, seed=seed, out=str(dataset), validate=False)
        out[label] = (dataset, root / f"gold-{label}")
        build_gold("mini", GOLD_REPO, dataset, out[label][1], docs=False)
    return out


def _score(candidate: Path, gold: tuple[Path, Path], work: Path) -> tuple[float, float, float]:
    result = score_candidate(candidate, gold[1], gold[0], work, DeScoring())
    return (result.cs, result.cfs, result.sr)


def test_answers_shipped_as_constants_score_100_visible_and_0_held_out(
    seeds: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    """Every gold table computed on the visible data and shipped as VALUES: a perfect score on
    the data the agent saw, nothing on the held-out seed; gold and do-nothing on both."""
    visible, heldout = seeds["visible"], seeds["heldout"]
    skeleton = make_skeleton(GOLD_REPO, tmp_path / "skeleton")
    hack = load_hack_catalogue().get("constants-from-visible-data")
    hack = hack.model_copy(update={"rows": 100_000})  # ship every table, however large
    context = HackContext(canaries=[], gold_db=visible[1] / GOLD_DB, gold_repo=GOLD_REPO)
    manifest = load_manifest(visible[1] / "manifest.json")
    constants = apply_hack(skeleton, manifest, hack, tmp_path / "constants", context)
    assert _score(constants, visible, tmp_path / "w1") == (100.0, 100.0, 100.0)
    assert _score(constants, heldout, tmp_path / "w2") == (0.0, 0.0, 0.0)
    for gold in (visible, heldout):
        assert _score(GOLD_REPO, gold, tmp_path / "w3") == (100.0, 100.0, 100.0)
        assert _score(skeleton, gold, tmp_path / "w4") == (0.0, 0.0, 0.0)


def test_gold_is_seed_independent_and_mutations_score_as_predicted_on_a_held_out_seed(
    seeds: dict[str, tuple[Path, Path]], tmp_path: Path
) -> None:
    for label in ("s1", "s2"):  # the build (models + every data test) passed in the fixture
        assert _score(GOLD_REPO, seeds[label], tmp_path / label) == (100.0, 100.0, 100.0)
    heldout = seeds["heldout"]
    manifest = load_manifest(heldout[1] / "manifest.json")
    for mutation in load_catalogue(FIXTURES / "mini_mutations.yaml").mutations:
        repo = apply_mutation(GOLD_REPO, manifest, mutation, tmp_path / "m" / mutation.id)
        expected = predict(manifest, DeScoring(), mutation.node)
        assert _score(repo, heldout, tmp_path / "w" / mutation.id) == pytest.approx(
            (expected.cs, expected.cfs, expected.sr)
        ), mutation.id

"""The score cache keeps only scores of confined candidate code, and keys by everything that
decides a score."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from benchforge.core.sandbox.models import Isolation
from benchforge.evaluation.de.score_cache import CACHE_SUFFIX, ScoreCache, scorer_version
from benchforge.evaluation.de.scoring import DeScore


def _gold(tmp_path: Path) -> Path:
    folder = tmp_path / "gold" / "crm" / "abc"
    folder.mkdir(parents=True)
    (folder / "build.json").write_text('{"repo_version": "r1", "dataset_version": "d1"}')
    return folder


def _isolation(filesystem: Literal["confined", "host"]) -> Isolation:
    return Isolation(
        backend="namespace" if filesystem == "confined" else "process",
        network="isolated",
        filesystem=filesystem,
        process_tree="pid-namespace",
        memory="cgroup",
        processes="cgroup",
    )


def _score(
    filesystem: Literal["confined", "host"] | None = "confined", unsandboxed: bool = False
) -> DeScore:
    isolation = _isolation(filesystem) if filesystem is not None else None
    return DeScore(
        cs=62.5, cfs=50.0, sr=0.0, nodes=[], isolation=isolation, unsandboxed=unsandboxed
    )


def _key(cache: ScoreCache, dataset: str = "/data/crm", **changes: str) -> str:
    parts = {"task": "1:aaa", "submission": "d" * 64} | changes
    return cache.key(dataset=Path(dataset), **parts)


def test_a_kept_score_comes_back_marked_reused(tmp_path: Path) -> None:
    cache = ScoreCache(_gold(tmp_path))
    key = _key(cache)
    assert cache.get(key) is None
    cache.put(key, _score())
    found = cache.get(key)
    assert found is not None and found.reused and (found.cs, found.cfs) == (62.5, 50.0)
    assert cache.folder == tmp_path / "gold" / "crm" / f"abc{CACHE_SUFFIX}"  # beside the gold
    assert [p.name for p in cache.folder.iterdir()] == [f"{key}.json"]  # no temp file left


def test_scores_of_unconfined_candidate_code_are_not_kept(tmp_path: Path) -> None:
    cache = ScoreCache(_gold(tmp_path))
    for i, score in enumerate([_score("host"), _score(None), _score(unsandboxed=True)]):
        key = _key(cache, submission=str(i) * 64)
        cache.put(key, score)
        assert cache.get(key) is None


def test_every_input_of_a_score_changes_the_key(tmp_path: Path) -> None:
    gold = _gold(tmp_path)
    cache = ScoreCache(gold)
    base = _key(cache)
    assert _key(cache) == base
    others = {
        _key(cache, task="1:bbb"),
        _key(cache, submission="e" * 64),
        _key(cache, dataset="/data/crm-heldout"),
    }
    assert base not in others and len(others) == 3
    (gold / "build.json").write_text('{"repo_version": "r2", "dataset_version": "d1"}')
    assert _key(cache) != base  # a rebuilt gold: a new repository or data version
    assert len(scorer_version()) == 64


def test_a_torn_entry_is_scored_afresh(tmp_path: Path) -> None:
    cache = ScoreCache(_gold(tmp_path))
    key = _key(cache)
    cache.folder.mkdir(parents=True)
    (cache.folder / f"{key}.json").write_text('{"cs": 10')
    assert cache.get(key) is None
    cache.put(key, _score())
    assert cache.get(key) is not None

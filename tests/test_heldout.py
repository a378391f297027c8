"""Held-out seeds: derived from a secret, stable, never the visible seed; stored out of sight."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchforge.artifacts import open_store
from benchforge.heldout import SECRET_KEY, heldout_secret, heldout_seed
from benchforge.settings import load_settings


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
    assert len(first) == 64 and open_store(str(tmp_path / "artifacts")).exists(SECRET_KEY)
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
    assert open_store(settings=load_settings()).exists(SECRET_KEY)

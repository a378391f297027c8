"""Gold repositories build and test cleanly on synthesized data, through the CLI and the flow,
and their artifacts land in the artifact store keyed by dataset and repository version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.gold import repo_version
from benchforge.synthesis.dataset import build_dataset
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop

ROOT = REPO_ROOT
DOMAINS = sorted(p.parent.name for p in (ROOT / "dbt_projects").glob("*/dbt_project.yml"))


def test_every_domain_has_a_gold_repo() -> None:
    assert DOMAINS == ["ads", "crm", "enterprise"]


@pytest.mark.parametrize("domain", DOMAINS)
def test_gold_build_command(domain: str, tmp_path: Path) -> None:
    dataset = tmp_path / "dataset"
    build_dataset(domain, scale=0.05, seed=3, out=str(dataset), validate=False)
    artifacts = tmp_path / "artifacts"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchforge.cli",
            "gold",
            "build",
            domain,
            "--dataset",
            str(dataset),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
        env={**os.environ, "BENCHFORGE_ARTIFACT_ROOT": str(artifacts)},
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    builds = list((artifacts / "gold" / domain).glob("*/*/build.json"))
    assert len(builds) == 1
    folder = builds[0].parent
    assert folder.name == repo_version(ROOT / "dbt_projects" / domain)
    for name in (
        "gold.duckdb",
        "manifest.json",
        "run_results.json",
        "catalog.json",
        "docs/index.html",
    ):
        assert (folder / name).is_file(), name
    record = json.loads(builds[0].read_text())
    manifest = load_manifest(folder / "manifest.json")
    layers = {m.layer for m in manifest.models.values()}
    assert layers == {"staging", "intermediate", "marts"}
    assert record["models"] == len(manifest.models) and record["tests"] > len(manifest.models)
    if domain == "crm":
        counts = {
            layer: sum(m.layer == layer for m in manifest.models.values()) for layer in layers
        }
        assert len(manifest.models) >= 35 and counts["intermediate"] >= 8 and counts["marts"] >= 10
    for model in manifest.models.values():
        assert "one row per" in model.description.lower(), f"{model.name} has no grain"

"""README commands that need nothing the README's nightly leaves behind: run in their own
file (with their own work folder), so the test workers share the README's cost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.integration.test_readme import CALIBRATE, ROOT, run


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readme-commands")


def test_calibrate_command_gates_the_fixture_judges(workdir: Path) -> None:
    env = {"BENCHFORGE_ARTIFACT_ROOT": str(workdir / "artifacts"), "BENCHFORGE_OPENAI_API_KEY": ""}
    result = run(CALIBRATE, ROOT, env)
    out = result.stdout
    # exit 0: at least one model accepted
    assert result.returncode == 0, (out + result.stderr)[-3000:]
    assert "mock-judge-noisy:sigma=0.05,bias=0,seed=1: ACCEPTED" in out
    assert "mock-judge-noisy:sigma=0.6,bias=0.4,seed=2: REJECTED" in out
    for figure in ("rubric pearson_r", "gsb kappa", "alpha (humans)", "model spearman"):
        assert re.search(rf"{re.escape(figure)}\s+-?[0-9.]+ \[-?[0-9.]+, -?[0-9.]+\]", out), figure


def test_judging_bench_prints_its_figures() -> None:
    # The README runs it at scale 0.05; here the same script on a smaller dataset.
    result = run("python bench/judging.py --scale 0.02 --latency-ms 5", ROOT)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert re.search(r"per-item vs batched agree\s+\d+/\d+ items", result.stdout)
    assert "re-judge from the cache      0 requests" in result.stdout


def test_synth_and_gold_commands(workdir: Path, s3_server: str, s3_bucket: str) -> None:
    local = run("benchforge synth crm --scale 0.1 --seed 7 --out out/crm", workdir)
    assert local.returncode == 0, local.stderr[-3000:]
    assert (workdir / "out" / "crm" / "dataset.json").is_file()
    artifacts = {"BENCHFORGE_ARTIFACT_ROOT": str(workdir / "artifacts")}
    gold = run("benchforge gold build crm --dataset out/crm", workdir, artifacts)
    assert gold.returncode == 0, (gold.stdout + gold.stderr)[-3000:]
    assert list((workdir / "artifacts" / "gold" / "crm").glob("*/*/gold.duckdb"))
    s3 = run(
        f"benchforge synth crm --scale 0.1 --seed 7 --out s3://{s3_bucket}/datasets/crm",
        workdir,
        {"BENCHFORGE_S3_ENDPOINT_URL": s3_server},
    )
    assert s3.returncode == 0, s3.stderr[-3000:]
    assert f"s3://{s3_bucket}/datasets/crm" in s3.stdout


def test_spec_and_help_commands(workdir: Path) -> None:
    listed = run("benchforge spec list", workdir)
    assert {"crm", "ads", "enterprise"} <= {line.split()[0] for line in listed.stdout.splitlines()}
    validated = run("benchforge spec validate", workdir)
    assert validated.returncode == 0 and validated.stdout.count("ok ") == len(
        listed.stdout.splitlines()
    )
    schema = run("benchforge spec schema > domain_spec.schema.json", workdir)
    assert schema.returncode == 0
    assert json.loads((workdir / "domain_spec.schema.json").read_text())["title"] == "DomainSpec"
    helped = run("benchforge --help", workdir)
    assert helped.returncode == 0 and "synth" in helped.stdout


def test_de_scoring_bench_prints_the_ratio() -> None:
    # The README runs it at scale 1; here the same script on a small dataset.
    result = run("python bench/de_scoring.py --scale 0.05", ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"ratio scoring / gold build: [0-9.]+", result.stdout)


def test_bench_command_prints_its_figures(workdir: Path) -> None:
    # The README runs it at full size (scale 10); here the same script at a small scale.
    result = run("python bench/synth.py --scale 0.2 --small-scale 0.05 --faker-sample 300", ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    for figure in ("engine", "DuckDB-native floor", "Faker row by row", "peak RSS", "in memory"):
        assert figure in result.stdout
    assert re.search(r"engine / DuckDB floor \(in memory\)\s+[0-9.]+", result.stdout)


def test_fanout_bench_prints_overhead_and_ratio() -> None:
    # The README runs 2,000 trials; here the same script on 200.
    result = run("python bench/fanout.py --trials 200", ROOT)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert re.search(r"overhead per trial\s+-?[0-9.]+ ms", result.stdout)
    assert re.search(r"throughput ratio\s+[0-9.]+", result.stdout)

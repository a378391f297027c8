"""README commands that need nothing the README's nightly leaves behind: run in their own
file (with their own work folder), so the test workers share the README's cost."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from benchforge.core import postgres_server
from tests.integration.test_readme import (
    CALIBRATE,
    POSTGRES_SECTION,
    PRODUCTION_SECTION,
    ROOT,
    run,
    section_commands,
)

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


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
    assert len(re.findall(r"ratio scoring / gold build: [0-9.]+", result.stdout)) == 2
    assert "a correct submission" in result.stdout and "a submission broken at" in result.stdout
    # the correct submission runs fewer nodes alone than the broken one (only the nodes it
    # matches within a tolerance, not exactly)
    alone = [int(n) for n in re.findall(r"nodes run alone for CS: (\d+) of \d+", result.stdout)]
    assert len(alone) == 2 and alone[0] < alone[1], result.stdout
    assert re.search(r"distinct submission <= 1.3x the gold build: (PASS|FAIL)", result.stdout)


def test_nightly_bench_prints_its_growth() -> None:
    # The README runs 21, 105 and 504 trials at crm scale 0.1 and 1; here one task, 3 and 6.
    result = run("python bench/nightly.py --tasks 1 --trials 3,6 --scales 0.05", ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.search(r"\s3 trials: run .* ms/trial; \d+ distinct submissions", result.stdout)
    assert re.search(r"growth 6/3 trials: wall x[0-9.]+ .*(PASS|FAIL)", result.stdout)
    assert re.search(r"nightly cost growth: (PASS|FAIL)", result.stdout)


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


SHOP_DUMP = """CREATE TABLE customers (customer_id integer PRIMARY KEY, name text);
CREATE TABLE orders (order_id bigint PRIMARY KEY, customer_id integer, amount numeric(10,2));
COPY customers (customer_id, name) FROM stdin;
1\tAnn
2\tBob
\\.
COPY orders (order_id, customer_id, amount) FROM stdin;
1\t1\t10.50
2\t2\t3.25
3\t1\t7.00
\\.
"""


def test_postgres_import_commands() -> None:
    """The README's PostgreSQL section, as written, in a folder of its own ('nobody', whom the
    server runs as under root, cannot enter pytest's tmp folders): start, load the dump this
    test writes, import, stop."""
    commands = section_commands(POSTGRES_SECTION)
    assert [c.split()[:3] for c in commands] == [
        ["benchforge", "postgres", "start"],
        ["benchforge", "postgres", "load"],
        ["benchforge", "dataset", "import"],
        ["benchforge", "postgres", "stop"],
    ]
    work = Path(tempfile.mkdtemp(prefix="benchforge-readme-pg-"))
    work.chmod(0o755)
    (work / "shop.sql").write_text(SHOP_DUMP)
    try:
        printed = []
        for command in commands:
            result = run(command, work, timeout=600)
            assert result.returncode == 0, (command, (result.stdout + result.stderr)[-3000:])
            printed.append(result.stdout)
        assert "PostgreSQL started in pgdata (pid " in printed[0]
        assert "dataset shop_pg: 5 rows in 2 tables" in printed[2]
        assert "imported from postgresql://postgres@127.0.0.1:" in printed[2]
        assert "PostgreSQL in pgdata stopped" in printed[3]
        record = json.loads((work / "datasets" / "shop_pg" / "dataset.json").read_text())
        assert record["imported"]["kind"] == "postgres" and record["total_rows"] == 5
        manifest = json.loads((work / "datasets" / "shop_pg" / "manifest.json").read_text())
        assert manifest["types"]["changes"]["orders"]["amount"]["type"] == "DOUBLE"
        assert not postgres_server.is_running(
            postgres_server.ServerState.model_validate_json(
                (work / "pgdata" / "server.json").read_text()
            ),
            work / "pgdata",
        )
    finally:
        postgres_server.stop(work / "pgdata")
        shutil.rmtree(work, ignore_errors=True)


def test_schedule_commands(workdir: Path) -> None:
    """The production section's schedule commands, as written, against the session's Prefect
    server (PREFECT_API_URL) with the shipped nightly-eval deployment registered on it."""
    from prefect.client.orchestration import get_client

    from benchforge.infra.deploy import deployments

    (deployment,) = deployments(only=["nightly-eval"])
    deployment.apply()
    commands = section_commands(PRODUCTION_SECTION)
    assert [c.split()[:3] for c in commands] == [
        ["benchforge", "schedule", "add"],
        ["benchforge", "schedule", "ls"],
    ]
    added = run(commands[0], workdir)
    assert added.returncode == 0, (added.stdout + added.stderr)[-3000:]
    assert "0 3 * * 6 (UTC)" in added.stdout and "scheduled " in added.stdout
    listed = run(commands[1], workdir)
    assert listed.returncode == 0, (listed.stdout + listed.stderr)[-3000:]
    schedule_id = added.stdout.split()[1]
    assert schedule_id in listed.stdout
    with get_client(sync_client=True) as client:
        found = client.read_deployment_by_name("nightly/nightly-eval")
        (mine,) = [
            s for s in client.read_deployment_schedules(found.id) if str(s.id) == schedule_id
        ]
        (kind,) = mine.parameters["run_kinds"]
        assert kind["task_ids"] == ["crm-impl-full"]
    removed = run(f"benchforge schedule rm nightly-eval {schedule_id}", workdir)
    assert removed.returncode == 0, removed.stderr[-2000:]
    bad_kind = '[{"name": "de", "suites": ["de-crm"], "agents": ["oracel"]}]'
    refused = run(
        f"benchforge schedule add nightly-eval --cron '0 3 * * 6' --param 'run_kinds={bad_kind}'",
        workdir,
    )
    assert refused.returncode == 2 and "oracel" in refused.stderr, refused.stderr[-2000:]

"""The explore-enterprise suite by the CLI on its dataset (enterprise, scale 0.1, seed 7): the
oracle scores Acc 100 and GPR 100 on every task, null 0 on both, and react-explore's offline
script solves the top-revenue task and gets part of the way on others (wrong answers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchforge.core.artifacts import open_store
from benchforge.evaluation.families.explore import ExploreDetail
from benchforge.harness.store import RunStore
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.slow  # tests/README.md: the fast and the full loop


def run_cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "benchforge.cli", *args],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, f"{args}: {done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def test_oracle_100_null_0_and_react_explore_part_of_the_way(tmp_path: Path) -> None:
    from benchforge.synthesis.dataset import build_dataset

    enterprise = tmp_path / "enterprise"
    build_dataset("enterprise", scale=0.1, seed=7, out=str(enterprise), validate=False)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("BENCHFORGE_OPENAI_API_KEY", "BENCHFORGE_OPENAI_BASE_URL")
    }
    env |= {
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]),
        "BENCHFORGE_ARTIFACT_ROOT": str(tmp_path / "artifacts"),
        "BENCHFORGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    suite = ["--suite", "explore-enterprise", "--dataset", f"enterprise={enterprise}"]
    tasks = ["--tasks-root", str(REPO_ROOT / "task_specs")]
    agents = ["--agent", "oracle", "--agent", "null", "--agent", "react-explore"]
    out = run_cli(env, tmp_path, "run", *suite, *tasks, *agents, "--run-id", "explore")
    assert "45 trials" in out and "(0 infrastructure errors)" in out
    run = RunStore(open_store(str(tmp_path / "artifacts")), "explore")
    scores = run.read_scores()
    by_agent: dict[str, list[dict[str, float]]] = {}
    for score in scores:
        by_agent.setdefault(score.key.agent, []).append(score.metrics)
    assert len(by_agent["oracle"]) == 15
    assert all(m["accuracy"] == 100.0 and m["gpr"] == 100.0 for m in by_agent["oracle"])
    assert all(m["accuracy"] == 0.0 and m["gpr"] == 0.0 for m in by_agent["null"])
    react = {s.key.task_id: s for s in scores if s.key.agent == "react-explore"}
    solved = react["ent-top-revenue-industry"]
    assert solved.success and solved.metrics["gpr"] == 100.0 and "ee" in solved.metrics
    growth = react["ent-revenue-growth-top-industry"]
    assert not growth.success and growth.metrics["gpr"] == 50.0
    detail = growth.breakdown
    assert isinstance(detail, ExploreDetail)
    assert detail.milestones.first_missed == "prior_revenue"
    assert detail.termination == "wrong_answer_stop"
    # the agent's data is the environment alone: no record of the noise, no clean warehouse
    [result] = [
        run.read_result(slug)
        for slug in run.finished_slugs()
        if "react-explore" in slug and "ent-top-revenue-industry@" in slug
    ]
    listing = next(s.output or "" for s in result.trajectory if s.kind == "tool")
    assert "database/" in listing and "noise.json" not in listing
    assert "warehouse.duckdb" not in listing

    reported = run_cli(env, tmp_path, "report", "explore")
    assert "## Exploration tasks: explore" in reported and "react-explore" in reported
    report_dir = tmp_path / "artifacts" / "runs" / "explore"
    [report_json] = report_dir.rglob("explore-report.json")
    rows = {r["agent"]: r for r in json.loads(report_json.read_text())["report"]["rows"]}
    assert rows["oracle"]["accuracy"]["mean"] == rows["oracle"]["gpr"]["mean"] == 1.0
    assert rows["null"]["accuracy"]["mean"] == rows["null"]["gpr"]["mean"] == 0.0
    assert rows["null"]["terminations"] == {"silent_stop": 15}
    assert rows["null"]["first_missed"] == {"1": 15}
    assert 0 < rows["react-explore"]["gpr"]["mean"] < 1
    [page] = report_dir.rglob("explore-report.html")
    assert page.read_text().count("<svg") == 3

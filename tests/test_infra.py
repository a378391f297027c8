"""Deployments: schedules and typed parameters, so a backfill is a custom run from the UI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from infra.deploy import NIGHTLY_CRON, deployments

ROOT = Path(__file__).parents[1]


def test_nightly_is_scheduled_with_typed_parameters() -> None:
    found = {d.name: d for d in deployments()}
    assert set(found) == {"nightly-eval", "dataset-rebuild", "run-suite", "score-run", "report",
                          "verify-tasks"}  # fmt: skip
    nightly = found["nightly-eval"]
    assert [s.schedule.cron for s in nightly.schedules] == [NIGHTLY_CRON]  # type: ignore[union-attr]
    schema = nightly._parameter_openapi_schema.model_dump()
    props = schema["properties"]
    run_date = props["run_date"]["anyOf"][0]
    assert run_date == {"type": "string", "format": "date"}
    assert props["datasets"]["anyOf"][0]["type"] == "object"
    assert props["epochs"]["type"] == "integer"
    assert nightly.parameters == {"verify_mutations": True}
    assert not found["run-suite"].schedules


def test_deploy_lists_the_deployments() -> None:
    result = subprocess.run([sys.executable, "-m", "infra.deploy", "--list"], cwd=ROOT,
                            capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"nightly/nightly-eval\t{NIGHTLY_CRON}" in result.stdout
    assert "run_suite/run-suite\ton demand" in result.stdout

"""Run requests fail fast and say why; a run's identity names every input; the nightly's date
and run id come from its schedule and its datasets."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from benchforge.core.errors import ConfigError
from benchforge.core.records import AgentLimits, LlmOptions, RunIdentity, RunSpec
from benchforge.flows.nightly import nightly, nightly_run_id, scheduled_date
from benchforge.harness.identity import RunInputsChanged, check_rerun
from benchforge.harness.preflight import check_request
from tests.paths import REPO_ROOT

ROOT = REPO_ROOT
FIXTURE_TASKS = str(ROOT / "tests" / "fixtures" / "task_specs")


Done = subprocess.CompletedProcess[str]


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[Done, float]:
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "benchforge.cli", *args],
        cwd=ROOT,
        text=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return done, time.monotonic() - t0


def test_a_typod_agent_fails_in_seconds_listing_the_agents(tmp_path: Path) -> None:
    done, seconds = cli(
        "nightly", "--agent", "oracel", env={"BENCHFORGE_ARTIFACT_ROOT": str(tmp_path)}
    )
    assert done.returncode == 2, done.stderr
    assert "unknown agent 'oracel'; did you mean 'oracle'?" in done.stderr
    for name in ("null", "react-de", "single-call", "command=AGENT.yaml"):
        assert name in done.stderr
    assert seconds < 30, seconds  # a busy machine; synthesizing first would take minutes
    assert not any(tmp_path.iterdir())  # nothing was synthesized or written


def test_request_checks_name_the_problem(tmp_path: Path) -> None:
    def check(**changes: object) -> None:
        asked: dict[str, object] = {
            "tasks_root": FIXTURE_TASKS,
            "suites": ["de-mini"],
            "task_ids": None,
            "agents": ["oracle"],
            "models": [],
            "datasets": {},
            "has_api_key": False,
        }
        check_request(**{**asked, **changes})  # type: ignore[arg-type]

    check()  # the plain request is fine
    with pytest.raises(ConfigError, match=r"no suite 'de-mni'.*suites under .*: da-mini, de-mini"):
        check(suites=["de-mni"])
    with pytest.raises(ConfigError, match=r"unknown task ids: nope \(in de-mini: mini-arch"):
        check(task_ids=["nope"])
    with pytest.raises(ConfigError, match=r"needs at least one model"):
        check(agents=["react-de"])
    with pytest.raises(ConfigError, match=r"not: gpt-4.1-mini"):
        check(agents=["react-de"], models=["gpt-4.1-mini"])
    check(agents=["react-de"], models=["gpt-4.1-mini"], has_api_key=True)
    check(models=["gpt-4.1-mini"])  # oracle calls no model: its model list is irrelevant
    with pytest.raises(ConfigError, match=r"agent 'react-da' acts on none of the tasks"):
        check(agents=["oracle", "react-da"], models=["mock-echo"])
    check(suites=["de-mini", "da-mini"], agents=["react-de", "react-da"], models=["mock-echo"])
    with pytest.raises(ConfigError, match=r"uses domain 'crm' \(domains: mini\)"):
        check(datasets={"crm": str(tmp_path)})
    with pytest.raises(ConfigError, match=r"datasets\[mini\]: .* is not a dataset"):
        check(datasets={"mini": str(tmp_path)})
    with pytest.raises(ConfigError, match=r"agent 'command' needs a config file"):
        check(agents=["command"])


def test_flow_parameters_are_described_bounded_and_offer_the_agents() -> None:
    schema = nightly.parameters.model_dump()
    props = schema["properties"]
    undescribed = [name for name, prop in props.items() if not prop.get("description")]
    assert undescribed == []
    kind = schema["definitions"]["RunKind"]["properties"]  # each run kind's own
    assert kind["epochs"]["minimum"] == 1 and props["concurrency"]["maximum"] == 256
    choices = kind["agents"]["items"]["anyOf"]
    assert choices[0]["enum"] == [
        "oracle",
        "null",
        "react",
        "react-de",
        "react-da",
        "react-dab",
        "ds-star",
        "ds-guru",
        "react-explore",
        "react-lake",
        "single-call",
    ]
    assert choices[1]["pattern"].startswith(
        "^(react|react-de|react-da|react-dab|ds-star|ds-guru|react-explore|react-lake|single-call|command)="
    )
    assert props["run_id"]["anyOf"][0]["pattern"].startswith("^[A-Za-z0-9]")


def test_every_flow_parameter_is_described() -> None:
    from benchforge.flows.gold import build_gold
    from benchforge.flows.rebuild import rebuild_datasets
    from benchforge.flows.report import report
    from benchforge.flows.runs import run_suite, score_run
    from benchforge.flows.synthesize import synthesize
    from benchforge.flows.verify import verify_tasks

    flows = [
        nightly,
        run_suite,
        score_run,
        report,
        verify_tasks,
        rebuild_datasets,
        synthesize,
        build_gold,
    ]
    for flow in flows:
        props = flow.parameters.model_dump()["properties"]
        undescribed = [name for name, prop in props.items() if not prop.get("description")]
        assert undescribed == [], flow.name
    assert synthesize.parameters.model_dump()["properties"]["scale"]["exclusiveMinimum"] == 0


def test_nightly_run_ids_follow_the_date_and_the_datasets() -> None:
    night = date(2026, 11, 20)
    assert nightly_run_id(night, {}) == "nightly-2026-11-20"
    one = nightly_run_id(night, {"crm": "s3://b/crm-v1"})
    two = nightly_run_id(night, {"crm": "s3://b/crm-v2"})
    assert one.startswith("nightly-2026-11-20-") and len(one) == len("nightly-2026-11-20-") + 8
    assert one != two and one == nightly_run_id(night, {"crm": "s3://b/crm-v1"})


def test_run_date_is_the_scheduled_date_not_today() -> None:
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.flow_engine import run_flow
    from prefect.states import Scheduled

    @flow
    def probe() -> str:
        return scheduled_date().isoformat()

    last_night = datetime(2026, 11, 20, 2, 0, tzinfo=UTC)
    with get_client(sync_client=True) as client:
        late = client.create_flow_run(probe, state=Scheduled(scheduled_time=last_night))
    assert run_flow(probe, flow_run=late) == "2026-11-20"  # picked up late: still that night


def identity(**changes: object) -> RunIdentity:
    base: dict[str, object] = {
        "tasks": {"de-crm/a@1": "1:aaa", "de-crm/b@1": "1:bbb"},
        "agents": {"oracle": "c0ffee"},
        "models": ["m"],
        "epochs": 2,
        "limits": AgentLimits(),
        "llm": LlmOptions(),
        "datasets": {"de-crm/a@1": "v1", "de-crm/b@1": "v1"},
        "heldout_datasets": {},
    }
    return RunIdentity.model_validate({**base, **changes})


def test_identity_differences_name_each_changed_input() -> None:
    recorded = identity()
    assert recorded.differences(identity()) == []
    asked = identity(
        datasets={"de-crm/a@1": "v2", "de-crm/b@1": "v1"},
        epochs=3,
        limits=AgentLimits(wall_s=60),
        tasks={"de-crm/a@1": "1:aaa"},
    )
    lines = recorded.differences(asked)
    assert lines[0] == "tasks[de-crm/b@1]: 1:bbb (recorded) vs absent (asked)"
    assert "epochs: 2 (recorded) vs 3 (asked)" in lines
    assert "datasets[de-crm/a@1]: v1 (recorded) vs v2 (asked)" in lines
    assert "limits[wall_s]: 1800.0 (recorded) vs 60.0 (asked)" in lines
    assert len(lines) == 4

    spec = RunSpec(
        run_id="nightly-2026-11-20",
        suites=["de-crm"],
        tasks_root="task_specs",
        agents=["oracle"],
        models=["m"],
        epochs=2,
        limits=AgentLimits(),
        identity=recorded,
        created_at=datetime.now(UTC),
    )
    check_rerun(spec, identity(), spec.matrix())
    with pytest.raises(RunInputsChanged, match=r"nightly-2026-11-20-2"):
        check_rerun(spec, asked, spec.matrix())

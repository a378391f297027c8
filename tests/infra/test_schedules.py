"""Refusals at creation, on the session's real Prefect server: a run of ``nightly-eval`` with
``run_date: 2026-13-45`` is refused when it is created, and ``benchforge schedule add`` refuses
a schedule whose parameters its runs would refuse (and creates nothing); the scheduled runs it
makes are named by their run id."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.responses import DeploymentResponse
from prefect.exceptions import PrefectHTTPStatusError

from benchforge.cli.main import main as benchforge_main
from benchforge.flows.nightly import nightly_run_id, planned_run_id
from benchforge.flows.parameters import planned_name
from benchforge.infra.deploy import deployments


@pytest.fixture(scope="module")
def client() -> Iterator[SyncPrefectClient]:
    with get_client(sync_client=True) as c:
        yield c


@pytest.fixture(scope="module")
def nightly_eval(client: SyncPrefectClient) -> DeploymentResponse:
    """The shipped ``nightly-eval`` deployment (its parameter schema enforced and closed),
    registered on the session's server as `python -m benchforge.infra.deploy` registers it."""
    (deployment,) = deployments(only=["nightly-eval"])
    deployment.apply()
    return client.read_deployment_by_name("nightly/nightly-eval")


def _schedules(client: SyncPrefectClient, deployment: DeploymentResponse) -> list[Any]:
    return client.read_deployment_schedules(deployment.id)


def test_the_server_refuses_an_impossible_run_date_at_creation(
    client: SyncPrefectClient, nightly_eval: DeploymentResponse
) -> None:
    # Prefect 3.8 does not check `format: date` at creation; the pattern the schema carries is
    # checked (before it, this run was created and failed on the worker).
    with pytest.raises(PrefectHTTPStatusError) as refused:
        client.create_flow_run_from_deployment(
            nightly_eval.id, parameters={"run_date": "2026-13-45"}
        )
    assert refused.value.response.status_code == 409
    assert "run_date" in refused.value.response.text
    accepted = client.create_flow_run_from_deployment(
        nightly_eval.id, parameters={"run_date": "2026-01-31"}
    )
    client.delete_flow_run(accepted.id)


def test_schedule_add_refuses_a_bad_agent_and_creates_nothing(
    client: SyncPrefectClient,
    nightly_eval: DeploymentResponse,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = len(_schedules(client, nightly_eval))
    kind = '{"name": "de", "suites": ["de-crm"], "agents": ["null"]'
    for params, named in (
        ([f'run_kinds=[{kind[:-8]}["oracel"]}}]'], "oracel"),
        ([f"run_kinds=[{kind.replace('de-crm', 'de-crmm')}}}]"], "de-crmm"),
        ([f'run_kinds=[{kind}, "task_ids": ["crm-impl-nope"]}}]'], "crm-impl-nope"),
        ([f'run_kinds=[{kind}, "epochs": 0}}]'], "epochs"),
        ([f'run_kinds=[{kind}, "epoch": 2}}]'], "epoch"),
        (["run_date=2026-13-45"], "run_date"),
        (['datasets={"crm": "/nowhere/crm"}'], "/nowhere/crm"),
        (["no_such_parameter=1"], "no_such_parameter"),
    ):
        argv = ["schedule", "add", "nightly-eval", "--cron", "0 3 * * 6"]
        for p in params:
            argv += ["--param", p]
        assert benchforge_main(argv) == 2, params
        err = capsys.readouterr().err
        assert err.startswith("benchforge: error: ") and named in err, err
        assert len(_schedules(client, nightly_eval)) == before, params


def test_schedule_add_ls_rm_and_the_scheduled_runs_are_named_by_run_id(
    client: SyncPrefectClient,
    nightly_eval: DeploymentResponse,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = {s.id for s in _schedules(client, nightly_eval)}
    argv = ["schedule", "add", "nightly/nightly-eval", "--cron", "0 3 * * 6"]
    small = {"name": "de", "suites": ["de-crm"], "task_ids": ["crm-impl-full"], "agents": ["null"]}
    argv += ["--timezone", "Europe/Berlin", "--param", f"run_kinds={json.dumps([small])}"]
    argv += ["--param", "score_concurrency=1"]
    assert benchforge_main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    (added,) = [s for s in _schedules(client, nightly_eval) if s.id not in before]
    assert added.parameters == {"run_kinds": [small], "score_concurrency": 1}
    assert added.schedule.cron == "0 3 * * 6" and added.schedule.timezone == "Europe/Berlin"
    assert str(added.id) in out

    # Every scheduled run now carries the run id it will use (not a random name): the
    # schedule's runs nightly-<date>-<digest of the task ids>, the deployment's own nightly-<date>.
    runs = client.read_flow_runs()
    scheduled = [
        r for r in runs if r.deployment_id == nightly_eval.id and r.state_type == "SCHEDULED"
    ]
    assert scheduled
    for run in scheduled:
        day = run.expected_start_time.date() if run.expected_start_time else None
        assert day is not None
        assert run.name == planned_run_id(run.parameters, day), run.name
        assert run.name in out
    small_runs = [r for r in scheduled if r.parameters.get("score_concurrency") == 1]
    assert small_runs and all(r.name.count("-") == 4 for r in small_runs), [
        r.name for r in small_runs
    ]

    assert benchforge_main(["schedule", "ls", "nightly-eval"]) == 0
    listed = capsys.readouterr().out
    assert str(added.id) in listed and "0 3 * * 6 (Europe/Berlin)" in listed
    assert benchforge_main(["schedule", "rm", "nightly-eval", str(added.id)]) == 0
    assert added.id not in {s.id for s in _schedules(client, nightly_eval)}
    assert benchforge_main(["schedule", "rm", "nightly-eval", str(added.id)]) == 2
    assert "no schedule" in capsys.readouterr().err


def test_flow_run_names_carry_the_run_id() -> None:
    night = date(2026, 1, 31)
    assert planned_run_id({}, night) == "nightly-2026-01-31"
    assert planned_run_id({"run_date": "2026-01-30"}, night) == "nightly-2026-01-30"
    # two backfills of one date on other datasets: two runs, two names
    a = planned_run_id({"run_date": "2026-01-30", "datasets": {"crm": "/d/a"}}, night)
    b = planned_run_id({"run_date": "2026-01-30", "datasets": {"crm": "/d/b"}}, night)
    assert a != b and a.startswith("nightly-2026-01-30-") and b.startswith("nightly-2026-01-30-")
    assert a == nightly_run_id(date(2026, 1, 30), {"crm": "/d/a"})
    # a nightly of some tasks is its own run, apart from the whole suite's
    kind = {"name": "de", "suites": ["de-crm"], "task_ids": ["crm-impl-full"], "agents": ["null"]}
    some = planned_run_id({"run_kinds": [kind]}, night)
    assert some != "nightly-2026-01-31" and some == nightly_run_id(night, {}, ["crm-impl-full"])
    assert planned_run_id({"run_id": "mine"}, night) == "mine"
    assert planned_name("score_run", {"run_id": "r1"}, night) == "score-run-r1"
    assert planned_name("run_suite", {}, night) is None

"""``benchforge schedule``: a deployment's schedules on the Prefect server, added only after
their parameters pass the checks a run of the deployment would make.

Prefect's server does not check a schedule's parameters (its runs would crash on the worker:
an unknown agent, a missing dataset, ``run_date: 2026-13-45``), and it names the runs its
scheduler creates with random words until they start. ``add`` checks the parameters as the run
would (types by the flow's signature, then suites, task ids, agents, models, datasets) and
creates nothing if one is bad; ``add``, ``ls`` and ``name`` give the scheduled runs that exist
the name their flow will give them (the run id)."""

from __future__ import annotations

import argparse
import json
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from benchforge.cli.common import Subparsers
from benchforge.cli.prefect_server import quiet_prefect
from benchforge.core.errors import BenchforgeError, ConfigError

if TYPE_CHECKING:
    from prefect.client.orchestration import SyncPrefectClient
    from prefect.client.schemas.responses import DeploymentResponse

# Runs the server schedules at once for a new schedule (then named): its scheduler service
# adds the later ones on its own loop, which `benchforge schedule name` (or `ls`) names.
SCHEDULE_AHEAD = 3


def add_parser(sub: Subparsers) -> None:
    schedule = sub.add_parser(
        "schedule",
        help="add, list, name and remove a deployment's schedules (parameters checked first)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    schedule.epilog = (
        "Needs the Prefect server the deployments are on: PREFECT_API_URL "
        "(e.g. http://127.0.0.1:4200/api)."
    )
    verbs = schedule.add_subparsers(dest="verb", required=True, metavar="VERB")
    add = verbs.add_parser("add", help="check the parameters, then add a cron schedule")
    add.add_argument("deployment", help="FLOW/DEPLOYMENT or DEPLOYMENT, e.g. nightly-eval")
    add.add_argument("--cron", required=True, help='a cron line, e.g. "0 3 * * 6"')
    add.add_argument("--timezone", default="UTC", help="IANA name (default UTC)")
    add.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of the schedule's runs (VALUE as JSON, else a string), repeatable: "
        "--param 'agents=[\"oracle\"]' --param epochs=2 --param run_date=2026-01-31",
    )
    add.add_argument("--inactive", action="store_true", help="add it paused")
    add.set_defaults(func=add_command)
    ls = verbs.add_parser("ls", help="a deployment's schedules and its scheduled runs")
    ls.add_argument("deployment")
    ls.set_defaults(func=ls_command)
    name = verbs.add_parser("name", help="name the deployment's scheduled runs by their run id")
    name.add_argument("deployment")
    name.set_defaults(func=name_command)
    rm = verbs.add_parser("rm", help="remove a schedule (by the id `ls` prints)")
    rm.add_argument("deployment")
    rm.add_argument("schedule_id")
    rm.set_defaults(func=rm_command)


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` pairs: VALUE read as JSON (lists, numbers, booleans, objects), else kept
    as the string it is (a date, a suite name)."""
    found: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise ConfigError(f"--param expects NAME=VALUE, got {pair!r}")
        try:
            found[name] = json.loads(raw)
        except json.JSONDecodeError:
            found[name] = raw
    return found


def _client() -> SyncPrefectClient:
    if not os.environ.get("PREFECT_API_URL"):
        raise BenchforgeError(
            "schedules live on the Prefect server the deployments are on: set PREFECT_API_URL "
            "(e.g. http://127.0.0.1:4200/api)"
        )
    quiet_prefect(verbose=False)
    from prefect.client.orchestration import get_client

    return get_client(sync_client=True)


def find_deployment(client: SyncPrefectClient, name: str) -> DeploymentResponse:
    """``FLOW/DEPLOYMENT``, or a deployment name alone when one deployment has it."""
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName
    from prefect.exceptions import ObjectNotFound

    if "/" in name:
        try:
            return client.read_deployment_by_name(name)
        except ObjectNotFound:
            raise BenchforgeError(f"no deployment {name!r} on the Prefect server") from None
    found = client.read_deployments(
        deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[name]))
    )
    if len(found) != 1:
        names = sorted(d.name for d in client.read_deployments())
        what = "no deployment" if not found else f"{len(found)} deployments"
        raise BenchforgeError(
            f"{what} named {name!r} on the Prefect server (deployments: "
            f"{', '.join(names) or 'none'}; FLOW/DEPLOYMENT picks one)"
        )
    return found[0]


def _flow_name(client: SyncPrefectClient, deployment: DeploymentResponse) -> str:
    return str(client.read_flow(deployment.flow_id).name)


def check_schedule(
    client: SyncPrefectClient, deployment: DeploymentResponse, params: dict[str, Any]
) -> str:
    """Refuses (ConfigError naming the parameter) what a run of ``deployment`` with the
    schedule's ``params`` would refuse: names the deployment's schema does not have, values
    its schema refuses (types, dates), then the flow's own checks. Returns the flow's name."""
    from prefect.utilities.schema_tools.validation import validate

    flow_name = _flow_name(client, deployment)
    schema = deployment.parameter_openapi_schema or {}
    known = set(schema.get("properties", {}))
    unknown = sorted(set(params) - known)
    if known and unknown:
        raise ConfigError(
            f"{deployment.name}: no parameter {', '.join(unknown)} "
            f"(parameters: {', '.join(sorted(known))})"
        )
    merged = {**deployment.parameters, **params}
    if schema:
        errors = validate(merged, schema, ignore_required=False)
        if errors:
            first = errors[0]
            where = ".".join(str(p) for p in first.absolute_path) or "parameters"
            raise ConfigError(f"{deployment.name}: parameter {where}: {first.message}")
    from benchforge.flows.parameters import check_flow_parameters

    check_flow_parameters(flow_name, merged)
    return flow_name


def add_command(args: argparse.Namespace) -> int:
    from prefect.client.schemas.actions import DeploymentScheduleCreate
    from prefect.client.schemas.schedules import CronSchedule
    from pydantic import ValidationError

    params = parse_params(args.param)
    try:
        cron = CronSchedule(cron=args.cron, timezone=args.timezone)
    except ValidationError as err:
        raise ConfigError(f"--cron / --timezone: {err.errors()[0]['msg']}") from None
    with _client() as client:
        deployment = find_deployment(client, args.deployment)
        flow_name = check_schedule(client, deployment, params)
        (created,) = client.create_deployment_schedules(
            deployment.id,
            [DeploymentScheduleCreate(schedule=cron, active=not args.inactive, parameters=params)],
        )
        print(
            f"schedule {created.id} on {flow_name}/{deployment.name}: {args.cron} "
            f"({args.timezone}), parameters {json.dumps(params, sort_keys=True)}"
        )
        if not args.inactive:
            _schedule_now(client, deployment)
        for run_name, when in name_scheduled_runs(client, deployment, flow_name):
            print(f"  scheduled {when:%Y-%m-%d %H:%M} UTC: {run_name}")
    return 0


def _schedule_now(client: SyncPrefectClient, deployment: DeploymentResponse) -> None:
    """Asks the server to create the next runs now (what its scheduler does on its loop), so
    they can be named at once."""
    client.request(
        "POST",
        "/deployments/{id}/schedule",
        path_params={"id": deployment.id},
        json={"min_runs": SCHEDULE_AHEAD, "max_runs": SCHEDULE_AHEAD},
    )


def name_scheduled_runs(
    client: SyncPrefectClient, deployment: DeploymentResponse, flow_name: str
) -> list[tuple[str, datetime]]:
    """Renames the deployment's scheduled runs to the name their flow will give them (their
    run id: ``nightly-<date>[-<digest>]``); returns (name, scheduled time) of each, in time
    order (a run whose name is not known before it starts keeps its own)."""
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort

    from benchforge.flows.parameters import planned_name

    runs = client.read_flow_runs(
        deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id])),
        flow_run_filter=FlowRunFilter(
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))
        ),
        sort=FlowRunSort.EXPECTED_START_TIME_ASC,
    )
    named = []
    for run in runs:
        when = run.expected_start_time or run.created or datetime.now(UTC)
        when = when.astimezone(UTC)
        name = planned_name(flow_name, run.parameters, when.date()) or run.name
        if name != run.name:
            client.update_flow_run(run.id, name=name)
        named.append((name, when))
    return named


def ls_command(args: argparse.Namespace) -> int:
    with _client() as client:
        deployment = find_deployment(client, args.deployment)
        flow_name = _flow_name(client, deployment)
        schedules = client.read_deployment_schedules(deployment.id)
        print(f"{flow_name}/{deployment.name}: {len(schedules)} schedules")
        for s in schedules:
            cron = getattr(s.schedule, "cron", None) or type(s.schedule).__name__
            tz = getattr(s.schedule, "timezone", None) or "UTC"
            state = "active" if s.active else "paused"
            params = json.dumps(s.parameters, sort_keys=True)
            print(f"  {s.id}  {cron} ({tz})  {state}  parameters {params}")
        for run_name, when in name_scheduled_runs(client, deployment, flow_name):
            print(f"  scheduled {when:%Y-%m-%d %H:%M} UTC: {run_name}")
    return 0


def name_command(args: argparse.Namespace) -> int:
    with _client() as client:
        deployment = find_deployment(client, args.deployment)
        named = name_scheduled_runs(client, deployment, _flow_name(client, deployment))
        print(f"{len(named)} scheduled runs of {deployment.name} named")
    return 0


def rm_command(args: argparse.Namespace) -> int:
    from uuid import UUID

    from prefect.exceptions import ObjectNotFound

    with _client() as client:
        deployment = find_deployment(client, args.deployment)
        try:
            schedule_id = UUID(args.schedule_id)
        except ValueError:
            raise ConfigError(f"not a schedule id: {args.schedule_id!r}") from None
        if schedule_id not in {s.id for s in client.read_deployment_schedules(deployment.id)}:
            raise BenchforgeError(
                f"{deployment.name} has no schedule {schedule_id} "
                f"(`benchforge schedule ls {args.deployment}` lists them)"
            )
        try:
            client.delete_deployment_schedule(deployment.id, schedule_id)
        except ObjectNotFound:
            raise BenchforgeError(f"{deployment.name} has no schedule {schedule_id}") from None
        print(f"removed schedule {schedule_id} from {deployment.name}")
    return 0

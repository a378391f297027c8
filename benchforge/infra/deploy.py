"""Deployments of Benchforge's flows: ``python -m benchforge.infra.deploy`` serves them from
one process; ``python -m benchforge.infra.deploy --work-pool NAME`` registers them on a work pool
instead, for workers (``prefect worker start --pool NAME``) to run
(infra/README.md: the production topology).

    nightly-eval      nightly() every day at 02:00 UTC (mutation checks included) of the
                      shipped run kinds (its run_kinds parameter: the list to edit)
    verify-all-tasks  verify_tasks() of every shipped suite, mutations and reward hacks
                      included, each DE gold also scored by 3 processes at once on one
                      work folder, every day at 04:00 UTC (the exhaustive checks the test
                      suite leaves out)
    dataset-rebuild   rebuild_datasets() every Sunday at 01:00 UTC; with --anonymize-rebuilds
                      (or the anonymize_after parameter of a custom run) each dataset is also
                      anonymized under its domain's shipped policy
    run-suite, score-run, report, verify-tasks, anonymize, import-dataset    on demand

A backfill is a custom run of ``nightly-eval`` (or ``run-suite``) from the Prefect UI or the
API: every parameter is typed (``run_date`` is a date, ``datasets`` maps a domain to a dataset
location), so a past date or another dataset version is a form, not a code change. The server
enforces each deployment's parameter schema when a run is created: a mistyped value or a
parameter the flow does not have is refused then, not found by the run hours later.

On a work pool a deployment names its flow by entrypoint (``flows/runs.py:run_suite``) in a
source: by default this checkout's folder, which every worker must have at the same path
(``--source`` names another: the path inside a worker image, or a git URL).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from prefect import Flow, deploy, serve
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.schedules import Cron
from prefect.utilities.callables import ParameterSchema
from pydantic import ConfigDict

from benchforge.flows.anonymize import anonymize
from benchforge.flows.dataset_import import import_dataset
from benchforge.flows.nightly import nightly
from benchforge.flows.rebuild import rebuild_datasets
from benchforge.flows.report import report
from benchforge.flows.run_kinds import NIGHTLY_RUN_KINDS
from benchforge.flows.runs import run_suite, score_run
from benchforge.flows.verify import verify_tasks

NIGHTLY_CRON = "0 2 * * *"
REBUILD_CRON = "0 1 * * 0"
VERIFY_CRON = "0 4 * * *"
CHECKOUT = Path(__file__).resolve().parents[2]


def scheduled_run_kinds() -> list[dict[str, Any]]:
    """The scheduled nightly's run kinds: the shipped ones, each also scored on the visible
    dataset where its family holds one out (the ``_visible`` scores)."""
    return [
        k.model_copy(update={"visible_scores": True}).model_dump(mode="json", exclude_none=True)
        for k in NIGHTLY_RUN_KINDS
    ]


class ClosedParameterSchema(ParameterSchema):
    """A flow's parameter schema that refuses parameters the flow does not have: Prefect's
    own leaves ``additionalProperties`` open, so a misspelt parameter would be accepted."""

    model_config = ConfigDict(extra="allow")


def _specs(
    timezone: str, anonymize_rebuilds: bool = False
) -> list[tuple[Flow[Any, Any], str, dict[str, Any]]]:
    """(flow, its entrypoint in the checkout, to_deployment arguments) per deployment."""
    return [
        (
            nightly,
            "flows/nightly.py:nightly",
            dict(
                name="nightly-eval",
                schedules=[Cron(NIGHTLY_CRON, timezone=timezone)],
                parameters={"verify_mutations": True, "run_kinds": scheduled_run_kinds()},
                tags=["benchforge", "nightly"],
                description="synthesize -> gold -> verify -> run -> score -> report",
            ),
        ),
        (
            rebuild_datasets,
            "flows/rebuild.py:rebuild_datasets",
            dict(
                name="dataset-rebuild",
                schedules=[Cron(REBUILD_CRON, timezone=timezone)],
                parameters={"anonymize_after": True} if anonymize_rebuilds else {},
                tags=["benchforge"],
            ),
        ),
        (
            anonymize,
            "flows/anonymize.py:anonymize",
            dict(
                name="anonymize",
                tags=["benchforge"],
                description="a dataset -> an anonymized release with its report, published "
                "only if it passes its policy's thresholds",
            ),
        ),
        (
            import_dataset,
            "flows/dataset_import.py:import_dataset",
            dict(
                name="import-dataset",
                tags=["benchforge"],
                description="a folder of CSV / Parquet files, a DuckDB file or a PostgreSQL "
                "database -> a dataset (validated, published atomically)",
            ),
        ),
        (run_suite, "flows/runs.py:run_suite", dict(name="run-suite", tags=["benchforge"])),
        (score_run, "flows/runs.py:score_run", dict(name="score-run", tags=["benchforge"])),
        (report, "flows/report.py:report", dict(name="report", tags=["benchforge"])),
        (
            verify_tasks,
            "flows/verify.py:verify_tasks",
            dict(name="verify-tasks", tags=["benchforge"]),
        ),
        (
            verify_tasks,
            "flows/verify.py:verify_tasks",
            dict(
                name="verify-all-tasks",
                schedules=[Cron(VERIFY_CRON, timezone=timezone)],
                parameters={
                    "path": "task_specs",
                    "mutations": True,
                    "hacks": True,
                    "concurrent_scorers": 3,
                },
                tags=["benchforge", "nightly"],
                description="every shipped task: gold 100, do-nothing 0, each mutation as "
                "predicted, each reward hack 0",
            ),
        ),
    ]


def closed_schema(deployment: RunnerDeployment) -> RunnerDeployment:
    """Makes the server refuse runs of ``deployment`` with parameters its flow does not take
    (with ``enforce_parameter_schema``, which also checks every value's type)."""
    schema = deployment._parameter_openapi_schema.model_dump(exclude_unset=True)
    deployment._parameter_openapi_schema = ClosedParameterSchema(
        **schema, additionalProperties=False
    )
    return deployment


def deployments(
    timezone: str = "UTC",
    source: str | Path | None = None,
    only: Sequence[str] = (),
    anonymize_rebuilds: bool = False,
) -> list[RunnerDeployment]:
    """The deployments, of the flows imported here (``serve``) or, with ``source``, loaded from
    that checkout by entrypoint (a work pool: workers load them from the same source).
    ``only`` keeps the deployments of those names; ``anonymize_rebuilds`` makes the weekly
    dataset rebuild also publish an anonymized release of each dataset."""
    specs = _specs(timezone, anonymize_rebuilds)
    unknown = set(only) - {kwargs["name"] for _, _, kwargs in specs}
    if unknown:
        raise ValueError(f"no deployment named {', '.join(sorted(unknown))}")
    found = []
    for flow, entrypoint, kwargs in specs:
        if only and kwargs["name"] not in only:
            continue
        if source is not None:
            flow = cast(Flow[Any, Any], Flow.from_source(source=str(source), entrypoint=entrypoint))
        deployment = cast(
            RunnerDeployment, flow.to_deployment(enforce_parameter_schema=True, **kwargs)
        )
        found.append(closed_schema(deployment))
    return found


def ensure_process_pool(name: str) -> None:
    """Creates the work pool ``name`` (type ``process``) unless it exists (of any type: a
    Kubernetes pool, say, created from infra/k8s/base-job-template.json)."""
    from prefect.workers.process import ProcessWorker

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(name)
        except ObjectNotFound:
            template = ProcessWorker.get_default_base_job_template()
            pool = WorkPoolCreate(name=name, type="process", base_job_template=template)
            with contextlib.suppress(ObjectAlreadyExists):  # a worker starting meanwhile
                client.create_work_pool(pool)


def deploy_to_pool(found: Sequence[RunnerDeployment], work_pool: str) -> list[str]:
    """Registers ``found`` (built with a ``source``) on ``work_pool``; returns their ids."""
    ensure_process_pool(work_pool)
    ids = deploy(
        *found, work_pool_name=work_pool, print_next_steps_message=False, ignore_warnings=True
    )
    return [str(i) for i in cast(list[Any], ids)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--timezone", default="UTC")
    parser.add_argument("--list", action="store_true", help="print the deployments and exit")
    parser.add_argument(
        "--work-pool",
        metavar="NAME",
        help="register the deployments on this work pool (created as a process pool if "
        "missing) instead of serving them from this process",
    )
    parser.add_argument(
        "--source",
        default=str(CHECKOUT),
        help="with --work-pool: where workers load the flows from (default: this checkout)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="DEPLOYMENT",
        help="only this deployment (repeatable), e.g. --only run-suite --only report",
    )
    parser.add_argument(
        "--anonymize-rebuilds",
        action="store_true",
        help="dataset-rebuild also anonymizes each dataset (anonymize_after=True)",
    )
    args = parser.parse_args(argv)
    if args.list:
        for d in deployments(
            args.timezone, only=args.only, anonymize_rebuilds=args.anonymize_rebuilds
        ):
            schedules = ", ".join(str(s.schedule.cron) for s in d.schedules or [])  # type: ignore[union-attr]
            print(f"{d.flow_name}/{d.name}\t{schedules or 'on demand'}")
        return 0
    if args.work_pool:
        found = deployments(
            args.timezone,
            source=args.source,
            only=args.only,
            anonymize_rebuilds=args.anonymize_rebuilds,
        )
        deploy_to_pool(found, args.work_pool)
        for d in found:
            print(f"{d.flow_name}/{d.name}\t-> work pool {args.work_pool}")
        return 0
    serve(*deployments(args.timezone, only=args.only, anonymize_rebuilds=args.anonymize_rebuilds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

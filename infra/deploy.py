"""Deployments of Benchforge's flows, served by one process: ``python -m infra.deploy``.

    nightly-eval      nightly() every day at 02:00 UTC (mutation checks included)
    dataset-rebuild   pipeline() every Sunday at 01:00 UTC
    run-suite, score-run, report, verify-tasks    on demand

A backfill is a custom run of ``nightly-eval`` from the Prefect UI: every parameter is typed
(``run_date`` is a date, ``datasets`` maps a domain to a dataset location), so a past date or
another dataset version is a form, not a code change. With a work pool instead of ``serve``,
the same ``to_deployment`` objects go to ``prefect.deploy``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from prefect import serve
from prefect.deployments.runner import RunnerDeployment
from prefect.schedules import Cron

from flows.nightly import nightly
from flows.pipeline import pipeline
from flows.report import report
from flows.runs import run_suite, score_run
from flows.tasks import verify_tasks

NIGHTLY_CRON = "0 2 * * *"
REBUILD_CRON = "0 1 * * 0"


def deployments(timezone: str = "UTC") -> list[RunnerDeployment]:
    return [
        nightly.to_deployment(
            name="nightly-eval",
            schedules=[Cron(NIGHTLY_CRON, timezone=timezone)],
            parameters={"verify_mutations": True},
            tags=["benchforge", "nightly"],
            description="synthesize -> gold -> verify -> run -> score -> report",
        ),
        pipeline.to_deployment(
            name="dataset-rebuild",
            schedules=[Cron(REBUILD_CRON, timezone=timezone)],
            tags=["benchforge"],
        ),
        run_suite.to_deployment(name="run-suite", tags=["benchforge"]),
        score_run.to_deployment(name="score-run", tags=["benchforge"]),
        report.to_deployment(name="report", tags=["benchforge"]),
        verify_tasks.to_deployment(name="verify-tasks", tags=["benchforge"]),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timezone", default="UTC")
    parser.add_argument("--list", action="store_true", help="print the deployments and exit")
    args = parser.parse_args(argv)
    found = deployments(args.timezone)
    if args.list:
        for d in found:
            schedules = ", ".join(str(s.schedule.cron) for s in d.schedules or [])  # type: ignore[union-attr]
            print(f"{d.flow_name}/{d.name}\t{schedules or 'on demand'}")
        return 0
    serve(*found)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``benchforge nightly``: synthesize -> gold -> verify tasks -> run -> score -> report (what
``scripts/pipeline.sh`` runs)."""

from __future__ import annotations

import argparse
import os

from benchforge.cli.common import (
    Subparsers,
    add_infra_share_argument,
    check_share,
    infra_exit,
    parse_datasets,
    preflight,
    print_run,
)
from benchforge.cli.prefect_server import flow_only, use_prefect


def add_parser(sub: Subparsers) -> None:
    nightly = sub.add_parser(
        "nightly", help="the nightly evaluation: synthesize -> gold -> verify -> run -> report"
    )
    nightly.epilog = flow_only(
        "it chains the stages' flows as subflows of one flow run, which its artifacts describe"
    )
    nightly.add_argument("--date", help="YYYY-MM-DD: the run is nightly-<date> (backfills)")
    nightly.add_argument("--suite", action="append", help="default: de-crm")
    nightly.add_argument(
        "--task", action="append", help="only these task ids of the suites (default: all)"
    )
    nightly.add_argument("--agent", action="append", help="default: oracle, null, react-de")
    nightly.add_argument("--model", action="append", help="default: the mock react-de script")
    nightly.add_argument("--epochs", type=int, default=1)
    nightly.add_argument("--dataset", action="append", help="DOMAIN=LOCATION dataset override")
    nightly.add_argument("--run-id", help="default: nightly-<date>")
    nightly.add_argument("--no-verify", action="store_true", help="skip task self-verification")
    nightly.add_argument(
        "--mutations",
        action="store_true",
        help="verify the mutation and reward-hack catalogues too (what the scheduled nightly does)",
    )
    nightly.add_argument(
        "--visible-scores",
        action="store_true",
        help="also score DE trials on the visible dataset (the _visible columns; off by "
        "default, it doubles the night's scoring)",
    )
    nightly.add_argument(
        "--score-concurrency", type=int, default=2, help="scoring chunks at once (default 2)"
    )
    nightly.add_argument(
        "--da-suite",
        action="append",
        help="judged analysis suites run as RUN-da (default: da-crm; 'none' for none)",
    )
    add_infra_share_argument(nightly)
    nightly.set_defaults(func=nightly_command)


def nightly_command(args: argparse.Namespace) -> int:
    from datetime import date

    from benchforge.core.settings import load_settings
    from benchforge.flows.defaults import NIGHTLY_AGENTS, NIGHTLY_SUITES, nightly_models

    check_share(args.max_infra_error_share)
    if args.max_infra_error_share is not None:  # the flow and its subflows read the setting
        os.environ["BENCHFORGE_MAX_INFRA_ERROR_SHARE"] = str(args.max_infra_error_share)
    models = args.model or nightly_models(load_settings().openai_api_key is not None)
    preflight(
        "task_specs",
        args.suite or NIGHTLY_SUITES,
        args.task,
        args.agent or NIGHTLY_AGENTS,
        models,
        parse_datasets(args.dataset),
    )
    use_prefect(args.verbose)
    from benchforge.core.progress import listening
    from benchforge.core.progress_bar import TrialProgress
    from benchforge.flows.nightly import nightly
    from benchforge.harness.infra_errors import kept, run_tallies

    with TrialProgress("nightly") as bar, listening(bar.update):
        result = kept(nightly)(
            run_date=date.fromisoformat(args.date) if args.date else None,
            suites=args.suite or None,
            task_ids=args.task or None,
            agents=args.agent or None,
            models=args.model or None,
            epochs=args.epochs,
            datasets=parse_datasets(args.dataset),
            verify=not args.no_verify,
            verify_mutations=args.mutations,
            visible_scores=args.visible_scores,
            score_concurrency=args.score_concurrency,
            run_id=args.run_id,
            da_suites=_da_suites(args.da_suite),
        )
    for domain, location in sorted(result.datasets.items()):
        print(f"dataset {domain}: {location}")
        print(f"gold {domain}: {result.gold[domain]}")
    print(f"verified {result.verified_tasks} tasks (gold 100, do-nothing 0)")
    print_run(result.run)
    print(result.report.markdown)
    for name, uri in sorted(result.report.uris.items()):
        print(f"saved {name}: {uri}")
    if result.calibration is not None:
        state = "ran" if result.calibration.ran else "skipped (judge, prompts, rubrics unchanged)"
        print(f"judge calibration: {state}")
    if result.judged is not None:
        judged = result.judged
        print(f"verified {judged.verified_tasks} judged tasks (reference >= 90, empty 0)")
        print_run(judged.run)
        if judged.scores.judge is not None:
            print(judged.scores.judge.line())
        print(judged.report.markdown)
        for name, uri in sorted(judged.report.uris.items()):
            print(f"saved {name}: {uri}")
    return infra_exit(run_tallies(result), args.max_infra_error_share)


def _da_suites(given: list[str] | None) -> list[str] | None:
    if not given:
        return None
    return [] if given == ["none"] else given

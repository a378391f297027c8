"""``benchforge nightly``: synthesize -> gold -> verify tasks -> run -> score -> report (what
``scripts/pipeline.sh`` runs)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from benchforge.flows.run_kinds import RunKind


def add_parser(sub: Subparsers) -> None:
    nightly = sub.add_parser(
        "nightly", help="the nightly evaluation: synthesize -> gold -> verify -> run -> report"
    )
    nightly.epilog = flow_only(
        "it chains the stages' flows as subflows of one flow run, which its artifacts describe"
    )
    nightly.add_argument("--date", help="YYYY-MM-DD: the run is nightly-<date> (backfills)")
    nightly.add_argument(
        "--run-kinds",
        metavar="FILE",
        help="a YAML or JSON list of run kinds (name, suites, task_ids, agents, models, "
        "mock_models, epochs, visible_scores); default: de (de-crm; oracle, null, react-de) "
        "and da (da-crm; oracle, null, react-da, its run RUN-da); shipped but run only when "
        "named by --kind: dab (dab-crm; oracle, null, react-dab, 3 epochs) and lake (lake-crm's "
        "full and oracle settings; oracle, null, ds-star, react-lake, 3 epochs)",
    )
    nightly.add_argument(
        "--kind", action="append", help="only the run kinds of these names (default: all)"
    )
    nightly.add_argument("--suite", action="append", help="replaces each kind's suites")
    nightly.add_argument(
        "--task", action="append", help="only these task ids of each kind's suites"
    )
    nightly.add_argument("--agent", action="append", help="replaces each kind's agents")
    nightly.add_argument("--model", action="append", help="replaces each kind's models")
    nightly.add_argument("--epochs", type=int, help="replaces each kind's epochs (default 1)")
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
        help="also score trials on the visible dataset where the family holds one out (the "
        "_visible scores; off by default, it doubles the night's scoring)",
    )
    nightly.add_argument(
        "--score-concurrency", type=int, default=2, help="scoring chunks at once (default 2)"
    )
    add_infra_share_argument(nightly)
    nightly.set_defaults(func=nightly_command)


def nightly_command(args: argparse.Namespace) -> int:
    from datetime import date

    check_share(args.max_infra_error_share)
    if args.max_infra_error_share is not None:  # the flow and its subflows read the setting
        os.environ["BENCHFORGE_MAX_INFRA_ERROR_SHARE"] = str(args.max_infra_error_share)
    kinds = run_kinds(args)
    datasets = parse_datasets(args.dataset)
    from benchforge.flows.run_kinds import checked_kinds

    for kind in checked_kinds(kinds):  # before Prefect and its server start
        preflight_kind(kind, datasets)
    use_prefect(args.verbose)
    from benchforge.core.progress import listening
    from benchforge.core.progress_bar import TrialProgress
    from benchforge.flows.nightly import nightly
    from benchforge.harness.infra_errors import kept, run_tallies

    with TrialProgress("nightly") as bar, listening(bar.update):
        result = kept(nightly)(
            run_date=date.fromisoformat(args.date) if args.date else None,
            run_kinds=kinds,
            datasets=datasets,
            verify=not args.no_verify,
            verify_mutations=args.mutations,
            score_concurrency=args.score_concurrency,
            run_id=args.run_id,
        )
    for domain, location in sorted(result.datasets.items()):
        print(f"dataset {domain}: {location}")
        print(f"gold {domain}: {result.gold.get(domain, '(no repository: none built)')}")
    if result.calibration is not None:
        state = "ran" if result.calibration.ran else "skipped (judge, prompts, rubrics unchanged)"
        print(f"judge calibration: {state}")
    for done in result.runs:
        print(f"kind {done.kind}: verified {done.verified_tasks} tasks")
        print_run(done.run)
        if done.scores.judge is not None:
            print(done.scores.judge.line())
        print(done.report.markdown)
        for name, uri in sorted(done.report.uris.items()):
            print(f"saved {name}: {uri}")
    return infra_exit(run_tallies(result), args.max_infra_error_share)


def run_kinds(args: argparse.Namespace) -> list[RunKind] | None:
    """The run kinds the options ask for: ``--run-kinds`` (default the shipped ones), those
    named by ``--kind``, each with what ``--suite`` ... ``--visible-scores`` replace; None
    when nothing is asked (the flow's defaults)."""
    from benchforge.core.errors import ConfigError
    from benchforge.flows.run_kinds import NIGHTLY_RUN_KINDS, OPTIONAL_RUN_KINDS, read_run_kinds

    replaced = {
        "suites": args.suite,
        "task_ids": args.task,
        "agents": args.agent,
        "models": args.model,
        "epochs": args.epochs,
        "visible_scores": args.visible_scores or None,
    }
    replaced = {k: v for k, v in replaced.items() if v is not None}
    if not (args.run_kinds or args.kind or replaced):
        return None
    if args.run_kinds:
        kinds = read_run_kinds(Path(args.run_kinds))
    else:  # an optional kind runs only when named
        kinds = [*NIGHTLY_RUN_KINDS, *(OPTIONAL_RUN_KINDS if args.kind else ())]
    if args.kind:
        unknown = sorted(set(args.kind) - {k.name for k in kinds})
        if unknown:
            raise ConfigError(
                f"--kind {', '.join(unknown)}: no such run kind "
                f"(kinds: {', '.join(k.name for k in kinds)})"
            )
        kinds = [k for k in kinds if k.name in args.kind]
    # unvalidated: a misspelt agent is named by the request check, with what there is
    return [k.model_copy(update=replaced) for k in kinds]


def preflight_kind(kind: RunKind, datasets: dict[str, str]) -> None:
    """``preflight`` of one run kind, its name in the error."""
    from benchforge.core.errors import ConfigError
    from benchforge.core.settings import load_settings
    from benchforge.flows.run_kinds import kind_models

    models = kind_models(kind, load_settings().openai_api_key is not None)
    try:
        preflight("task_specs", kind.suites, kind.task_ids, kind.agents, models, datasets)
    except ConfigError as err:
        raise ConfigError(f"run kind {kind.name}: {err}") from None

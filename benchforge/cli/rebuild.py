"""``benchforge rebuild`` (alias ``pipeline``): every shipped domain's dataset and gold build."""

from __future__ import annotations

import argparse

from benchforge.cli.common import Subparsers
from benchforge.cli.prefect_server import flow_only, use_prefect


def add_parser(sub: Subparsers) -> None:
    rebuild = sub.add_parser(
        "rebuild",
        aliases=["pipeline"],
        help="rebuild every shipped domain's dataset and gold build",
        description=(
            "Synthesizes and validates every shipped domain into the artifact store and builds "
            "its gold dbt repository on it (the weekly dataset-rebuild deployment). The README's "
            "main job is `benchforge nightly` (scripts/pipeline.sh)."
        ),
    )
    rebuild.epilog = flow_only(
        "it chains the synthesize, build_gold and anonymize flows",
        "without Prefect, run `benchforge synth`, `gold build` and `anonymize` with "
        "--no-prefect for each domain",
    )
    rebuild.add_argument("--scale", type=float, default=1.0)
    rebuild.add_argument("--seed", type=int, default=7)
    rebuild.add_argument("--domain", action="append", help="limit to these domains (repeatable)")
    rebuild.add_argument(
        "--anonymize",
        action="store_true",
        help="also anonymize each dataset under its domain's shipped policy (a release each)",
    )
    rebuild.set_defaults(func=rebuild_command)


def rebuild_command(args: argparse.Namespace) -> int:
    use_prefect(args.verbose)
    from benchforge.flows.rebuild import rebuild_datasets

    result = rebuild_datasets(
        scale=args.scale,
        seed=args.seed,
        domains=args.domain or None,
        anonymize_after=args.anonymize,
    )
    for line in result.summary_lines():
        print(line)
    return 0

"""``benchforge gold``: build a gold dbt repository on a dataset."""

from __future__ import annotations

import argparse

from benchforge.cli.common import Subparsers
from benchforge.cli.prefect_server import quiet_prefect, use_prefect


def add_parser(sub: Subparsers) -> None:
    gold = sub.add_parser(
        "gold",
        help="build a gold dbt repository on a dataset",
        description=(
            "Runs `dbt build` (seeds, models, tests) of a dbt project on a copy of a dataset's "
            "warehouse, with Benchforge's own profile whatever profile the project names, and "
            "stores the gold build. Shipped: `benchforge gold build crm`. Your own project: "
            "`benchforge gold build NAME --repo PATH --dataset LOCATION`. Runs as the Prefect "
            "flow 'build_gold'; --no-prefect runs the same steps without Prefect."
        ),
    )
    gold.add_argument("action", choices=["build"])
    gold.add_argument(
        "domain",
        metavar="NAME",
        help="a shipped domain (crm, ads, enterprise: dbt_projects/NAME), or with --repo and "
        "--dataset the label of your build (the dataset's domain)",
    )
    gold.add_argument(
        "--dataset",
        help="dataset folder or s3:// prefix (default for a shipped domain: scale 1, seed 7)",
    )
    gold.add_argument("--repo", help="your dbt project folder (default: dbt_projects/NAME)")
    gold.add_argument(
        "--rebuild",
        action="store_true",
        help="build again even when a build of the same dataset and repository versions is "
        "stored (reused by default)",
    )
    gold.add_argument(
        "--no-prefect", action="store_true", help="run the same steps directly, not as a flow"
    )
    gold.set_defaults(func=gold_command)


def gold_command(args: argparse.Namespace) -> int:
    if args.no_prefect:
        quiet_prefect(args.verbose)  # Prefect's library is imported, its API never used
        from benchforge.flows.gold import make_gold, stored_counts

        location = make_gold(args.domain, args.dataset, args.repo, rebuild=args.rebuild)
    else:
        use_prefect(args.verbose, has_no_prefect=True)
        from benchforge.flows.gold import build_gold, stored_counts

        location = build_gold(
            domain=args.domain, dataset=args.dataset, repo=args.repo, rebuild=args.rebuild
        )
    print(f"gold {args.domain}: {stored_counts(location).summary()}; stored at {location}")
    return 0

"""``benchforge gold``: build a gold dbt repository on a dataset."""

from __future__ import annotations

import argparse

from benchforge.cli.common import Subparsers, quiet_prefect


def add_parser(sub: Subparsers) -> None:
    gold = sub.add_parser("gold", help="build a gold dbt repository on a dataset")
    gold.add_argument("action", choices=["build"])
    gold.add_argument("domain", help="crm, ads or enterprise (dbt_projects/<domain>)")
    gold.add_argument("--dataset", help="dataset folder or s3:// URI (default: scale 1, seed 7)")
    gold.add_argument("--repo", help="another dbt repository to build instead")
    gold.set_defaults(func=gold_command)


def gold_command(args: argparse.Namespace) -> int:
    quiet_prefect(args.verbose)
    from benchforge.flows.gold import build_gold

    location = build_gold(domain=args.domain, dataset=args.dataset, repo=args.repo)
    print(f"gold {args.domain}: built and stored at {location}")
    return 0

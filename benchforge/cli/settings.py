"""``benchforge settings``: the effective settings (secrets hidden)."""

from __future__ import annotations

import argparse

from benchforge.cli.common import Subparsers


def add_parser(sub: Subparsers) -> None:
    settings = sub.add_parser("settings", help="print the effective settings (secrets hidden)")
    settings.set_defaults(func=settings_command)


def settings_command(_: argparse.Namespace) -> int:
    from benchforge.core.settings import load_settings

    print(load_settings().model_dump_json(indent=2))
    return 0

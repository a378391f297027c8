"""``benchforge mock-llm``: a local OpenAI-compatible server with scripted replies and
injectable faults."""

from __future__ import annotations

import argparse

from benchforge.cli.common import Subparsers
from benchforge.core.errors import ConfigError


def add_parser(sub: Subparsers) -> None:
    from benchforge.agents.mock_llm import add_arguments

    mock = sub.add_parser(
        "mock-llm",
        help="serve a local OpenAI-compatible mock (scripted replies, injectable faults)",
        description="Every reply says it is the mock (x-benchforge-mock header, fingerprint).",
    )
    add_arguments(mock)
    mock.set_defaults(func=mock_command)


def mock_command(args: argparse.Namespace) -> int:
    from benchforge.agents.mock_llm import config_from_args, serve

    try:
        config_from_args(args)  # the flags' values (fault rates, latency range) checked first
    except ValueError as err:  # pydantic's ValidationError among them: bad flags, not a bug
        raise ConfigError(str(err)) from None
    return serve(args)

"""Helpers the stage modules share: run requests, run summaries (Prefect's start-up:
:mod:`benchforge.cli.prefect_server`)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from benchforge.core.errors import BenchforgeError, ConfigError

if TYPE_CHECKING:
    from benchforge.core.records import AgentLimits
    from benchforge.flows.runs import RunSummary
    from benchforge.harness.infra_errors import InfraErrorTally

Subparsers = argparse._SubParsersAction  # what each stage module's add_parser(sub) receives


def parse_datasets(pairs: list[str] | None) -> dict[str, str]:
    """``--dataset DOMAIN=LOCATION`` (repeatable) -> domain -> location."""
    found = {}
    for pair in pairs or []:
        domain, sep, location = pair.partition("=")
        if not sep or not domain or not location:
            raise BenchforgeError(f"--dataset expects DOMAIN=LOCATION, got {pair!r}")
        found[domain] = location
    return found


def parse_limits(args: argparse.Namespace) -> AgentLimits:
    """The per-trial budgets given on the command line (the rest default)."""
    from pydantic import ValidationError

    from benchforge.core.records import AgentLimits

    given = {
        name: getattr(args, name)
        for name in ("max_rounds", "action_timeout_s", "wall_s")
        if getattr(args, name, None) is not None
    }
    try:
        return AgentLimits(**given)
    except ValidationError as err:  # the user's flags, not a bug
        raise ConfigError(str(err)) from None


def preflight(
    tasks_root: str,
    suites: list[str],
    task_ids: list[str] | None,
    agents: list[str],
    models: list[str],
    datasets: dict[str, str],
) -> None:
    """The flow checks its request too; checking here first fails a typo before Prefect and
    its server start (seconds, not the flow's start-up)."""
    from benchforge.core.settings import load_settings
    from benchforge.harness.preflight import check_request

    has_key = load_settings().openai_api_key is not None
    check_request(tasks_root, suites, task_ids, agents, models, datasets, has_key)


def print_run(summary: RunSummary) -> None:
    iso = summary.isolation
    print(
        f"run {summary.run_id}: {summary.trials} trials, {summary.skipped} already done, "
        f"{summary.ran} run ({summary.infra_errors} infrastructure errors) "
        f"in {summary.seconds:.1f}s -> {summary.uri}"
    )
    if summary.terminations:
        print(
            "  terminations: "
            + ", ".join(f"{k} {v}" for k, v in sorted(summary.terminations.items()))
        )
    print(f"  sandbox: {iso.backend} (network {iso.network}, filesystem {iso.filesystem})")
    for note in iso.notes:
        print(f"  sandbox note: {note}")
    if summary.mock_llm:
        print("  LLM: the Benchforge mock server (scripted replies, not a real model)")
    print_infra_errors(summary.infra)


def add_infra_share_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-infra-error-share",
        type=float,
        metavar="SHARE",
        help="exit 3 (the flow run FAILED, every result kept) when more than this share of "
        "the run's trials are infrastructure errors, or all of them (default: the "
        "max_infra_error_share setting, 0.2)",
    )


def print_infra_errors(tally: InfraErrorTally) -> None:
    """The run's infrastructure errors (all its trials, not only those run now), by reason."""
    if not tally.infra_errors:
        return
    print(f"  {tally.line()}, by reason:")
    for line in tally.reason_lines():
        print(f"    {line}")


def infra_exit(tallies: list[InfraErrorTally], max_share: float | None) -> int:
    """The command's exit status once its summary is printed, by the rule its flows applied
    (:mod:`benchforge.harness.infra_errors`): 3, with one line on stderr per failing run, when a
    run is past its share of infrastructure errors; else 0, saying so when there were some."""
    from benchforge.core.settings import load_settings
    from benchforge.harness.infra_errors import EXIT_INFRA_ERRORS

    share = load_settings().max_infra_error_share if max_share is None else max_share
    failing = [t for t in tallies if t.exceeds(share)]
    for tally in failing:
        print(
            f"benchforge: error: {tally.line()}: more than the {share:.0%} allowed "
            "(--max-infra-error-share), or every trial; its flow runs are FAILED, results "
            "kept: fix the cause and rerun with the same run id to run those trials again",
            file=sys.stderr,
        )
    if failing:
        return EXIT_INFRA_ERRORS
    for tally in tallies:
        if tally.infra_errors:
            print(
                f"  run {tally.run_id}: {tally.share:.0%} infrastructure errors, within the "
                f"{share:.0%} allowed (--max-infra-error-share): exit 0"
            )
    return 0


def check_share(share: float | None) -> None:
    """``--max-infra-error-share`` is a share: refused before any work when it is not."""
    if share is not None and not 0 <= share <= 1:
        raise BenchforgeError(f"--max-infra-error-share must be between 0 and 1, not {share}")


def latest_run_id() -> str:
    from benchforge.core.artifacts import LAYOUT, open_store
    from benchforge.core.settings import load_settings

    latest = LAYOUT.latest_run(open_store(load_settings().artifact_root))
    if latest is None:
        raise BenchforgeError("no runs in the artifact store yet: `benchforge run ...` first")
    return latest.run_id

"""Helpers the stage modules share: run requests, run summaries (Prefect's start-up:
:mod:`benchforge.cli.prefect_server`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from benchforge.core.errors import BenchforgeError, ConfigError

if TYPE_CHECKING:
    from benchforge.core.records import AgentLimits
    from benchforge.flows.runs import RunSummary

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


def latest_run_id() -> str:
    from benchforge.core.artifacts import LAYOUT, open_store
    from benchforge.core.settings import load_settings

    latest = LAYOUT.latest_run(open_store(load_settings().artifact_root))
    if latest is None:
        raise BenchforgeError("no runs in the artifact store yet: `benchforge run ...` first")
    return latest.run_id

"""The ``benchforge`` command: one entry point; each stage module (cli/<stage>.py) adds its
subcommands with ``add_parser(sub)``, and ``main`` dispatches and turns deliberate errors
(:class:`~benchforge.core.errors.BenchforgeError`, a flow's bad parameters, Prefect's server not
starting) into one line; anything else is a bug and keeps its traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from benchforge.cli import (
    anonymize,
    calibrate,
    dataset,
    gold,
    mock,
    nightly,
    postgres,
    prefect_server,
    rebuild,
    run,
    schedule,
    score,
    settings,
    spec,
    synth,
    task,
)
from benchforge.core.errors import BenchforgeError
from benchforge.core.plugins import load_plugins

DESCRIPTION = """\
Benchforge builds, runs and scores benchmarks for data agents.

Stages:
  synth      generate a relationally consistent dataset from a domain spec
             (DuckDB warehouse + Parquet + anomaly manifest + Great Expectations report)
  spec       list, validate and export the JSON Schema of domain specs
  dataset    import a dataset from CSV / Parquet files, a DuckDB file or PostgreSQL
  postgres   a local PostgreSQL server to import from (start, load a dump, url, stop)
  anonymize  turn a dataset into a shareable release (keyed pseudonyms, distribution-preserving
             perturbation, scrubbed text) with a fidelity / utility / privacy report
  policy     draft, check and export the JSON Schema of anonymization policies
  gold       build a gold dbt repository on a dataset (dbt build + docs, stored as artifacts)
  task       validate task specs, export their JSON Schema, regenerate contracts, self-verify,
             prepare a DA task's rubric on a seed
  score      score a candidate repository against a task's gold (CS / CFS / SR)
  run        run agents on a suite of tasks (sandboxed, resumable), then score the trials
             (judged tasks through an LLM judge)
  score-run  (re)score a run's stored trials without re-running agents
  report     print and save a run's leaderboard (markdown + HTML with plots)
  view       browse a run: a static HTML site (leaderboard, trials, diffs, trajectories)
  judge      export a labelling sheet of a run's judged cases for human raters
  calibrate  measure LLM judges against human labels (r, kappa, alpha, rho) and gate them
  nightly    synthesize -> gold -> verify tasks -> run -> score -> report (the README's job)
  rebuild    synthesize + build gold for every shipped domain (alias: pipeline)
  schedule   add (parameters checked as a run would), list, name and remove a deployment's
             schedules on the Prefect server
  mock-llm   a local OpenAI-compatible server with scripted replies and injectable faults

Settings come from BENCHFORGE_* environment variables or a benchforge.toml file
(artifact_root, s3_endpoint_url, aws_access_key_id, aws_secret_access_key, openai_base_url,
openai_api_key); see `benchforge settings`.
"""

# In the order `benchforge --help` lists them.
STAGES = (
    synth,
    spec,
    dataset,
    postgres,
    anonymize,
    rebuild,
    gold,
    task,
    score,
    run,
    calibrate,
    nightly,
    schedule,
    mock,
    settings,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchforge", description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show Prefect's logs")
    sub = parser.add_subparsers(dest="command", required=True, metavar="STAGE")
    for stage in STAGES:
        stage.add_parser(sub)
    return parser


def _bad_flow_parameters(err: Exception) -> bool:
    """A flow's parameters failed its signature's validation (bad user input, not a bug).
    Prefect is imported lazily: if it is not loaded, no flow ran."""
    exceptions = sys.modules.get("prefect.exceptions")
    return exceptions is not None and isinstance(err, exceptions.ParameterTypeError)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        load_plugins()  # BENCHFORGE_PLUGINS and entry points: a bad one is named up front
        return int(args.func(args))
    except BenchforgeError as err:
        print(f"benchforge: error: {err}", file=sys.stderr)
        return 2
    except Exception as err:
        line = prefect_server.startup_failure(err)
        if line is None and not _bad_flow_parameters(err):
            raise
        print(f"benchforge: error: {line or err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("benchforge: interrupted; nothing was published", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

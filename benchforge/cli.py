"""The ``benchforge`` command: one entry point, a subcommand per stage."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from benchforge.errors import BenchforgeError

DESCRIPTION = """\
Benchforge builds, runs and scores benchmarks for data agents.

Stages:
  synth      generate a relationally consistent dataset from a domain spec
             (DuckDB warehouse + Parquet + anomaly manifest + Great Expectations report)
  spec       list, validate and export the JSON Schema of domain specs
  pipeline   the end-to-end pipeline on embedded defaults (what the README runs)

Settings come from BENCHFORGE_* environment variables or a benchforge.toml file
(artifact_root, s3_endpoint_url, aws_access_key_id, aws_secret_access_key, openai_base_url,
openai_api_key); see `benchforge settings`.
"""


def _quiet_prefect(verbose: bool) -> None:
    """Flow logs still reach the Prefect API (and UI); the terminal shows them only with -v."""
    if not verbose:
        os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "CRITICAL")
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")


def _synth(args: argparse.Namespace) -> int:
    from benchforge.progress_bar import DatasetProgress
    from synthesis.engine import estimated_rows
    from synthesis.spec import load_domain

    spec = load_domain(args.domain)  # fails fast, naming the file and field
    totals = estimated_rows(spec, args.scale)
    if args.no_prefect:
        from synthesis.dataset import build_dataset

        with DatasetProgress(totals, enabled=not args.no_progress) as bar:
            record = build_dataset(
                spec, scale=args.scale, seed=args.seed, out=args.out,
                validate=not args.no_validate, on_progress=bar.update,
            )  # fmt: skip
    else:
        _quiet_prefect(args.verbose)
        from benchforge.progress import listening
        from flows.synthesize import synthesize

        with DatasetProgress(totals, enabled=not args.no_progress) as bar, listening(bar.update):
            record = synthesize(
                domain=args.domain, scale=args.scale, seed=args.seed, out=args.out,
                validate=not args.no_validate,
            )  # fmt: skip
    print(f"dataset {record.domain}: {record.total_rows:,} rows -> {record.location}")
    print(f"  anomalies injected: {record.anomaly_total:,} (see anomalies.parquet)")
    if record.validation_success is not None:
        print(f"  Great Expectations: {record.validation_expectations} expectations passed")
    return 0


def _spec(args: argparse.Namespace) -> int:
    from synthesis.spec import json_schema, load_spec
    from synthesis.spec.loader import domain_spec_path, shipped_domains

    if args.action == "list":
        for name in shipped_domains():
            print(f"{name}\t{domain_spec_path(name)}")
    elif args.action == "schema":
        schema = json_schema()
        if args.write:
            target = Path(__file__).parents[1] / "synthesis" / "spec" / "domain_spec.schema.json"
            target.write_text(schema)
            print(f"wrote {target}")
        else:
            sys.stdout.write(schema)
    else:
        for path in args.files or [str(domain_spec_path(n)) for n in shipped_domains()]:
            spec = load_spec(domain_spec_path(path))
            columns = sum(len(t.columns) for t in spec.tables)
            print(f"ok  {path}: {len(spec.tables)} tables, {columns} columns")
    return 0


def _pipeline(args: argparse.Namespace) -> int:
    _quiet_prefect(args.verbose)
    from flows.pipeline import pipeline

    result = pipeline(scale=args.scale, seed=args.seed, domains=args.domain or None)
    for line in result.summary_lines():
        print(line)
    return 0


def _settings(_: argparse.Namespace) -> int:
    from benchforge.settings import load_settings

    print(load_settings().model_dump_json(indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchforge", description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show Prefect's logs")
    sub = parser.add_subparsers(dest="command", required=True, metavar="STAGE")

    synth = sub.add_parser(
        "synth",
        help="generate a dataset from a domain spec",
        description=(
            "Generate DOMAIN (a shipped domain: crm, ads, enterprise; or a path to a spec YAML)\n"
            "into OUT (a folder or s3://bucket/prefix): warehouse.duckdb (schema raw), parquet/,\n"
            "anomalies.parquet (every injected anomaly), manifest.json, validation/ (Great\n"
            "Expectations Data Docs) and dataset.json, written last. The same seed gives\n"
            "byte-identical Parquet. Runs as the Prefect flow 'synthesize'."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    synth.add_argument("domain", help="shipped domain name or path to a domain spec YAML")
    synth.add_argument("--scale", type=float, default=1.0, help="size multiplier (1 = default)")
    synth.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    synth.add_argument("--out", required=True, help="output folder or s3://bucket/prefix")
    synth.add_argument("--no-validate", action="store_true", help="skip Great Expectations")
    synth.add_argument("--no-progress", action="store_true", help="no progress bar")
    synth.add_argument(
        "--no-prefect", action="store_true", help="run the library directly, not as a flow"
    )
    synth.set_defaults(func=_synth)

    spec = sub.add_parser("spec", help="list / validate domain specs, export their JSON Schema")
    spec.add_argument("action", choices=["list", "validate", "schema"])
    spec.add_argument("files", nargs="*", help="spec files to validate (default: shipped)")
    spec.add_argument("--write", action="store_true", help="schema: update the committed file")
    spec.set_defaults(func=_spec)

    pipe = sub.add_parser(
        "pipeline",
        help="run the end-to-end pipeline on embedded defaults",
        description="Synthesizes and validates every shipped domain into the artifact store.",
    )
    pipe.add_argument("--scale", type=float, default=1.0)
    pipe.add_argument("--seed", type=int, default=7)
    pipe.add_argument("--domain", action="append", help="limit to these domains (repeatable)")
    pipe.set_defaults(func=_pipeline)

    settings = sub.add_parser("settings", help="print the effective settings (secrets hidden)")
    settings.set_defaults(func=_settings)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BenchforgeError as err:
        print(f"benchforge: error: {err}", file=sys.stderr)
        return 2
    except ValueError as err:  # SpecError and other input errors
        print(f"benchforge: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("benchforge: interrupted; nothing was published", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

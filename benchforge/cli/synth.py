"""``benchforge synth``: generate a dataset from a domain spec."""

from __future__ import annotations

import argparse

from benchforge.cli.common import Subparsers
from benchforge.cli.prefect_server import use_prefect


def add_parser(sub: Subparsers) -> None:
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
    synth.set_defaults(func=synth_command)


def synth_command(args: argparse.Namespace) -> int:
    from benchforge.core.progress_bar import DatasetProgress
    from benchforge.synthesis.engine import estimated_rows
    from benchforge.synthesis.engine.preflight import check_generates
    from benchforge.synthesis.spec import load_domain
    from benchforge.synthesis.spec.loader import domain_spec_path

    spec = load_domain(args.domain)  # fails fast, naming the file and field
    check_generates(spec, str(domain_spec_path(args.domain)))  # ... and the column
    totals = estimated_rows(spec, args.scale)
    if args.no_prefect:
        from benchforge.synthesis.dataset import build_dataset

        with DatasetProgress(totals, enabled=not args.no_progress) as bar:
            record = build_dataset(
                spec,
                scale=args.scale,
                seed=args.seed,
                out=args.out,
                validate=not args.no_validate,
                on_progress=bar.update,
            )
    else:
        use_prefect(args.verbose, has_no_prefect=True)
        from benchforge.core.progress import listening
        from benchforge.flows.synthesize import synthesize

        with DatasetProgress(totals, enabled=not args.no_progress) as bar, listening(bar.update):
            record = synthesize(
                domain=args.domain,
                scale=args.scale,
                seed=args.seed,
                out=args.out,
                run_validation=not args.no_validate,
            )
    print(f"dataset {record.domain}: {record.total_rows:,} rows -> {record.location}")
    print(f"  anomalies injected: {record.anomaly_total:,} (see anomalies.parquet)")
    if record.validation_success is not None:
        print(f"  Great Expectations: {record.validation_expectations} expectations passed")
    return 0

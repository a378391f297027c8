"""``benchforge anonymize``: a dataset -> a shareable release with its report; ``benchforge
policy``: draft, check and export the schema of anonymization policies."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from benchforge.cli.common import Subparsers
from benchforge.cli.prefect_server import quiet_prefect, use_prefect

if TYPE_CHECKING:
    from benchforge.anonymize.report.models import ReleaseReport


def add_parser(sub: Subparsers) -> None:
    anon = sub.add_parser(
        "anonymize",
        help="anonymize a dataset into a shareable release, with its report",
        description=(
            "Anonymize DATASET (a dataset folder, an s3:// prefix, or a shipped domain name:\n"
            "its dataset at --scale/--seed, synthesized if missing) under a policy (a shipped\n"
            "name or a YAML file; default the domain's shipped one) into OUT: warehouse.duckdb\n"
            "(schema raw), parquet/, manifest.json, report/release-report.{json,html} and\n"
            "dataset.json, written last. Keys are HMAC-SHA256 pseudonyms under the secret in\n"
            "the environment variable the policy names (default BENCHFORGE_ANON_SECRET).\n"
            "Before publishing, the domain's gold dbt repository is built on the release and\n"
            "its tasks self-verify; a release below any threshold of the policy is refused\n"
            "(nothing published; the report is kept at OUT.refused-report/). Runs as the\n"
            "Prefect flow 'anonymize'; --no-prefect runs the same steps without Prefect (no\n"
            "server, no Prefect artifact; a missing dataset is synthesized the same way)."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    anon.add_argument("dataset", help="dataset folder, s3:// prefix or shipped domain name")
    anon.add_argument("--policy", help="shipped policy name or policy YAML (default: the domain's)")
    anon.add_argument("--out", help="folder or s3://bucket/prefix (default: artifact store)")
    anon.add_argument(
        "--verify-suite",
        help="task suite verified on the release (default task_specs/de-DOMAIN; 'none' skips)",
    )
    anon.add_argument("--scale", type=float, default=1.0, help="with a domain name (default 1)")
    anon.add_argument("--seed", type=int, default=7, help="with a domain name (default 7)")
    anon.add_argument("--sample-rows", type=int, default=5000, help="linkage / attack samples")
    anon.add_argument("--no-progress", action="store_true", help="no progress bar")
    anon.add_argument(
        "--no-prefect", action="store_true", help="run the same steps directly, not as a flow"
    )
    anon.set_defaults(func=anonymize_command)

    policy = sub.add_parser(
        "policy",
        help="draft, check or export the schema of anonymization policies",
        description=(
            "draft DATASET   print a policy drafted from the dataset's warehouse (keys found by\n"
            "                value inclusion, PII by name and content); review it, then save it\n"
            "check DATASET   check a policy against a dataset (every column ruled, keys kept\n"
            "                joinable, no PII kept) without writing anything (--policy)\n"
            "schema          print the JSON Schema of policy files\n"
            "list            the shipped policies"
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    policy.add_argument("action", choices=["draft", "check", "schema", "list"])
    policy.add_argument("dataset", nargs="?", help="draft / check: a dataset folder")
    policy.add_argument("--policy", help="check: shipped policy name or YAML path")
    policy.set_defaults(func=policy_command)


def anonymize_command(args: argparse.Namespace) -> int:
    quiet_prefect(args.verbose)  # --no-prefect imports Prefect's library too, never its API
    from benchforge.anonymize.policy.loader import load_policy

    if args.policy:
        load_policy(args.policy)  # a malformed policy fails here, naming the file and field
    if not args.no_prefect:
        use_prefect(args.verbose, has_no_prefect=True)
    from benchforge.core.progress import listening
    from benchforge.core.progress_bar import DatasetProgress
    from benchforge.flows.anonymize import STAGES, anonymize, make_release

    totals = _source_rows(args.dataset)
    with (
        DatasetProgress(
            totals,
            enabled=not args.no_progress,
            verb="anonymizing",
            done="rows anonymized",
            stages=STAGES,
        ) as bar,
        listening(bar.update),
    ):
        if args.no_prefect:
            record = make_release(
                args.dataset,
                args.policy,
                args.out,
                args.verify_suite,
                args.scale,
                args.seed,
                args.sample_rows,
            )
        else:
            record = anonymize(
                dataset=args.dataset,
                policy=args.policy,
                out=args.out,
                verify_suite=args.verify_suite,
                scale=args.scale,
                seed=args.seed,
                sample_rows=args.sample_rows,
            )
    print(f"release {record.domain}: {record.total_rows:,} rows -> {record.location}")
    _print_report(record.location)
    return 0


def _source_rows(dataset: str) -> dict[str, int]:
    """Rows per table of a local source dataset (for the progress bar); {} when unknown yet."""
    from benchforge.core.records import DatasetRecord

    record = Path(dataset) / "dataset.json"
    if not record.is_file():
        return {}
    manifest = Path(dataset) / "manifest.json"
    try:
        import json

        tables = json.loads(manifest.read_text())["tables"]
        return {name: int(t["rows"]) for name, t in tables.items()}
    except (OSError, KeyError, ValueError):
        return {"all": DatasetRecord.model_validate_json(record.read_text()).total_rows}


def _print_report(location: str) -> None:
    """The verdict lines of the stored report (local releases)."""
    from benchforge.anonymize.report.models import ReleaseReport

    path = Path(location) / "report" / "release-report.json"
    if location.startswith("s3://") or not path.is_file():
        return
    report = ReleaseReport.model_validate_json(path.read_text())
    for line in summary_lines(report):
        print(f"  {line}")
    print(f"  report: {path.with_suffix('.html')}")


def summary_lines(report: ReleaseReport) -> list[str]:
    """The figures a maintainer checks first, and every failing threshold."""
    verdict = "RELEASE PASSED" if report.passed else "RELEASE REFUSED"
    lines = [
        f"{verdict}: {sum(t.passed for t in report.thresholds)}/{len(report.thresholds)} "
        "thresholds met"
    ]
    p = report.privacy
    lines.append(
        f"leaked identifiers {p.leaked_identifiers} (of {p.identifiers_checked:,} checked)"
    )
    perturbed = [
        c.ks_complement
        for c in report.fidelity.columns
        if c.rule == "perturb" and c.ks_complement is not None
    ]
    if perturbed:
        lines.append(
            f"KSComplement of {len(perturbed)} perturbed columns: min {min(perturbed):.3f}"
        )
    ratio = report.relational.worst_join_count_ratio
    if ratio is not None:
        lines.append(
            f"join-count ratio (worst of {len(report.relational.foreign_keys)} keys) {ratio:.6f}"
        )
    u = report.utility
    if u.median_relative_error is not None and u.p95_relative_error is not None:
        lines.append(
            f"workload of {len(u.queries)} queries: median relative error "
            f"{u.median_relative_error:.4f}, p95 {u.p95_relative_error:.4f}"
        )
    for link in p.linkage:
        lines.append(
            f"linkage on {link.table}: {link.rate:.4f} vs baseline {link.baseline:.6f} "
            f"(x{link.ratio:.1f})"
        )
    lines.append(benchmark_line(report))
    if report.passed:
        skipped = [t for t in report.thresholds if t.value is None and t.passed]
        if skipped:
            lines.append("checks skipped: " + "; ".join(f"{t.name} ({t.detail})" for t in skipped))
    for t in report.thresholds:
        if not t.passed:
            lines.append(f"FAILED {t.name}: {t.detail}")
    return lines


def benchmark_line(report: ReleaseReport) -> str:
    """The benchmark check in words that agree with the verdict: a published release never
    reads beside a failed gold build; it says the check did not count, or did not run, and
    why."""
    b = report.benchmark
    if b is None:
        return "benchmark: not run" + ("" if report.passed else " (other thresholds failed)")
    if b.skipped:
        return f"benchmark: skipped (gold build + task verification): {b.skipped}"
    ok = sum(t.passed for t in b.tasks)
    counts = f"({b.models} models, {b.tests} tests), tasks verified {ok}/{len(b.tasks)}"
    if b.passed:
        return f"benchmark: gold build passed {counts}"
    if not report.passed:
        build = "passed" if b.gold_build_success else "FAILED"
        return f"benchmark: gold build {build} {counts}"
    build = "succeeded" if b.gold_build_success else "did not succeed"
    why = f": {b.error.splitlines()[0][:200]}" if b.error else ""
    return (
        "benchmark: not counted, the policy does not require it "
        f"(thresholds.require_benchmark: false): the gold build {build} {counts}{why}"
    )


def policy_command(args: argparse.Namespace) -> int:
    from benchforge.anonymize.policy.loader import (
        load_policy,
        policy_json_schema,
        shipped_policies,
    )

    if args.action == "schema":
        sys.stdout.write(policy_json_schema())
        return 0
    if args.action == "list":
        for name in shipped_policies():
            print(name)
        return 0
    if not args.dataset:
        from benchforge.core.errors import ConfigError

        raise ConfigError(f"benchforge policy {args.action} needs a DATASET folder")
    import duckdb

    from benchforge.anonymize.release import WAREHOUSE, source_record

    folder = Path(args.dataset)
    record = source_record(folder)
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{folder / WAREHOUSE}' AS src (READ_ONLY)")
        if args.action == "draft":
            from benchforge.anonymize.policy.draft import draft_policy

            sys.stdout.write(draft_policy(con, "src", record.domain))
            return 0
        from benchforge.anonymize.policy.check import check_policy, reidentification_warnings

        loaded = load_policy(args.policy or record.domain)
        result = check_policy(loaded, con, "src", dataset_domain=record.domain)
        warnings = [*result.warnings, *reidentification_warnings(loaded, con, "src")]
    print(f"{loaded.source}: ok for {folder} ({len(result.tables)} tables)")
    for warning in warnings:
        print(f"  warning: {warning}")
    return 0

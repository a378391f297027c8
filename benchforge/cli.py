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
  gold       build a gold dbt repository on a dataset (dbt build + docs, stored as artifacts)
  task       validate task specs, export their JSON Schema, regenerate contracts, self-verify
  score      score a candidate repository against a task's gold (CS / CFS / SR)
  pipeline   the end-to-end pipeline on embedded defaults (what the README runs)
  mock-llm   a local OpenAI-compatible server with scripted replies and injectable faults

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


def _gold(args: argparse.Namespace) -> int:
    _quiet_prefect(args.verbose)
    from flows.gold import build_gold

    location = build_gold(domain=args.domain, dataset=args.dataset, repo=args.repo)
    print(f"gold {args.domain}: built and stored at {location}")
    return 0


def _task(args: argparse.Namespace) -> int:
    from evaluation.tasks import load_tasks, task_json_schema

    if args.action == "schema":
        sys.stdout.write(task_json_schema())
        return 0
    if args.action == "validate":
        tasks = load_tasks(Path(args.path))
        for t in tasks:
            print(f"ok  {t.key}  ({t.spec.family}, {t.folder})")
        print(f"{len(tasks)} task(s) valid")
        return 0
    if args.action == "contract":
        return _task_contract(args)
    _quiet_prefect(args.verbose)
    from flows.tasks import verify_tasks

    results = verify_tasks(path=args.path)
    for r in results:
        muts = f", mutations {sum(m.ok for m in r.mutations)}/{len(r.mutations)} as predicted"
        print(f"ok  {r.task}: gold {r.gold.cs:.0f}/{r.gold.cfs:.0f}/{r.gold.sr:.0f}, "
              f"empty {r.empty.cs:.0f}/{r.empty.cfs:.0f}/{r.empty.sr:.0f}"
              f"{muts if r.mutations else ''}")  # fmt: skip
    return 0


def _task_contract(args: argparse.Namespace) -> int:
    import tempfile

    from evaluation.de.tasks import prepare_gold
    from evaluation.tasks import DeImplTask, load_tasks
    from evaluation.tasks.materials import data_contract, write_contract
    from flows.datasets import local_dataset

    for loaded in load_tasks(Path(args.path)):
        spec = loaded.spec
        if not isinstance(spec, DeImplTask):
            continue
        with tempfile.TemporaryDirectory(prefix="benchforge-contract-") as tmp:
            ref = spec.dataset
            dataset = local_dataset(ref.domain, args.dataset, Path(tmp) / "ds", ref.scale, ref.seed)
            gold = prepare_gold(loaded, dataset, Path(tmp) / "work")
            meta = loaded.file(spec.contract_metadata) if spec.contract_metadata else None
            write_contract(data_contract(gold.gold_folder, meta, spec.domain),
                           loaded.file(spec.contract))  # fmt: skip
        print(f"wrote {loaded.file(spec.contract)}")
    return 0


def _score(args: argparse.Namespace) -> int:
    import tempfile

    from evaluation.de.tasks import dump_report, prepare_gold, score_task
    from evaluation.tasks import load_task
    from flows.datasets import local_dataset

    _quiet_prefect(args.verbose)
    loaded = load_task(Path(args.task))
    ref = loaded.spec.dataset
    with tempfile.TemporaryDirectory(prefix="benchforge-score-") as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        dataset = local_dataset(ref.domain, args.dataset, work / "dataset", ref.scale, ref.seed)
        gold = prepare_gold(loaded, dataset, work)
        result = score_task(loaded, Path(args.candidate), gold, dataset, work / "score")
    report = Path(args.report or f"score-{loaded.spec.id}.json")
    dump_report(result, report)
    print(f"{loaded.key}: {result.summary()}")
    for node in result.nodes:
        if node.weight > 0 and not (node.cs.matched and node.cfs_score):
            why = (
                node.cfs.reason or node.cs.reason or f"blocked by {', '.join(node.cfs_blocked_by)}"
            )
            print(f"  x {node.name} ({node.layer}): CS {node.cs.status}, CFS "
                  f"{'blocked' if node.cfs_blocked_by and node.cfs.matched else node.cfs.status}"
                  f" - {why}")  # fmt: skip
    for err in result.candidate_errors:
        print(f"  ! {err}")
    print(f"report: {report}")
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

    gold = sub.add_parser("gold", help="build a gold dbt repository on a dataset")
    gold.add_argument("action", choices=["build"])
    gold.add_argument("domain", help="crm, ads or enterprise (dbt_projects/<domain>)")
    gold.add_argument("--dataset", help="dataset folder or s3:// URI (default: scale 1, seed 7)")
    gold.add_argument("--repo", help="another dbt repository to build instead")
    gold.set_defaults(func=_gold)

    task = sub.add_parser(
        "task",
        help="validate / export schema / regenerate contracts / verify task specs",
        description=(
            "validate PATH   check every task.yaml under PATH (files present, fields valid)\n"
            "schema          print the JSON Schema of task specs\n"
            "contract PATH   regenerate data_contract.yaml of de_impl tasks from a gold build\n"
            "verify PATH     gold = 100/100/100, do-nothing = 0, mutations = predicted"
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    task.add_argument("action", choices=["validate", "schema", "contract", "verify"])
    task.add_argument("path", nargs="?", default="task_specs")
    task.add_argument("--dataset", help="contract: dataset to build the gold on")
    task.set_defaults(func=_task)

    score = sub.add_parser("score", help="score a candidate repository (CS / CFS / SR)")
    score.add_argument("kind", choices=["de"])
    score.add_argument("--task", required=True, help="task folder (task_specs/<suite>/<id>)")
    score.add_argument("--candidate", required=True, help="the candidate dbt project folder")
    score.add_argument("--dataset", help="dataset folder (default: the task's dataset)")
    score.add_argument("--report", help="where to write the JSON report")
    score.add_argument("--work", help="keep builds in this folder (default: a temp folder)")
    score.set_defaults(func=_score)

    mock = sub.add_parser(
        "mock-llm",
        help="serve a local OpenAI-compatible mock (scripted replies, injectable faults)",
        description="Every reply says it is the mock (x-benchforge-mock header, fingerprint).",
    )
    from agents.mock_llm import add_arguments, serve

    add_arguments(mock)
    mock.set_defaults(func=serve)

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

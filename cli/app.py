"""The ``benchforge`` command: one entry point, a subcommand per stage."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from benchforge.core.errors import BenchforgeError

if TYPE_CHECKING:
    from benchforge.agents.protocol import AgentLimits

DESCRIPTION = """\
Benchforge builds, runs and scores benchmarks for data agents.

Stages:
  synth      generate a relationally consistent dataset from a domain spec
             (DuckDB warehouse + Parquet + anomaly manifest + Great Expectations report)
  spec       list, validate and export the JSON Schema of domain specs
  gold       build a gold dbt repository on a dataset (dbt build + docs, stored as artifacts)
  task       validate task specs, export their JSON Schema, regenerate contracts, self-verify
  score      score a candidate repository against a task's gold (CS / CFS / SR)
  run        run agents on a suite of tasks (sandboxed, resumable), then score the trials
  score-run  (re)score a run's stored trials without re-running agents
  report     print and save a run's leaderboard (markdown + HTML with plots)
  view       browse a run: a static HTML site (leaderboard, trials, diffs, trajectories)
  nightly    synthesize -> gold -> verify tasks -> run -> score -> report (the README's job)
  pipeline   synthesize + build gold for every shipped domain
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
    from benchforge.core.progress_bar import DatasetProgress
    from benchforge.synthesis.engine import estimated_rows
    from benchforge.synthesis.spec import load_domain

    spec = load_domain(args.domain)  # fails fast, naming the file and field
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
        _quiet_prefect(args.verbose)
        from benchforge.core.progress import listening
        from benchforge.flows.synthesize import synthesize

        with DatasetProgress(totals, enabled=not args.no_progress) as bar, listening(bar.update):
            record = synthesize(
                domain=args.domain,
                scale=args.scale,
                seed=args.seed,
                out=args.out,
                validate=not args.no_validate,
            )
    print(f"dataset {record.domain}: {record.total_rows:,} rows -> {record.location}")
    print(f"  anomalies injected: {record.anomaly_total:,} (see anomalies.parquet)")
    if record.validation_success is not None:
        print(f"  Great Expectations: {record.validation_expectations} expectations passed")
    return 0


def _spec(args: argparse.Namespace) -> int:
    from benchforge.synthesis.spec import json_schema, load_spec
    from benchforge.synthesis.spec.loader import domain_spec_path, shipped_domains

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
    from benchforge.flows.pipeline import pipeline

    result = pipeline(scale=args.scale, seed=args.seed, domains=args.domain or None)
    for line in result.summary_lines():
        print(line)
    return 0


def _gold(args: argparse.Namespace) -> int:
    _quiet_prefect(args.verbose)
    from benchforge.flows.gold import build_gold

    location = build_gold(domain=args.domain, dataset=args.dataset, repo=args.repo)
    print(f"gold {args.domain}: built and stored at {location}")
    return 0


def _task(args: argparse.Namespace) -> int:
    from benchforge.evaluation.tasks import load_tasks, task_json_schema

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
    from benchforge.flows.tasks import verify_tasks

    results = verify_tasks(path=args.path)
    for r in results:
        muts = f", mutations {sum(m.ok for m in r.mutations)}/{len(r.mutations)} as predicted"
        held = f", reward hacks {sum(h.ok for h in r.hacks)}/{len(r.hacks)} held"
        print(
            f"ok  {r.task}: gold {r.gold.cs:.0f}/{r.gold.cfs:.0f}/{r.gold.sr:.0f}, "
            f"empty {r.empty.cs:.0f}/{r.empty.cfs:.0f}/{r.empty.sr:.0f}"
            f"{muts if r.mutations else ''}{held if r.hacks else ''}"
        )
    tried = sum(len(r.hacks) for r in results)
    print(f"reward hacks: {tried} tried, {sum(h.ok for r in results for h in r.hacks)} held")
    return 0


def _task_contract(args: argparse.Namespace) -> int:
    import tempfile

    from benchforge.evaluation.de.tasks import prepare_gold
    from benchforge.evaluation.tasks import DeImplTask, load_tasks
    from benchforge.evaluation.tasks.materials import data_contract, write_contract
    from benchforge.flows.datasets import local_dataset

    for loaded in load_tasks(Path(args.path)):
        spec = loaded.spec
        if not isinstance(spec, DeImplTask):
            continue
        with tempfile.TemporaryDirectory(prefix="benchforge-contract-") as tmp:
            ref = spec.dataset
            dataset = local_dataset(ref.domain, args.dataset, Path(tmp) / "ds", ref.scale, ref.seed)
            gold = prepare_gold(loaded, dataset, Path(tmp) / "work")
            meta = loaded.file(spec.contract_metadata) if spec.contract_metadata else None
            write_contract(
                data_contract(gold.gold_folder, meta, spec.domain), loaded.file(spec.contract)
            )
        print(f"wrote {loaded.file(spec.contract)}")
    return 0


def _score(args: argparse.Namespace) -> int:
    import tempfile

    from benchforge.evaluation.de.tasks import dump_report, prepare_gold, score_task
    from benchforge.evaluation.tasks import load_task
    from benchforge.flows.datasets import heldout_dataset, local_dataset

    _quiet_prefect(args.verbose)
    loaded = load_task(Path(args.task))
    ref = loaded.spec.dataset
    if args.unsandboxed:
        warning = (
            "WARNING: scoring without a sandbox (--unsandboxed): the candidate's dbt "
            "hooks, Python models and SQL run as this user; the report records it"
        )
        print(warning, file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="benchforge-score-") as tmp:
        work = Path(args.work).resolve() if args.work else Path(tmp)
        candidate = Path(args.candidate).resolve()
        dataset = local_dataset(ref.domain, args.dataset, work / "dataset", ref.scale, ref.seed)
        gold = prepare_gold(loaded, dataset, work)
        result = score_task(
            loaded, candidate, gold, dataset, work / "score", unsandboxed=args.unsandboxed
        )
        if args.dataset is None and not args.visible_only:
            heldout = heldout_dataset(ref.domain, work / "heldout", ref.scale, ref.seed)
            primary = score_task(
                loaded,
                candidate,
                prepare_gold(loaded, heldout, work),
                heldout,
                work / "score-heldout",
                unsandboxed=args.unsandboxed,
            )
            result = primary.model_copy(update={"scored_on": "heldout", "visible": result})
    report = Path(args.report or f"score-{loaded.spec.id}.json")
    dump_report(result, report)
    seed = "held-out seed" if result.scored_on == "heldout" else "visible dataset"
    print(f"{loaded.key}: {result.summary()} ({seed})")
    if result.visible is not None:
        print(f"  visible seed: {result.visible.summary()}")
    if result.unsandboxed:
        print("  ! scored WITHOUT a sandbox")
    elif result.isolation is not None:
        iso = result.isolation
        print(f"  sandbox: {iso.backend} (network {iso.network}, filesystem {iso.filesystem})")
    for node in result.nodes:
        if node.weight > 0 and not (node.cs.matched and node.cfs_score):
            why = (
                node.cfs.reason or node.cs.reason or f"blocked by {', '.join(node.cfs_blocked_by)}"
            )
            print(
                f"  x {node.name} ({node.layer}): CS {node.cs.status}, CFS "
                f"{'blocked' if node.cfs_blocked_by and node.cfs.matched else node.cfs.status}"
                f" - {why}"
            )
    for err in result.candidate_errors:
        print(f"  ! {err}")
    print(f"report: {report}")
    return 0


def _datasets(pairs: list[str] | None) -> dict[str, str]:
    found = {}
    for pair in pairs or []:
        domain, sep, location = pair.partition("=")
        if not sep or not domain or not location:
            raise BenchforgeError(f"--dataset expects DOMAIN=LOCATION, got {pair!r}")
        found[domain] = location
    return found


def _limits(args: argparse.Namespace) -> AgentLimits:
    from benchforge.agents.protocol import AgentLimits

    given = {
        name: getattr(args, name)
        for name in ("max_rounds", "action_timeout_s", "wall_s")
        if getattr(args, name, None) is not None
    }
    return AgentLimits(**given)


def _print_run(summary: object) -> None:
    from benchforge.flows.runs import RunSummary

    assert isinstance(summary, RunSummary)
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


def _preflight(
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


def _run(args: argparse.Namespace) -> int:
    _quiet_prefect(args.verbose)
    _preflight(
        args.tasks_root,
        args.suite,
        args.task or None,
        args.agent,
        args.model or [],
        _datasets(args.dataset),
    )
    from benchforge.core.progress import listening
    from benchforge.core.progress_bar import TrialProgress
    from benchforge.flows.runs import run_suite, score_run

    with TrialProgress("trials") as bar, listening(bar.update):
        summary = run_suite(
            suites=args.suite,
            agents=args.agent,
            models=args.model or [],
            epochs=args.epochs,
            concurrency=args.concurrency,
            sandbox_concurrency=args.sandbox_concurrency,
            llm_concurrency=args.llm_concurrency,
            chunk_size=args.chunk_size,
            workers=args.workers,
            run_id=args.run_id,
            tasks_root=args.tasks_root,
            task_ids=args.task or None,
            limits=_limits(args),
            datasets=_datasets(args.dataset),
            dask=args.dask,
        )
    _print_run(summary)
    if not args.no_score:
        with TrialProgress("scoring") as bar, listening(bar.update):
            scores = score_run(run_id=summary.run_id, workers=args.workers)
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(scores.statuses.items())) or "none"
        print(
            f"  scored {scores.scored} trials ({statuses}) in {scores.seconds:.1f}s; "
            f"see `benchforge report {summary.run_id}`"
        )
    return 0


def _score_run(args: argparse.Namespace) -> int:
    _quiet_prefect(args.verbose)
    from benchforge.core.progress import listening
    from benchforge.core.progress_bar import TrialProgress
    from benchforge.flows.runs import score_run

    with TrialProgress("scoring") as bar, listening(bar.update):
        scores = score_run(run_id=args.run_id, rescore=args.rescore, workers=args.workers)
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(scores.statuses.items())) or "none"
    print(
        f"run {scores.run_id}: scored {scores.scored} trials ({statuses}), "
        f"{scores.skipped} already scored, in {scores.seconds:.1f}s"
    )
    return 0


def latest_run_id() -> str:
    from benchforge.core.artifacts import open_store
    from benchforge.core.settings import load_settings
    from benchforge.harness.models import RunSpec

    store = open_store(load_settings().artifact_root)
    specs = [
        RunSpec.model_validate_json(store.get_bytes(info.key))
        for info in store.list("runs/")
        if info.key.count("/") == 2 and info.key.endswith("/run.json")
    ]
    if not specs:
        raise BenchforgeError("no runs in the artifact store yet: `benchforge run ...` first")
    return max(specs, key=lambda s: s.created_at).run_id


def _report(args: argparse.Namespace) -> int:
    _quiet_prefect(args.verbose)
    from benchforge.flows.report import report

    result = report(run_id=args.run_id or latest_run_id())
    print(result.markdown)
    for name, uri in sorted(result.uris.items()):
        print(f"saved {name}: {uri}")
    return 0


def _view(args: argparse.Namespace) -> int:
    """`benchforge view`: the run browser, a static site of a stored run (no Prefect)."""
    from benchforge.core.artifacts import open_store
    from benchforge.core.settings import load_settings
    from benchforge.harness.browser import serve, write_site
    from benchforge.harness.store import RunStore

    run_id = args.run_id or latest_run_id()
    run = RunStore(open_store(load_settings().artifact_root), run_id)
    out = Path(args.out) if args.out else Path("out") / "view" / run_id
    site = write_site(run, out)
    print(f"run {run_id}: {site.trials} trials ({site.scored} scored) -> {site.index}")
    if not args.serve:
        return 0
    server = serve(site.folder, port=args.port)
    host, port = server.server_address[:2]
    print(f"serving http://{host!s}:{port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped")
    finally:
        server.server_close()
    return 0


def _nightly(args: argparse.Namespace) -> int:
    _quiet_prefect(args.verbose)
    from datetime import date

    from benchforge.core.settings import load_settings
    from benchforge.flows.defaults import NIGHTLY_AGENTS, NIGHTLY_SUITES, nightly_models

    models = args.model or nightly_models(load_settings().openai_api_key is not None)
    _preflight(
        "task_specs",
        args.suite or NIGHTLY_SUITES,
        None,
        args.agent or NIGHTLY_AGENTS,
        models,
        _datasets(args.dataset),
    )
    from benchforge.core.progress import listening
    from benchforge.core.progress_bar import TrialProgress
    from benchforge.flows.nightly import nightly

    with TrialProgress("nightly") as bar, listening(bar.update):
        result = nightly(
            run_date=date.fromisoformat(args.date) if args.date else None,
            suites=args.suite or None,
            agents=args.agent or None,
            models=args.model or None,
            epochs=args.epochs,
            datasets=_datasets(args.dataset),
            verify=not args.no_verify,
            verify_mutations=args.mutations,
            run_id=args.run_id,
        )
    for domain, location in sorted(result.datasets.items()):
        print(f"dataset {domain}: {location}")
        print(f"gold {domain}: {result.gold[domain]}")
    print(f"verified {result.verified_tasks} tasks (gold 100, do-nothing 0)")
    _print_run(result.run)
    print(result.report.markdown)
    for name, uri in sorted(result.report.uris.items()):
        print(f"saved {name}: {uri}")
    return 0


def _settings(_: argparse.Namespace) -> int:
    from benchforge.core.settings import load_settings

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
    score.add_argument(
        "--dataset",
        help="score on this dataset folder only (default: the task's held-out seed, with the "
        "task's visible dataset beside it)",
    )
    score.add_argument(
        "--visible-only",
        action="store_true",
        help="score on the task's visible dataset only (the data an agent sees)",
    )
    score.add_argument("--report", help="where to write the JSON report")
    score.add_argument("--work", help="keep builds in this folder (default: a temp folder)")
    score.add_argument(
        "--unsandboxed",
        action="store_true",
        help="run the candidate's code WITHOUT the sandbox (debugging only; recorded in the "
        "report, never for a leaderboard)",
    )
    score.set_defaults(func=_score)

    run = sub.add_parser(
        "run",
        help="run agents on a suite of tasks, then score",
        description=(
            "Runs every (task, agent, model, epoch) not yet done in the run (resumable: rerun\n"
            "with --run-id to continue after a crash), each trial in a private sandboxed\n"
            "workspace, then scores the trials (flow score_run). Agents: oracle, null,\n"
            "react-de, single-call, command=agent.yaml, react-de=config.yaml. With no API key\n"
            "configured, models must be the mock server's (mock-echo, mock-script:<name>)\n"
            "and the run starts it."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    run.add_argument("--suite", action="append", required=True, help="suite folder name")
    run.add_argument("--agent", action="append", required=True, help="agent (repeatable)")
    run.add_argument("--model", action="append", help="model for agents that call one")
    run.add_argument("--epochs", type=int, default=1)
    run.add_argument("--run-id", help="resume or name a run (default: a new id)")
    run.add_argument("--task", action="append", help="only these task ids")
    run.add_argument("--tasks-root", default="task_specs")
    run.add_argument("--dataset", action="append", help="DOMAIN=LOCATION dataset override")
    run.add_argument("--concurrency", type=int, default=8, help="trials at once")
    run.add_argument("--sandbox-concurrency", type=int, default=4, help="sandboxes at once")
    run.add_argument("--llm-concurrency", type=int, default=16, help="model calls per model")
    run.add_argument("--chunk-size", type=int, default=25, help="trials per Prefect task")
    run.add_argument("--workers", type=int, default=2, help="chunk threads / Dask workers")
    run.add_argument("--dask", help="local[:N] (a local Dask cluster) or a scheduler address")
    run.add_argument("--max-rounds", type=int, help="model calls per trial (default 50)")
    run.add_argument("--action-timeout-s", type=float, help="per tool call (default 120)")
    run.add_argument("--wall-s", type=float, help="per trial (default 1800)")
    run.add_argument("--no-score", action="store_true", help="do not score after running")
    run.set_defaults(func=_run)

    score_run = sub.add_parser("score-run", help="(re)score a run's trials")
    score_run.add_argument("run_id")
    score_run.add_argument("--rescore", action="store_true", help="score every trial again")
    score_run.add_argument("--workers", type=int, default=2)
    score_run.set_defaults(func=_score_run)

    report = sub.add_parser("report", help="print and save a run's leaderboard")
    report.add_argument("run_id", nargs="?", help="default: the latest run")
    report.set_defaults(func=_report)

    view = sub.add_parser(
        "view",
        help="browse a run: a static HTML site of its leaderboard, trials, diffs and trajectories",
        description=(
            "Writes a static HTML site of RUN (default: the latest run) to --out (default\n"
            "./out/view/RUN): the leaderboard, an index of trials filtered by task, agent,\n"
            "model and status, and a page per trial (score, per-node diff, trajectory, sandbox,\n"
            "errors). --serve then serves it on 127.0.0.1 until interrupted."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    view.add_argument("run_id", nargs="?", metavar="RUN", help="default: the latest run")
    view.add_argument("--out", help="the site's folder (default: ./out/view/RUN)")
    view.add_argument("--serve", action="store_true", help="serve it on 127.0.0.1")
    view.add_argument("--port", type=int, default=8000, help="with --serve (0: a free port)")
    view.set_defaults(func=_view)

    nightly = sub.add_parser(
        "nightly", help="the nightly evaluation: synthesize -> gold -> verify -> run -> report"
    )
    nightly.add_argument("--date", help="YYYY-MM-DD: the run is nightly-<date> (backfills)")
    nightly.add_argument("--suite", action="append", help="default: de-crm")
    nightly.add_argument("--agent", action="append", help="default: oracle, null, react-de")
    nightly.add_argument("--model", action="append", help="default: the mock react-de script")
    nightly.add_argument("--epochs", type=int, default=1)
    nightly.add_argument("--dataset", action="append", help="DOMAIN=LOCATION dataset override")
    nightly.add_argument("--run-id", help="default: nightly-<date>")
    nightly.add_argument("--no-verify", action="store_true", help="skip task self-verification")
    nightly.add_argument(
        "--mutations",
        action="store_true",
        help="verify the mutation and reward-hack catalogues too (what the scheduled nightly does)",
    )
    nightly.set_defaults(func=_nightly)

    mock = sub.add_parser(
        "mock-llm",
        help="serve a local OpenAI-compatible mock (scripted replies, injectable faults)",
        description="Every reply says it is the mock (x-benchforge-mock header, fingerprint).",
    )
    from benchforge.agents.mock_llm import add_arguments, serve

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
    except Exception as err:
        # A flow's parameters failed its signature's validation (Prefect is imported lazily).
        if type(err).__name__ != "ParameterTypeError":
            raise
        print(f"benchforge: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("benchforge: interrupted; nothing was published", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

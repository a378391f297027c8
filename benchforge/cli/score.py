"""``benchforge score``: score one candidate repository against a task's gold (CS / CFS / SR)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchforge.cli.common import Subparsers
from benchforge.cli.prefect_server import use_prefect


def add_parser(sub: Subparsers) -> None:
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
    score.add_argument(
        "--show-heldout-examples",
        action="store_true",
        help="keep example rows of the held-out seed in the report (default: only counts and "
        "the differing columns; held-out rows stay held out)",
    )
    score.add_argument(
        "--work",
        help="keep builds in this folder (default: gold builds in the artifact root's scoring "
        "folder, shared with runs and verification, so they and kept scores are reused; the "
        "candidate's builds in a temp folder)",
    )
    score.add_argument(
        "--unsandboxed",
        action="store_true",
        help="run the candidate's code WITHOUT the sandbox (debugging only; recorded in the "
        "report, never for a leaderboard)",
    )
    score.set_defaults(func=score_command)


def score_command(args: argparse.Namespace) -> int:
    import tempfile

    use_prefect(args.verbose, start=False)  # a flow only to synthesize a missing dataset
    from benchforge.core.scratch import private_folder
    from benchforge.core.settings import load_settings
    from benchforge.evaluation.de.tasks import dump_report, prepare_gold, score_task
    from benchforge.evaluation.tasks import load_task
    from benchforge.flows.datasets import heldout_dataset, task_dataset
    from benchforge.harness.sandbox_policy import work_root

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
        # the gold cache runs and verification use ("scoring"), unless told otherwise
        gold_work = work if args.work else work_root(load_settings()) / "scoring"
        candidate = Path(args.candidate).resolve()
        dataset = task_dataset(loaded, args.dataset, work / "dataset")
        gold = prepare_gold(loaded, dataset, gold_work)
        # private: other `score` commands may share --work (its gold builds and materials)
        result = score_task(
            loaded,
            candidate,
            gold,
            dataset,
            private_folder(work, "score"),
            unsandboxed=args.unsandboxed,
            reuse=True,
        )
        if args.dataset is None and ref.location is None and not args.visible_only:
            heldout = heldout_dataset(ref.domain, work / "heldout", ref.scale, ref.seed)
            primary = score_task(
                loaded,
                candidate,
                prepare_gold(loaded, heldout, gold_work),
                heldout,
                private_folder(work, "score-heldout"),
                unsandboxed=args.unsandboxed,
                reuse=True,
            )
            if not args.show_heldout_examples:
                primary = primary.without_examples()
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

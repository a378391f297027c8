"""``benchforge run`` (agents on a suite, then scoring), ``score-run``, ``report`` and ``view``:
the stages of one run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from benchforge.cli.common import (
    Subparsers,
    add_infra_share_argument,
    check_share,
    infra_exit,
    latest_run_id,
    parse_datasets,
    parse_limits,
    preflight,
    print_infra_errors,
    print_run,
)
from benchforge.cli.prefect_server import flow_only, use_prefect
from benchforge.core.errors import BenchforgeError

if TYPE_CHECKING:
    from benchforge.evaluation.judges.client import JudgeSettings
    from benchforge.flows.runs import ScoreSummary


def add_parser(sub: Subparsers) -> None:
    run = sub.add_parser(
        "run",
        help="run agents on a suite of tasks, then score",
        description=(
            "Runs every (task, agent, model, epoch) not yet done in the run (resumable: rerun\n"
            "with --run-id to continue after a crash), each trial in a private sandboxed\n"
            "workspace, then scores the trials (flow score_run). Agents: oracle, null,\n"
            "react-de, react-da, single-call, command=agent.yaml, react-de=config.yaml. With no\n"
            "API key configured, models must be the mock server's (mock-echo,\n"
            "mock-script:<name>) and the run starts it; with no --model each model-calling\n"
            "agent runs its own mock script (react-de, react-da).\n"
            "Judged tasks (da_open reports, de_arch blueprints) are scored by an LLM judge\n"
            "(--judge-model; offline the mock server's mock-judge)."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    run.epilog = flow_only(
        "its trials run in chunks as Prefect tasks on Prefect's thread or Dask task runner"
    )
    run.add_argument("--suite", action="append", required=True, help="suite folder name")
    run.add_argument("--agent", action="append", required=True, help="agent (repeatable)")
    run.add_argument("--model", action="append", help="model for agents that call one")
    run.add_argument("--epochs", type=int, default=1)
    run.add_argument("--run-id", help="resume or name a run (default: a new id)")
    run.add_argument("--task", action="append", help="only these task ids")
    run.add_argument(
        "--setting",
        action="append",
        help="only the tasks tagged setting:SETTING (repeatable; lake tasks: full, oracle, "
        "trimmed, obscured, subtasks: each setting is its own task)",
    )
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
    add_infra_share_argument(run)
    add_visible_scores_argument(run)
    add_judge_arguments(run)
    run.set_defaults(func=run_command)

    score_run = sub.add_parser(
        "score-run",
        help="(re)score a run's trials without re-running agents",
        description=(
            "Scores a run's finished trials that have no score yet or a scoring error (all\n"
            "with --rescore). A trial whose scoring raises is recorded as a scoring error\n"
            "(listed, with the reason, never a 0) and the others are scored on.\n"
            "Judged trials (da_open reports, de_arch blueprints) go through the judge's\n"
            "response cache: re-scoring unchanged outputs sends no LLM request, and the\n"
            "number of requests sent is printed."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    score_run.epilog = flow_only("its trials are scored in chunks as Prefect tasks")
    score_run.add_argument("run_id", nargs="?", help="default: the latest run")
    score_run.add_argument("--rescore", action="store_true", help="score every trial again")
    score_run.add_argument(
        "--fresh",
        action="store_true",
        help="score every submission afresh instead of finding its score kept by content "
        "(same task, scorer, data, files, answer and judge) in the score store",
    )
    score_run.add_argument(
        "--show-heldout-examples",
        action="store_true",
        help="keep example rows in scores on the held-out seed (default: counts and the "
        "differing columns only; held-out rows stay held out)",
    )
    score_run.add_argument("--workers", type=int, default=2)
    score_run.add_argument(
        "--dask",
        help="score on a Dask cluster: local[:N] or a scheduler address (tcp://HOST:PORT); "
        "its workers share the artifact store and the work folder",
    )
    add_infra_share_argument(score_run)
    add_visible_scores_argument(score_run)
    add_judge_arguments(score_run)
    score_run.set_defaults(func=score_run_command)

    report = sub.add_parser("report", help="print and save a run's leaderboard")
    report.epilog = flow_only("it publishes the leaderboard as Prefect artifacts too")
    report.add_argument("run_id", nargs="?", help="default: the latest run")
    report.set_defaults(func=report_command)

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
    view.set_defaults(func=view_command)


def add_visible_scores_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--visible-scores",
        action="store_true",
        help="also score DE trials on the visible dataset (the _visible columns, which show "
        "answers fitted to the data the agent saw; a second scoring per trial)",
    )


def tasks_in_settings(
    tasks_root: str, suites: list[str], task_ids: list[str] | None, settings: list[str]
) -> list[str]:
    """The ids of the suites' tasks (of ``task_ids`` if given) tagged ``setting:<S>`` for one of
    ``settings``; none is an error (a misspelt setting runs nothing)."""
    from benchforge.harness.preflight import suite_tasks

    wanted = {f"setting:{s}" for s in settings}
    tasks = suite_tasks(tasks_root, suites, task_ids)
    chosen = [t.spec.id for t in tasks if wanted & set(t.spec.tags)]
    if not chosen:
        raise BenchforgeError(
            f"no task of {', '.join(suites)} is tagged {' or '.join(sorted(wanted))}"
        )
    return chosen


def run_command(args: argparse.Namespace) -> int:
    from benchforge.core.settings import load_settings
    from benchforge.harness.preflight import resolve_models

    check_share(args.max_infra_error_share)
    has_key = load_settings().openai_api_key is not None
    if args.setting:
        args.task = tasks_in_settings(args.tasks_root, args.suite, args.task, args.setting)
    preflight(
        args.tasks_root,
        args.suite,
        args.task or None,
        args.agent,
        resolve_models(args.agent, args.model or [], has_key),
        parse_datasets(args.dataset),
    )
    use_prefect(args.verbose)
    from benchforge.core.progress import listening
    from benchforge.core.progress_bar import TrialProgress
    from benchforge.flows.runs import run_suite, score_run
    from benchforge.harness.infra_errors import kept

    share = args.max_infra_error_share
    with TrialProgress("trials") as bar, listening(bar.update):
        summary = kept(run_suite)(
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
            limits=parse_limits(args),
            datasets=parse_datasets(args.dataset),
            dask=args.dask,
            max_infra_error_share=share,
        )
    print_run(summary)
    if not args.no_score:
        with TrialProgress("scoring") as bar, listening(bar.update):
            scores = kept(score_run)(
                run_id=summary.run_id,
                workers=args.workers,
                judge_model=args.judge_model,
                judge=judge_settings(args),
                visible_scores=args.visible_scores,
                max_infra_error_share=share,
                dask=args.dask,
            )
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(scores.statuses.items())) or "none"
        print(
            f"  scored {scores.scored} trials ({statuses}) in {scores.seconds:.1f}s; "
            f"see `benchforge report {summary.run_id}`"
        )
        print(f"  {scores.cost_line()}")
        if scores.judge is not None:
            print(f"  {scores.judge.line()}")
        print_scoring_errors(scores)
    return infra_exit([summary.infra], share)


def score_run_command(args: argparse.Namespace) -> int:
    check_share(args.max_infra_error_share)
    use_prefect(args.verbose)
    from benchforge.core.progress import listening
    from benchforge.core.progress_bar import TrialProgress
    from benchforge.flows.runs import score_run
    from benchforge.harness.infra_errors import kept

    run_id = args.run_id or latest_run_id()
    with TrialProgress("scoring") as bar, listening(bar.update):
        scores = kept(score_run)(
            run_id=run_id,
            rescore=args.rescore,
            workers=args.workers,
            judge_model=args.judge_model,
            judge=judge_settings(args),
            show_heldout_examples=args.show_heldout_examples,
            visible_scores=args.visible_scores,
            max_infra_error_share=args.max_infra_error_share,
            reuse_kept_scores=not args.fresh,
            dask=args.dask,
        )
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(scores.statuses.items())) or "none"
    print(
        f"run {scores.run_id}: scored {scores.scored} trials ({statuses}), "
        f"{scores.skipped} already scored, in {scores.seconds:.1f}s"
    )
    print(f"  {scores.cost_line()}")
    if scores.judge is not None:
        print(f"  {scores.judge.line()}")
    print_scoring_errors(scores)
    print_infra_errors(scores.infra)
    return infra_exit([scores.infra], args.max_infra_error_share)


def print_scoring_errors(scores: ScoreSummary) -> None:
    """The trials whose scoring raised, with why: listed apart on the leaderboard (never a
    0), and scored again by the next `benchforge score-run`."""
    if not scores.scoring_errors:
        return
    print(
        f"  {len(scores.scoring_errors)} scoring error(s), not counted as 0 and listed on the "
        f"leaderboard; `benchforge score-run {scores.run_id}` scores them again:"
    )
    for slug, detail in scores.scoring_errors.items():
        print(f"  ! {slug}: {' '.join(detail.split())}")


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--judge-model",
        help="model judging reports and blueprints (default gpt-4.1-mini; the mock server's "
        "mock-judge without an API key)",
    )
    parser.add_argument(
        "--judge-mode",
        choices=["per_item", "batched"],
        default="per_item",
        help="one judge call per rubric item, or one per rubric path",
    )
    parser.add_argument(
        "--gsb-alpha", type=float, help="Score_da = a*rubric + (1-a)*GSB (default 0.8)"
    )


def judge_settings(args: argparse.Namespace) -> JudgeSettings:
    from benchforge.evaluation.judges.client import JudgeSettings

    fields: dict[str, object] = {"mode": args.judge_mode}
    if args.gsb_alpha is not None:
        if not 0 <= args.gsb_alpha <= 1:
            raise BenchforgeError(f"--gsb-alpha must be between 0 and 1, not {args.gsb_alpha}")
        fields["gsb_alpha"] = args.gsb_alpha
    return JudgeSettings.model_validate(fields)


def report_command(args: argparse.Namespace) -> int:
    use_prefect(args.verbose)
    from benchforge.flows.report import report

    result = report(run_id=args.run_id or latest_run_id())
    print(result.markdown)
    for name, uri in sorted(result.uris.items()):
        print(f"saved {name}: {uri}")
    return 0


def view_command(args: argparse.Namespace) -> int:
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

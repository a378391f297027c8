"""``benchforge judge export-labelling`` (labelling material from a scored run) and
``benchforge calibrate`` (judge models against human labels, with the promotion gate)."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchforge.cli.common import Subparsers, latest_run_id
from benchforge.cli.prefect_server import flow_only, use_prefect


def add_parser(sub: Subparsers) -> None:
    judge = sub.add_parser(
        "judge",
        help="judge calibration material: export cases of a scored run for human labelling",
    )
    verbs = judge.add_subparsers(dest="judge_command", required=True, metavar="COMMAND")
    export = verbs.add_parser(
        "export-labelling",
        help="sample a run's judged cases into cases.jsonl, labelling.csv and labelling.html",
        description=(
            "Samples the judged cases of a scored run (rubric items and GSB comparisons of\n"
            "judged outputs, and verdicts a family's judge gives on a trial's record, such as\n"
            "one case per milestone), stratified by (task, agent, kind), and writes into\n"
            "--out: cases.jsonl (self-contained cases, for `benchforge calibrate`),\n"
            "labelling.csv (fill in rater and label) and labelling.html (the cases to read).\n"
            "See docs/calibration.md."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    export.add_argument(
        "run_id", metavar="RUN", nargs="?", help="a scored run with judged trials (default: latest)"
    )
    export.add_argument("--out", required=True, help="folder for the three files")
    export.add_argument("--per-stratum", type=int, default=5, help="cases per stratum")
    export.add_argument("--seed", type=int, default=0, help="the sampling seed")
    export.set_defaults(func=export_command)

    calibrate = sub.add_parser(
        "calibrate",
        help="calibrate judge models against human labels (agreement, intervals, gate)",
        description=(
            "Judges every labelled case --repeats times with each --judge-model, compares the\n"
            "verdicts with the humans (Pearson r on rubric items, quadratic kappa on GSB\n"
            "pairs, leave one out; Krippendorff alpha; agent- and trial-level correlations;\n"
            "per item type and task; position and length bias; each beside the humans' own,\n"
            "with 95% bootstrap intervals), and gates each model on the lower bound of its\n"
            "agreement. Without an API\n"
            "key the judges are the mock server's: mock-judge, or\n"
            "mock-judge-noisy:sigma=S,bias=B,seed=N (answering from --truth, default the\n"
            "humans' consensus). Exit status 1 when no model is accepted."
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    calibrate.epilog = flow_only("the calibrate_judge flow publishes its report as artifacts")
    calibrate.add_argument("--cases", required=True, help="cases.jsonl")
    calibrate.add_argument(
        "--labels", action="append", required=True, help="labels file, CSV or JSONL (repeatable)"
    )
    calibrate.add_argument("--judge-model", action="append", help="model to calibrate (repeatable)")
    calibrate.add_argument("--repeats", type=int, default=2, help="judgments per case and model")
    calibrate.add_argument(
        "--max-agreement-gap",
        type=float,
        default=0.1,
        help="accept only if the lower bound of the judge's agreement >= one rater's "
        "(both leave one out) - this (default 0.1)",
    )
    calibrate.add_argument(
        "--max-inconsistency",
        type=float,
        default=0.2,
        help="accept only if at most this share of GSB pairs flip with order (default 0.2)",
    )
    calibrate.add_argument(
        "--min-cases",
        type=int,
        default=30,
        help="accept only with at least this many labelled cases of each kind (default 30)",
    )
    calibrate.add_argument("--truth", help="truth file for the mock's noisy judges")
    calibrate.add_argument("--out", help="also write report.json and report.html here")
    calibrate.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    calibrate.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    calibrate.add_argument("--concurrency", type=int, default=8, help="judgments at once")
    calibrate.set_defaults(func=calibrate_command)


def export_command(args: argparse.Namespace) -> int:
    from benchforge.flows.calibrate import export_labelling

    summary = export_labelling(
        args.run_id or latest_run_id(), Path(args.out), per_stratum=args.per_stratum, seed=args.seed
    )
    print(
        f"run {summary.run_id}: {summary.cases} cases sampled from {summary.candidates} "
        f"({summary.judged_trials} judged trials, {summary.strata} strata)"
    )
    for name, path in summary.files.items():
        print(f"  {name}: {path}")
    return 0


def calibrate_command(args: argparse.Namespace) -> int:
    from benchforge.evaluation.calibration.cases import read_cases
    from benchforge.evaluation.calibration.labels import load_labels

    # Checked here first: a bad labels file fails in a second, before Prefect and the mock
    # start and before any judge is called (the flow checks again).
    cases = read_cases(Path(args.cases))
    load_labels([Path(p) for p in args.labels], cases)
    use_prefect(args.verbose)
    from benchforge.flows.calibrate import calibrate_judge

    summary = calibrate_judge(
        cases=args.cases,
        labels=args.labels,
        judge_models=args.judge_model or None,
        repeats=args.repeats,
        max_agreement_gap=args.max_agreement_gap,
        max_inconsistency=args.max_inconsistency,
        min_cases=args.min_cases,
        truth=args.truth,
        out=args.out,
        resamples=args.resamples,
        seed=args.seed,
        concurrency=args.concurrency,
    )
    print(
        f"{summary.cases} labelled cases, {summary.labels} labels by {summary.raters} raters, "
        f"{summary.repeats} repeats"
        + (" (judges: the Benchforge mock server)" if summary.mock_llm else "")
    )
    for judge in summary.judges:
        print(f"\n{judge.model}: {'ACCEPTED' if judge.accepted else 'REJECTED'}")
        for name, value in judge.figures.items():
            print(f"  {name:<28} {value}")
        for reason in judge.reasons:
            print(f"  ! {reason}")
    for name, uri in sorted(summary.uris.items()):
        print(f"saved {name}: {uri}")
    return 0 if summary.accepted else 1

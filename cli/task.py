"""``benchforge task``: validate task specs, export their JSON Schema, regenerate contracts,
self-verify (flow ``verify_tasks``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchforge.cli.common import Subparsers, quiet_prefect


def add_parser(sub: Subparsers) -> None:
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
    task.set_defaults(func=task_command)


def _tasks_root(path: str) -> Path:
    """PATH from the working directory where it exists there, else in the catalogue (a
    non-editable install run from anywhere); a folder with no task is an error, not 0 tasks."""
    from benchforge.core.catalogue import catalogue
    from benchforge.core.errors import ConfigError
    from benchforge.evaluation.tasks.loader import discover

    root = catalogue().path(path)
    if not discover(root):
        raise ConfigError(f"no task.yaml under {root}")
    return root


def task_command(args: argparse.Namespace) -> int:
    from benchforge.evaluation.tasks import load_tasks, task_json_schema

    if args.action == "schema":
        sys.stdout.write(task_json_schema())
        return 0
    if args.action == "validate":
        tasks = load_tasks(_tasks_root(args.path))
        for t in tasks:
            print(f"ok  {t.key}  ({t.spec.family}, {t.folder})")
        print(f"{len(tasks)} task(s) valid")
        return 0
    if args.action == "contract":
        return contract(args)
    return verify(args)


def verify(args: argparse.Namespace) -> int:
    quiet_prefect(args.verbose)
    from benchforge.flows.verify import verification_cells, verify_tasks

    results = verify_tasks(path=str(_tasks_root(args.path)))
    for r in results:
        gold, empty, checks, held = verification_cells(r)
        extra = "".join(f", {c}" for c in (checks, held) if c != "-")
        if r.judged is None and r.mutations:
            extra = extra.replace(checks, f"mutations {checks} as predicted", 1)
        if r.hacks:
            extra = extra.replace(f", {held}", f", reward hacks {held} held", 1)
        print(f"ok  {r.task}: gold {gold}, empty {empty}{extra}")
    tried = sum(len(r.hacks) for r in results)
    print(f"reward hacks: {tried} tried, {sum(h.ok for r in results for h in r.hacks)} held")
    return 0


def contract(args: argparse.Namespace) -> int:
    import tempfile

    from benchforge.evaluation.de.tasks import prepare_gold
    from benchforge.evaluation.tasks import DeImplTask, load_tasks
    from benchforge.evaluation.tasks.materials import data_contract, write_contract
    from benchforge.flows.datasets import local_dataset

    for loaded in load_tasks(_tasks_root(args.path)):
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

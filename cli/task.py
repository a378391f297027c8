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
            "verify PATH     gold = 100/100/100, do-nothing = 0, mutations = predicted;\n"
            "                judged: reference >= 90, empty 0, wrong anchors lose their items\n"
            "prepare PATH    da_open tasks: evaluate the anchors on a dataset (--seed, --scale)\n"
            "                and write the rubric with the values substituted (--out)"
        ),
        formatter_class=argparse.RawTextHelpFormatter,
    )
    task.add_argument("action", choices=["validate", "schema", "contract", "verify", "prepare"])
    task.add_argument("path", nargs="?", default="task_specs")
    task.add_argument("--dataset", help="contract / prepare: dataset to build the gold on")
    task.add_argument("--seed", type=int, help="prepare: the dataset's seed (default the task's)")
    task.add_argument("--scale", type=float, help="prepare: the dataset's scale")
    task.add_argument("--out", default="out/prepared", help="prepare: where rubrics are written")
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
    if args.action == "prepare":
        return prepare(args)
    return verify(args)


def prepare(args: argparse.Namespace) -> int:
    """Anchors evaluated on the dataset, substituted into each DA task's rubric and reference:
    what the judge will see for trials on that dataset."""
    quiet_prefect(args.verbose)
    import json

    from benchforge.core.settings import load_settings
    from benchforge.evaluation.families import family_of
    from benchforge.evaluation.judges.render import rubric_markdown
    from benchforge.evaluation.tasks import load_tasks
    from benchforge.flows.datasets import local_dataset
    from benchforge.harness.sandbox_policy import work_root

    work = work_root(load_settings())
    out = Path(args.out)
    prepared = 0
    for loaded in load_tasks(_tasks_root(args.path)):
        if loaded.spec.family != "da_open":
            continue
        ref = loaded.spec.dataset
        seed = ref.seed if args.seed is None else args.seed
        scale = ref.scale if args.scale is None else args.scale
        dataset = local_dataset(ref.domain, args.dataset, work / "datasets", scale, seed)
        gold = family_of(loaded).prepare_gold(loaded, dataset, work / "scoring")
        folder = out / loaded.spec.suite / loaded.spec.id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "rubric.md").write_text(rubric_markdown(gold.rubric), encoding="utf-8")
        (folder / "reference.md").write_text(gold.reference, encoding="utf-8")
        anchors = {k: v.model_dump(mode="json") for k, v in gold.anchors.items()}
        (folder / "anchors.json").write_text(json.dumps(anchors, indent=2) + "\n")
        values = ", ".join(f"{k}={v.text}" for k, v in sorted(gold.anchors.items()))
        print(f"ok  {loaded.key} on {ref.domain} scale {scale:g} seed {seed}: {values}")
        print(f"    rubric {gold.rubric.version} -> {folder}")
        prepared += 1
    if not prepared:
        from benchforge.core.errors import ConfigError

        raise ConfigError(f"no da_open task under {args.path}")
    return 0


def verify(args: argparse.Namespace) -> int:
    quiet_prefect(args.verbose)
    from benchforge.flows.verify import verification_cells, verify_tasks

    results = verify_tasks(path=str(_tasks_root(args.path)))
    for r in results:
        gold, empty, checks, held = verification_cells(r)
        extra = ""
        if r.judged is not None and checks != "-":
            extra += f", {checks}"
        elif r.mutations:
            extra += f", mutations {checks} as predicted"
        if r.hacks:
            extra += f", reward hacks {held} held"
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

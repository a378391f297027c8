"""``benchforge task``: scaffold, validate, export the JSON Schema of, regenerate the contracts
of, self-verify (flow ``verify_tasks``), prepare and list task specs. One subcommand per
action, each with its own options."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from benchforge.cli.common import Subparsers
from benchforge.cli.prefect_server import flow_only, use_prefect

if TYPE_CHECKING:
    from benchforge.evaluation.tasks import LoadedTask
    from benchforge.evaluation.tasks.authoring import TaskReview
    from benchforge.evaluation.tasks.models import DatasetRef, LayerRule

DESCRIPTION = """\
new FAMILY      scaffold task_specs/<suite>/<id>/ (de_impl: with its first contract)
validate PATH   check every task.yaml under PATH (fields, files, contracts, base versions);
                warnings: models of weight 0, no mutations yet, scaffold placeholders
schema          print the JSON Schema of task specs
contract PATH   (re)generate data_contract.yaml of de_impl tasks from a gold build
base-version PATH
                the repository version de_evol tasks must name as base_version
verify PATH     gold = 100/100/100, do-nothing = 0, mutations = predicted;
                judged: reference >= 90, empty 0, wrong anchors lose their items
prepare PATH    da_open tasks: evaluate the anchors on a dataset (--seed, --scale)
                and write the rubric with the values substituted (--out)
catalogue PATH  an HTML page of the tasks with each agent's latest results
workspace PATH --out DIR
                the files an agent receives for one task (its workspace), to inspect"""


def add_parser(sub: Subparsers) -> None:
    task = sub.add_parser(
        "task",
        help="scaffold / validate / export schema / regenerate contracts / verify task specs",
        description=DESCRIPTION,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    actions = task.add_subparsers(dest="action", required=True, metavar="ACTION")
    _new_parser(actions)
    for name, helped in (
        ("validate", "check task specs, their files, contracts and base versions"),
        ("base-version", "print the repository version de_evol tasks must name"),
    ):
        parser = actions.add_parser(name, help=helped)
        _path(parser)
        parser.set_defaults(func=task_command)
    actions.add_parser("schema", help="print the JSON Schema of task specs").set_defaults(
        func=task_command
    )
    contract_parser = actions.add_parser("contract", help="(re)generate de_impl contracts")
    _path(contract_parser)
    contract_parser.add_argument(
        "--dataset",
        help="dataset folder or s3:// prefix to build the gold on (default: the task's)",
    )
    contract_parser.set_defaults(func=task_command)
    verify_parser = actions.add_parser("verify", help="self-verify tasks (gold, do-nothing, ...)")
    verify_parser.epilog = flow_only(
        "each task's checks run as Prefect tasks of the verify_tasks flow, whose table is a "
        "Prefect artifact"
    )
    _path(verify_parser)
    verify_parser.add_argument(
        "--dataset",
        action="append",
        metavar="[DOMAIN=]LOCATION",
        help="verify on this dataset (folder or s3://) instead of the tasks' own; DOMAIN= when "
        "PATH holds tasks of several domains (repeatable)",
    )
    verify_parser.add_argument(
        "--no-hacks",
        action="store_true",
        help="skip the reward-hack catalogue (minutes per de_impl task; the nightly runs it)",
    )
    verify_parser.set_defaults(func=task_command)
    prepare_parser = actions.add_parser("prepare", help="da_open: rubrics with anchor values")
    _path(prepare_parser)
    prepare_parser.add_argument("--dataset", help="dataset folder or s3:// prefix")
    prepare_parser.add_argument("--seed", type=int, help="the dataset's seed (default the task's)")
    prepare_parser.add_argument("--scale", type=float, help="the dataset's scale")
    prepare_parser.add_argument("--out", default="out/prepared", help="where rubrics are written")
    prepare_parser.set_defaults(func=task_command)
    _catalogue_parser(actions)
    workspace_parser = actions.add_parser(
        "workspace", help="write the workspace an agent receives for a task"
    )
    workspace_parser.add_argument("path", help="a task folder (task_specs/<suite>/<id>)")
    workspace_parser.add_argument("--out", required=True, help="an empty or new folder")
    workspace_parser.set_defaults(func=task_command)


def _path(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", nargs="?", default="task_specs", help="a task, a suite or a folder of suites"
    )


def _new_parser(actions: Subparsers) -> None:
    new = actions.add_parser(
        "new",
        help="scaffold a task folder",
        description=(
            "Scaffolds <root>/task_specs/<suite>/<id>/: task.yaml with every field explained "
            "and the family's documents to edit. de_impl: its first data_contract.yaml, from "
            "a gold build of --repo on --dataset. de_evol: base_version set, an empty gold_v2/ "
            "overlay, change_request.md to write. de_arch: requirement, reference blueprint "
            "and a rubric to write."
        ),
    )
    new.add_argument("family", help="de_impl, de_evol or de_arch")
    new.add_argument("--id", required=True, dest="task_id", help="the task id (its folder)")
    new.add_argument("--suite", required=True, help="the suite (folder under task_specs/)")
    new.add_argument("--repo", required=True, help="the gold dbt project")
    new.add_argument(
        "--dataset",
        required=True,
        help="a dataset folder or s3:// prefix (benchforge dataset import / synth made it), "
        "or a shipped domain to synthesize (at --scale, --seed)",
    )
    new.add_argument("--domain", help="the task's domain (default: the dataset's)")
    new.add_argument("--title", help="the task's title (default: from its id)")
    new.add_argument("--scale", type=float, help="with a shipped domain: its scale (0.1)")
    new.add_argument("--seed", type=int, help="with a shipped domain: its seed (7)")
    new.add_argument(
        "--root",
        default=".",
        help="the catalogue root: the folder holding task_specs/ (default: here); --repo "
        "and --dataset are written relative to it when inside it",
    )
    new.add_argument(
        "--layer",
        action="append",
        default=[],
        metavar="[folder:|tag:|fqn:]MATCH=LAYER",
        help="de_impl / de_evol: a scoring.layers rule, e.g. models/reporting=marts, "
        "tag:finance=marts, fqn:shop.legacy.*=staging (repeatable; first match wins)",
    )
    new.add_argument("--force", action="store_true", help="overwrite an existing scaffold")
    new.set_defaults(func=task_command)


def _catalogue_parser(actions: Subparsers) -> None:
    from benchforge.cli import task_catalogue

    parser = actions.add_parser("catalogue", help="an HTML page of the tasks and their results")
    _path(parser)
    parser.add_argument("--out", default=task_catalogue.DEFAULT_OUT, help="the page to write")
    task_catalogue.add_arguments(parser)
    parser.set_defaults(func=task_catalogue.catalogue_command)


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
    from benchforge.evaluation.tasks import task_json_schema

    if args.action == "schema":
        sys.stdout.write(task_json_schema())
        return 0
    commands = {
        "validate": validate,
        "contract": contract,
        "prepare": prepare,
        "verify": verify,
        "new": new,
        "base-version": base_version,
        "workspace": workspace,
    }
    return commands[args.action](args)


def _scratch() -> Path:
    from benchforge.core.settings import load_settings
    from benchforge.harness.sandbox_policy import work_root

    return work_root(load_settings())


def workspace(args: argparse.Namespace) -> int:
    """Materializes the task's workspace as the harness does for a trial (without the
    agent's dbt profile), so a maintainer sees exactly what an agent is given."""
    from benchforge.core.errors import ConfigError
    from benchforge.evaluation.families import workspace as materialize
    from benchforge.evaluation.tasks import load_tasks

    tasks = load_tasks(_tasks_root(args.path))
    if len(tasks) != 1:
        raise ConfigError(f"{args.path} holds {len(tasks)} tasks: name one task folder")
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"{out} is not empty: the workspace goes into a new or empty folder")
    materialize(tasks[0], out)
    files = sorted(p for p in out.rglob("*") if p.is_file())
    print(f"workspace of {tasks[0].key}: {len(files)} files in {out}")
    for path in files:
        print(f"  {path.relative_to(out).as_posix()}")
    return 0


def validate(args: argparse.Namespace) -> int:
    """Spec and files of every task (all problems at once), then each family's review: its
    problems fail validation, its warnings are printed."""
    from benchforge.evaluation.tasks import load_tasks
    from benchforge.evaluation.tasks.authoring import review_tasks

    tasks = load_tasks(_tasks_root(args.path))
    reviews = review_tasks(tasks, _scratch() / "parsed")
    invalid = {r.task for r in reviews if r.problems}
    for t in tasks:
        if t.key not in invalid:
            print(f"ok  {t.key}  ({t.spec.family}, {t.folder})")
    warnings = [f"warning  {r.task}: {w}" for r in reviews for w in r.warnings]
    for line in warnings:
        print(line)
    _fail_on_problems(reviews)
    print(f"{len(tasks)} task(s) valid" + (f", {len(warnings)} warning(s)" if warnings else ""))
    return 0


def _fail_on_problems(reviews: list[TaskReview]) -> None:
    from benchforge.evaluation.tasks.authoring import InvalidTasksError

    if any(r.problems for r in reviews):
        raise InvalidTasksError(reviews)


def base_version(args: argparse.Namespace) -> int:
    """A dbt project's version, or for each task under PATH that pins its repository's version
    (de_evol: ``base_version``) the version it names and the repository's now."""
    from benchforge.core.errors import ConfigError
    from benchforge.evaluation.families import family_of
    from benchforge.evaluation.gold import repo_version
    from benchforge.evaluation.tasks import load_tasks

    path = Path(args.path)
    if (path / "dbt_project.yml").is_file():
        print(repo_version(path))
        return 0
    shown = 0
    for loaded in load_tasks(_tasks_root(args.path)):
        pin = family_of(loaded).repository_pin(loaded)
        if pin is None:
            continue
        named, current = pin
        state = "not set" if named is None else "current" if named == current else "STALE"
        print(f"{loaded.key}  base_version {named or '-'}  repository {current}  ({state})")
        shown += 1
    if not shown:
        raise ConfigError(
            f"no task pinning its repository's version (de_evol) and no dbt_project.yml "
            f"under {args.path}"
        )
    return 0


def contract(args: argparse.Namespace) -> int:
    """Each de_impl task's contract from a gold build on its dataset (or ``--dataset``); a
    task's first contract too (the file need not exist)."""
    use_prefect(args.verbose, start=False)  # a flow only to synthesize a missing dataset
    from benchforge.evaluation.families import families, family_of
    from benchforge.evaluation.tasks import load_tasks
    from benchforge.flows.datasets import task_dataset

    scratch = _scratch()
    written = 0
    generated = tuple(sorted({name for f in families().values() for name in f.generated}))
    for loaded in load_tasks(_tasks_root(args.path), missing_ok=generated):
        family = family_of(loaded)
        if not family.generated:
            continue
        dataset = task_dataset(loaded, args.dataset, scratch / "datasets" / loaded.spec.domain)
        for path in family.generate(loaded, dataset, scratch):
            print(f"wrote {path}")
            written += 1
    if not written:
        from benchforge.core.errors import ConfigError

        names = ", ".join(n for n, f in sorted(families().items()) if f.generated)
        raise ConfigError(f"no task with generated files under {args.path} (families: {names})")
    return 0


def verify(args: argparse.Namespace) -> int:
    """The tasks' authored files are checked first (no flow starts for a task that cannot
    pass); then the ``verify_tasks`` flow."""
    from benchforge.evaluation.tasks import load_tasks
    from benchforge.evaluation.tasks.authoring import review_problems

    root = _tasks_root(args.path)
    tasks = load_tasks(root)
    _fail_on_problems([review_problems(t) for t in tasks])
    datasets = _verify_datasets(args.dataset, sorted({t.spec.domain for t in tasks}))
    use_prefect(args.verbose)
    from benchforge.core.records.verification import HACKS
    from benchforge.flows.verify import verification_cells, verify_tasks

    results = verify_tasks(path=str(root), datasets=datasets or None, hacks=not args.no_hacks)
    for r in results:
        gold, empty, checks, held = verification_cells(r)
        extra = f", {checks}" if checks != "-" else ""
        if held != "-":
            extra += f", reward hacks {held} held"
        print(f"ok  {r.task}: {gold}, {empty}{extra}")
    hacks = [c for r in results for c in r.group(HACKS)]
    if args.no_hacks:
        print("reward hacks: not tried (--no-hacks; the nightly verification tries them all)")
    else:
        print(f"reward hacks: {len(hacks)} tried, {sum(c.passed for c in hacks)} held")
    return 0


def _verify_datasets(given: list[str] | None, domains: list[str]) -> dict[str, str]:
    """``--dataset`` values: DOMAIN=LOCATION, or a bare LOCATION for the one domain of the
    tasks verified."""
    from benchforge.cli.common import parse_datasets
    from benchforge.core.errors import ConfigError

    pairs = [g for g in given or [] if "=" in g and "/" not in g.partition("=")[0]]
    bare = [g for g in given or [] if g not in pairs]
    found = parse_datasets(pairs)
    if bare:
        if len(bare) > 1 or len(domains) != 1:
            raise ConfigError(
                f"--dataset {bare[0]}: the tasks under PATH have domains {', '.join(domains)}; "
                "say which with --dataset DOMAIN=LOCATION"
            )
        found[domains[0]] = bare[0]
    unknown = sorted(set(found) - set(domains))
    if unknown:
        raise ConfigError(
            f"--dataset {unknown[0]}=...: no task under PATH has domain {unknown[0]} "
            f"(domains: {', '.join(domains)})"
        )
    return {domain: _absolute(location) for domain, location in found.items()}


def _absolute(location: str) -> str:
    return location if location.startswith("s3://") else str(Path(location).expanduser().resolve())


def prepare(args: argparse.Namespace) -> int:
    """Anchors and claims evaluated on the dataset, substituted into each DA task's rubric and
    reference: what the judge will see for trials on that dataset. Each task's rendered claims
    are checked against the data (none may contradict the numbers the reports print): 1 when
    one does."""
    use_prefect(args.verbose, start=False)  # a flow only to synthesize a missing dataset
    from benchforge.core.errors import ConfigError
    from benchforge.evaluation.families import families, family_of
    from benchforge.evaluation.tasks import load_tasks
    from benchforge.flows.datasets import local_dataset, task_dataset

    work = _scratch()
    out = Path(args.out)
    prepared = 0
    contradicted = 0
    for loaded in load_tasks(_tasks_root(args.path)):
        family = family_of(loaded)
        if not family.prepares:
            continue
        ref = loaded.spec.dataset
        scratch = work / "datasets" / ref.domain
        if args.seed is None and args.scale is None:
            dataset = task_dataset(loaded, args.dataset, scratch)
            shown = args.dataset or ref.location or f"scale {ref.scale:g} seed {ref.seed}"
        else:
            if ref.location is not None and args.dataset is None:
                raise ConfigError(
                    f"{loaded.key} runs on the dataset at {ref.location}: it has no other "
                    "seeds or scales (give --dataset instead of --seed / --scale)"
                )
            seed = ref.seed if args.seed is None else args.seed
            scale = ref.scale if args.scale is None else args.scale
            dataset = local_dataset(ref.domain, args.dataset, scratch, scale, seed)
            shown = f"scale {scale:g} seed {seed}"
        folder = out / loaded.spec.suite / loaded.spec.id
        made = family.prepare(loaded, dataset, work / "scoring", folder)
        verdict = "BAD" if made.problems else "ok "
        print(f"{verdict} {loaded.key} on {ref.domain} {shown}: {made.values}")
        for line in made.lines:
            print(f"    {line}")
        for problem in made.problems:
            print(f"    FAIL {problem}")
        for warning in made.warnings:
            print(f"    warn {warning}")
        contradicted += bool(made.problems)
        prepared += 1
    if not prepared:
        names = ", ".join(n for n, f in sorted(families().items()) if f.prepares)
        raise ConfigError(f"no task to prepare under {args.path} (families that prepare: {names})")
    return 1 if contradicted else 0


def new(args: argparse.Namespace) -> int:
    """Scaffolds the task; a de_impl task gets its first contract from a gold build on its
    dataset (as ``task contract`` would write it)."""
    use_prefect(args.verbose, start=False)  # a flow only to synthesize a missing dataset
    from benchforge.evaluation.dbt.project import require_dbt_project
    from benchforge.evaluation.families import family_of
    from benchforge.evaluation.tasks.scaffold import TaskDraft, relative_to_root, scaffold_task

    root = Path(args.root).expanduser().resolve()
    repo = require_dbt_project(Path(args.repo))
    dataset, domain = _draft_dataset(args, root)
    draft = TaskDraft(
        family=args.family,
        id=args.task_id,
        suite=args.suite,
        title=args.title or args.task_id.replace("-", " ").replace("_", " ").capitalize(),
        domain=domain,
        dataset=dataset,
        repo=relative_to_root(repo, root),
        root=root,
    )
    made = scaffold_task(draft, force=args.force)
    task = made.task
    if args.layer:
        task = _with_layer_rules(task, [_layer_rule(text) for text in args.layer])
    written = list(made.written)
    if family_of(task).generated:
        written += _first_generated(task)
    for path in sorted(set(written)):
        print(f"wrote {_shown(path)}")
    for line in _next_steps(task):
        print(line)
    return 0


def _layer_rule(text: str) -> LayerRule:
    """``[folder:|tag:|fqn:]MATCH=LAYER`` as a rule (a bare MATCH is a folder)."""
    from benchforge.core.errors import ConfigError
    from benchforge.evaluation.tasks.models import LayerRule

    match, sep, layer = text.rpartition("=")
    kind, colon, value = match.partition(":")
    if not colon:
        kind, value = "folder", match
    if not sep or not value or not layer or kind not in ("folder", "tag", "fqn"):
        raise ConfigError(
            f"--layer {text!r}: expected [folder:|tag:|fqn:]MATCH=LAYER, "
            "e.g. models/reporting=marts or tag:finance=marts"
        )
    return LayerRule.model_validate({"layer": layer, kind: value.rstrip("/")})


def _with_layer_rules(task: LoadedTask, rules: list[LayerRule]) -> LoadedTask:
    """Rewrites the scaffolded task.yaml with ``scoring.layers`` set (before its contract is
    generated: the contract records the layer mapping)."""
    from benchforge.core.errors import ConfigError
    from benchforge.evaluation.tasks.loader import TASK_FILE, load_task
    from benchforge.evaluation.tasks.scaffold import rewrite_spec

    if getattr(task.spec, "scoring", None) is None:
        raise ConfigError(f"--layer: {task.spec.family} tasks have no DE scoring")
    data = task.spec.model_dump(mode="json", exclude_unset=True)
    data.setdefault("scoring", {})["layers"] = [r.model_dump(exclude_none=True) for r in rules]
    rewrite_spec(task.folder / TASK_FILE, type(task.spec).model_validate(data))
    return load_task(task.folder, missing_ok=("contract",))


def _first_generated(task: LoadedTask) -> list[Path]:
    """The scaffolded task's generated files (a de_impl task's contract), built as ``task
    contract`` builds them; if the gold does not build, the error says how to finish once the
    project is fixed."""
    from benchforge.core.errors import BenchforgeError
    from benchforge.evaluation.families import family_of
    from benchforge.flows.datasets import task_dataset

    scratch = _scratch()
    try:
        folder = task_dataset(task, None, scratch / "datasets" / task.spec.domain)
        return family_of(task).generate(task, folder, scratch, first=True)
    except BenchforgeError as err:
        raise BenchforgeError(
            f"{err}\nThe task is scaffolded in {_shown(task.folder)} but has no contract yet: "
            f"once this is fixed, run `benchforge task contract {_shown(task.folder)}`"
        ) from err


def _draft_dataset(args: argparse.Namespace, root: Path) -> tuple[DatasetRef, str]:
    """``--dataset`` as a spec's dataset: an existing dataset's location (relative to the
    catalogue root when inside it; its domain from its record unless ``--domain``), or a
    shipped domain synthesized at ``--scale`` / ``--seed``."""
    from difflib import get_close_matches

    from benchforge.core.artifacts import LAYOUT
    from benchforge.core.errors import ConfigError
    from benchforge.core.records import DatasetRecord
    from benchforge.evaluation.tasks.models import DatasetRef
    from benchforge.evaluation.tasks.scaffold import relative_to_root
    from benchforge.synthesis.spec.loader import shipped_domains

    given: str = args.dataset
    generation = {k: v for k, v in (("scale", args.scale), ("seed", args.seed)) if v is not None}
    located = given.startswith("s3://") or (
        Path(given).expanduser().is_dir() and given not in shipped_domains()
    )
    if generation and located:
        raise ConfigError(
            f"--dataset {given} is a dataset as it is: --scale and --seed are for a domain "
            "to synthesize"
        )
    if given.startswith("s3://"):
        if not args.domain:
            raise ConfigError(f"--dataset {given}: give the task's --domain with an s3:// dataset")
        return DatasetRef(domain=args.domain, location=given), args.domain
    folder = Path(given).expanduser()
    shipped = shipped_domains()
    if folder.is_dir() and not (
        given in shipped and not LAYOUT.dataset_record_file(folder).exists()
    ):
        record = LAYOUT.dataset_record_file(folder)
        if not record.is_file():
            raise ConfigError(
                f"--dataset {given}: not a dataset (no {record.name}); make one with "
                "`benchforge dataset import` or `benchforge synth`"
            )
        domain = args.domain or DatasetRecord.model_validate_json(record.read_text()).domain
        return DatasetRef(domain=domain, location=relative_to_root(folder, root)), domain
    if given not in shipped:
        near = get_close_matches(given, shipped, n=1)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise ConfigError(
            f"--dataset {given}: no dataset folder there and no shipped domain of that name "
            f"(shipped: {', '.join(shipped)}){hint}"
        )
    if args.domain and args.domain != given:
        raise ConfigError(f"--domain {args.domain} differs from the dataset's domain {given}")
    return DatasetRef(domain=given, **generation), given


def _next_steps(task: LoadedTask) -> list[str]:
    from benchforge.evaluation.families import family_of

    folder = _shown(task.folder)
    return [
        "next:",
        f"  edit {folder}/task.yaml: title, instructions (the family's default), tags",
        *family_of(task).next_steps(task, _shown),
        f"check: benchforge task validate {folder}",
        f"       benchforge task verify {folder}",
    ]


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when inside it (what a user types)."""
    path = path.resolve()
    here = Path.cwd().resolve()
    return path.relative_to(here).as_posix() if path.is_relative_to(here) else str(path)

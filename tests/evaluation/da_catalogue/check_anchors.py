"""The data-dependent check of the ``da_open`` tasks of every suite (crm, ads, enterprise; a
script: a gold build per domain and seed takes about half a minute, too slow for the test
suite).

    python -m tests.evaluation.da_catalogue.check_anchors            # seeds 7 and 8
    python -m tests.evaluation.da_catalogue.check_anchors --seeds 7 8 11 --work /tmp/da-check
    python -m tests.evaluation.da_catalogue.check_anchors --suite da-crm --seeds 7 8 11

For every domain and seed it synthesizes the task's dataset (the task's scale, the given seed)
and builds the gold repository once (cached under ``--work``); then, per task, it copies the
task's marts alone into an analysis database (so an anchor reading any other table fails, as
it would for the agent) and evaluates the anchors with the harness's own
``evaluate_anchors``. With the real values it checks what the static test can only check on
made-up numbers:

- the reference scores >= 90% under THE FAITHFUL MOCK JUDGE RULE (both stop-word readings),
  no anchored line is a hedge, no line copies 8 words of a criterion;
- a reference whose anchored numbers are all wrong (x1.37, the harness's factor) loses
  exactly the anchored items;
- every baseline loses the GSB comparison on both dimensions;
- each anchor's value changes with the seed by more than its tolerance (warned when the text
  differs but the change is within tolerance; failed when the text is the same);
- the claims (the rendered comparisons, rankings and directions) are decided by the harness's
  own ``evaluate_claims``, and none contradicts the numbers the reports print
  (``claim_problems``; near ties are printed as warnings), with every report rendered and
  judged with the seed's words.

Exit status 1 when any check fails; the table of anchor values is printed either way.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import duckdb

from benchforge.evaluation.da.anchors import evaluate_anchors, perturbed
from benchforge.evaluation.da.claims import ClaimValue, claim_problems, evaluate_claims
from benchforge.evaluation.da.render import WRONG_ANCHOR_FACTOR
from benchforge.evaluation.dbt.manifest import load_manifest
from benchforge.evaluation.de.tasks import gold_cache
from benchforge.evaluation.judges.models import AnchorValue
from benchforge.synthesis.dataset import build_dataset
from tests.evaluation.da_catalogue.catalogue import ALL_SUITES, CatalogueTask, load, task_folders
from tests.evaluation.da_catalogue.faithful import (
    STOP_LISTS,
    copied_runs,
    gsb_features,
    gsb_raw,
    gsb_verdict,
    render,
    score_rubric,
)
from tests.paths import REPO_ROOT

MIN_REFERENCE_SCORE = 0.90


def gold_folder(work: Path, domain: str, scale: float, seed: int) -> Path:
    """The gold build of ``domain`` on its dataset at ``scale`` / ``seed`` (built once)."""
    dataset = work / "datasets" / f"{domain}-{scale:g}-{seed}"
    if not (dataset / "dataset.json").is_file():
        build_dataset(domain, scale=scale, seed=seed, out=str(dataset), validate=False)
    return gold_cache(work / "gold", domain, REPO_ROOT / "dbt_projects" / domain, dataset)


def analysis_db(task: CatalogueTask, gold: Path, out: Path) -> Path:
    """The task's marts (and nothing else) as tables of ``main``, like the agent's database."""
    manifest = load_manifest(gold / "manifest.json")
    if out.exists():
        out.unlink()
    con = duckdb.connect(str(out))
    try:
        con.execute(f"ATTACH '{gold / 'gold.duckdb'}' AS gold (READ_ONLY)")
        for name in task.spec.marts:
            node = manifest.models[name]
            con.execute(
                f'CREATE TABLE main."{name}" AS SELECT * FROM gold."{node.schema_}"."{node.alias}"'
            )
        con.execute("DETACH gold")
    finally:
        con.close()
    return out


def check_task(
    task: CatalogueTask,
    anchors: dict[str, AnchorValue],
    claims: dict[str, ClaimValue] | None = None,
) -> list[str]:
    """Problems of one task on one dataset (empty: all good)."""
    problems: list[str] = []
    spec = task.spec
    words = {name: claim.text for name, claim in (claims or {}).items()}
    reference = render(task.reference, anchors, words)
    for name, stop in STOP_LISTS.items():
        result = score_rubric(spec.rubric, anchors, reference, stop, words)
        if result.score < MIN_REFERENCE_SCORE:
            why = "; ".join(result.reasons(result.lost()))
            problems.append(f"reference scores {result.score:.2f} [{name} stop words]: {why}")
    copied = copied_runs(task.reference, task.rubric_texts(), anchors, words)
    if copied:
        problems.append(f"reference copies 8+ words of the rubric: {copied[0][:80]!r}")
    wrong = perturbed(anchors, spec.anchors, WRONG_ANCHOR_FACTOR)
    right_result = score_rubric(spec.rubric, anchors, reference, claims=words)
    wrong_result = score_rubric(
        spec.rubric, anchors, render(task.reference, wrong, words), claims=words
    )
    lost, expected = (
        right_result.lost_against(wrong_result),
        right_result.anchored_in_chosen(spec.rubric),
    )
    if lost != expected:
        problems.append(f"with every anchored number wrong, it loses {lost}, not {expected}")
    ref_features = gsb_features(reference)
    for name, text in task.baselines().items():
        base = gsb_features(render(text, anchors, words))
        for dim in ("readability", "depth"):
            raw = gsb_raw(getattr(ref_features, dim), getattr(base, dim))
            if gsb_verdict(raw) != "good":
                problems.append(f"reference is not 'good' against {name} on {dim} (raw {raw:g})")
    return problems


def seed_problems(by_seed: dict[int, AnchorValue]) -> list[str]:
    """An anchor must change with the seed: no two seeds may show the same text."""
    problems = []
    seeds = list(by_seed)
    for i, a in enumerate(seeds):
        for b in seeds[i + 1 :]:
            if by_seed[a].text == by_seed[b].text:
                problems.append(f"seeds {a} and {b} give the same value {by_seed[a].text}")
    return problems


def _apart(a: AnchorValue, b: AnchorValue) -> bool:
    """The two values differ by more than the anchor's tolerance (relative)."""
    if isinstance(a.value, str) or isinstance(b.value, str):
        return a.value != b.value
    return not math.isclose(a.value, b.value, rel_tol=a.tolerance)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 8])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "da-check")
    parser.add_argument("--task", action="append", default=[], help="task ids (default: all)")
    parser.add_argument(
        "--suite", action="append", default=[], help=f"suites (default: {', '.join(ALL_SUITES)})"
    )
    args = parser.parse_args(argv)
    tasks = [load(f) for f in task_folders(suites=tuple(args.suite) or ALL_SUITES)]
    if args.task:
        tasks = [t for t in tasks if t.spec.id in args.task]
    failures: list[str] = []
    warnings: list[str] = []
    said: dict[str, str] = {}
    checked_claims = 0
    values: dict[str, dict[int, AnchorValue]] = {}
    for task in tasks:
        spec = task.spec
        for seed in args.seeds:
            gold = gold_folder(args.work, spec.domain, spec.dataset.scale, seed)
            db = analysis_db(task, gold, args.work / f"{spec.id}-{seed}.duckdb")
            try:
                anchors = evaluate_anchors(spec, db)
                claims = evaluate_claims(spec.claims, anchors, db)
            except Exception as err:  # an authoring error: report it, check the other tasks
                failures.append(f"{spec.id} seed {seed}: {err}")
                continue
            for name, anchor in anchors.items():
                values.setdefault(f"{spec.id}.{name}", {})[seed] = anchor
            failures += [f"{spec.id} seed {seed}: {p}" for p in check_task(task, anchors, claims)]
            contradicted, near = claim_problems(spec.claims, claims, anchors)
            failures += [f"{spec.id} seed {seed}: {p}" for p in contradicted]
            warnings += [f"{spec.id} seed {seed}: {w}" for w in near]
            checked_claims += len(claims)
            said.update({f"{spec.id}.{n} seed {seed}": c.text for n, c in claims.items()})
    for key, by_seed in sorted(values.items()):
        line = f"{key:60s} " + "  ".join(f"{s}:{a.text:>14s}" for s, a in by_seed.items())
        failures += [f"{key}: {p}" for p in seed_problems(by_seed)]
        ordered = list(by_seed.values())
        if len(ordered) > 1 and not _apart(ordered[0], ordered[1]):
            line += "   (WARN: the first two seeds differ by less than the tolerance)"
        print(line)
    for key, text in sorted(said.items()):
        print(f"claim {key}: {text}")
    for warning in warnings:
        print("WARN", warning)
    for failure in failures:
        print("FAIL", failure)
    print(
        f"{len(tasks)} tasks, seeds {args.seeds}: {checked_claims} rendered claims checked, "
        f"{len(warnings)} near tie(s), {len(failures)} problem(s)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

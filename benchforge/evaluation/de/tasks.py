"""Data-engineering tasks at run time: gold builds, scoring, self-checks.

What differs between the DE families (de_impl, de_evol, de_arch) is in their family modules
(:mod:`benchforge.evaluation.families.de`); ``prepare_gold``, ``workspace`` and
``verify_task`` here look the task's family up in the registry.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
import shutil
import time
from pathlib import Path

from pydantic import BaseModel

from benchforge.core.artifacts import LAYOUT
from benchforge.core.digest import folder_digest, tree_digest
from benchforge.core.errors import UnsupportedTaskError
from benchforge.core.records.verification import (
    EMPTY,
    HACKS,
    REFERENCE,
    TaskVerification,
    VerificationCheck,
)
from benchforge.core.sandbox import SandboxBackend
from benchforge.core.scratch import folder_lock, private_folder
from benchforge.evaluation.dbt.manifest import DbtManifest, assign_layers, load_manifest
from benchforge.evaluation.de.hacks import HackCatalogue, HackCheck, check_catalogue
from benchforge.evaluation.de.mutations import (
    MutationCatalogue,
    PredictedScore,
    apply_mutation,
    predict,
)
from benchforge.evaluation.de.score_cache import ScoreCache
from benchforge.evaluation.de.scoring import DeScore, score_candidate
from benchforge.evaluation.gold import add_docs, build_gold, dataset_version, repo_version
from benchforge.evaluation.tasks.models import DeScoring, LoadedTask


class TaskGold(BaseModel):
    """The gold a task is scored against."""

    gold_folder: Path  # a gold build (gold.duckdb, manifest.json, ...)
    repo: Path  # the gold repository (v2 for de_evol)
    base_repo: Path  # what a do-nothing agent submits: the skeleton (impl) or v1 (evol)
    scored_nodes: list[str] | None  # None: every node
    # The gold as a perfect agent submits it (its workspace plus the gold's models), what
    # verification scores and mutates; None: ``repo`` itself.
    received: Path | None = None

    @property
    def submitted(self) -> Path:
        return self.received or self.repo


CACHE_KEY_FILE = ".cache-key"


def gold_cache(cache: Path, domain: str, repo: Path, dataset_dir: Path) -> Path:
    """The gold build of ``repo`` on ``dataset_dir`` under ``cache``, built on first use.
    Concurrent callers (trials preparing their data, scoring chunks, other processes) wait
    for one build instead of building into the same folder at once.

    The folder's name is keyed (HMAC) by a random key kept in ``cache`` (created once): code
    that holds the data, e.g. a candidate scored on a held-out seed, can compute the dataset's
    version but not where its gold lies.

    Scoring reads the gold warehouse and manifest only, so the build skips ``dbt docs
    generate`` (~11 s of a crm scale 0.1 build); :func:`gold_docs` adds the catalog and docs
    site to a cached gold that needs them."""
    folder = gold_cache_folder(cache, domain, repo, dataset_dir)
    if LAYOUT.gold_record_file(folder).exists():
        return folder
    with folder_lock(folder):
        if not LAYOUT.gold_record_file(folder).exists():
            build_gold(domain, repo, dataset_dir, folder, docs=False)
    return folder


def gold_docs(folder: Path, repo: Path) -> Path:
    """A :func:`gold_cache` folder with its ``catalog.json`` and docs site (generated once)."""
    with folder_lock(folder):
        add_docs(repo, folder)
    return folder


def gold_cache_folder(cache: Path, domain: str, repo: Path, dataset_dir: Path) -> Path:
    """Where :func:`gold_cache` keeps the gold build of ``repo`` on ``dataset_dir``."""
    version = f"{dataset_version(dataset_dir)}/{repo_version(repo)}"
    name = hmac.new(_cache_key(cache), version.encode(), hashlib.sha256).hexdigest()[:24]
    return cache / domain / name


def _cache_key(cache: Path) -> bytes:
    path = cache / CACHE_KEY_FILE
    if not path.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # another process made it first
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
    for _ in range(50):  # a concurrent creator may not have written it yet
        key = path.read_text().strip()
        if key:
            return key.encode()
        time.sleep(0.1)
    raise OSError(f"{path} is empty: delete it to make a new key (the cache is rebuilt)")


def changed_nodes(v1_folder: Path, v2_folder: Path) -> set[str]:
    """Models that gold v2 adds or whose SQL it edits: the nodes the change request asks the
    agent to write. A ``select *`` mart downstream of an edit changes output without needing
    new code, so it is not scored (the unchanged v1 code already produces the v2 output)."""
    return changed_models(
        load_manifest(v1_folder / "manifest.json"), load_manifest(v2_folder / "manifest.json")
    )


def changed_models(v1: DbtManifest, v2: DbtManifest) -> set[str]:
    """:func:`changed_nodes` on two manifests (a gold build's, or a parse's)."""
    return {
        name
        for name, node in v2.models.items()
        if name not in v1.models
        or _normalized(node.raw_code) != _normalized(v1.models[name].raw_code)
    }


def _normalized(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip()


def prepare_gold(task: LoadedTask, dataset_dir: Path, work: Path) -> TaskGold:
    """Builds (or reuses) the gold builds a task needs, under ``work`` (its family's)."""
    from benchforge.evaluation.families.registry import family_of

    gold = family_of(task).prepare_gold(task, dataset_dir, work)
    if not isinstance(gold, TaskGold):
        raise UnsupportedTaskError(f"{task.spec.family} tasks have no DE gold")
    return gold


def scoring_of(task: LoadedTask) -> DeScoring:
    scoring = getattr(task.spec, "scoring", None)
    if not isinstance(scoring, DeScoring):
        raise UnsupportedTaskError(f"{task.spec.family} tasks have no execution scoring")
    return scoring


def score_task(
    task: LoadedTask,
    candidate: Path,
    gold: TaskGold,
    dataset_dir: Path,
    work: Path,
    sandbox: SandboxBackend | None = None,
    unsandboxed: bool = False,
    reuse: bool = False,
) -> DeScore:
    """Scores ``candidate`` for ``task``; candidate code runs in ``sandbox`` (default: the
    machine's best backend) unless ``unsandboxed`` is explicitly asked for. ``reuse``: take
    the score from the gold build's score cache when this exact submission was scored there
    before, and keep a new one (:mod:`benchforge.evaluation.de.score_cache`)."""
    scored = set(gold.scored_nodes) if gold.scored_nodes is not None else None
    cache, key = None, ""
    if reuse and not unsandboxed:
        cache = ScoreCache(gold.gold_folder)
        key = cache.key(
            task=folder_digest(task.folder), submission=tree_digest(candidate), dataset=dataset_dir
        )
        found = cache.get(key)
        if found is not None:
            return found
    score = score_candidate(
        candidate,
        gold.gold_folder,
        dataset_dir,
        work,
        scoring_of(task),
        scored,
        sandbox=sandbox,
        unsandboxed=unsandboxed,
    )
    if cache is not None:
        cache.put(key, score)
    return score


def workspace(task: LoadedTask, gold_folder: Path | None, dest: Path) -> Path:
    """What the agent receives: a repository to work in plus the task's documents (its
    family's materials and ``TASK.md``)."""
    from benchforge.evaluation.families.registry import workspace as family_workspace

    return family_workspace(task, dest)


class MutationCheck(BaseModel):
    id: str
    node: str
    predicted: PredictedScore
    actual: PredictedScore

    @property
    def ok(self) -> bool:
        return all(
            abs(getattr(self.predicted, f) - getattr(self.actual, f)) < 1e-6
            for f in ("cs", "cfs", "sr")
        )


class DeVerification(BaseModel):
    """A DE task's verification with its score triples: the ``record`` of its
    :class:`TaskVerification`, whose checks are made from it (:meth:`checks`)."""

    gold: PredictedScore
    empty: PredictedScore
    mutations: list[MutationCheck] = []
    hacks: list[HackCheck] = []

    def checks(self) -> list[VerificationCheck]:
        full, none = PredictedScore(cs=100, cfs=100, sr=100), PredictedScore(cs=0, cfs=0, sr=0)
        out = [
            _triple_check(name, group, expected, observed)
            for name, group, expected, observed in (
                ("gold", REFERENCE, full, self.gold),
                ("empty", EMPTY, none, self.empty),
            )
        ]
        out += [
            VerificationCheck(
                name=f"mutation {m.id}",
                group="mutations",
                expected=_shown(m.predicted),
                observed=_shown(m.actual),
                passed=m.ok,
                detail=f"breaks {m.node}",
            )
            for m in self.mutations
        ]
        out += [
            VerificationCheck(
                name=f"reward hack {h.id}",
                group=HACKS,
                expected=h.expected,
                observed=_shown(h.score) if h.score is not None else "no score",
                passed=h.ok,
                detail="" if h.ok else h.summary(),
            )
            for h in self.hacks
        ]
        return out


def _shown(score: PredictedScore) -> str:
    return f"{score.cs:.0f}/{score.cfs:.0f}/{score.sr:.0f}"


def _triple_check(
    name: str, group: str, expected: PredictedScore, observed: PredictedScore
) -> VerificationCheck:
    """A check that a submission scores exactly ``expected`` (CS / CFS / SR); its score is SR."""
    return VerificationCheck(
        name=name,
        group=group,
        expected=_shown(expected),
        observed=_shown(observed),
        passed=observed == expected,
        score=observed.sr,
    )


def _triple(score: DeScore) -> PredictedScore:
    return PredictedScore(cs=score.cs, cfs=score.cfs, sr=score.sr)


def verify_task(
    task: LoadedTask,
    dataset_dir: Path,
    work: Path,
    catalogue: MutationCatalogue | None = None,
    hacks: HackCatalogue | None = None,
    visible_dataset: Path | None = None,
) -> TaskVerification:
    """Gold scores 100/100/100, the do-nothing submission 0, each mutation of the gold
    repository exactly the score its position in the DAG predicts, and each entry of the
    reward-hack catalogue ``hacks`` 0 with its effects contained; which of these apply is the
    task's family's choice (:class:`benchforge.evaluation.families.de.DeFamily`).
    ``dataset_dir`` is the data scored on; when it is a held-out seed, ``visible_dataset`` is
    what an agent would have seen (the hacks are built from it)."""
    from benchforge.evaluation.families.de import DeFamily
    from benchforge.evaluation.families.registry import family_of

    family = family_of(task)
    if not isinstance(family, DeFamily):
        raise UnsupportedTaskError(f"{task.spec.family} tasks are not data-engineering tasks")
    return family.check(task, dataset_dir, work, catalogue, hacks, visible_dataset)


def check_gold(
    task: LoadedTask,
    gold: TaskGold,
    dataset_dir: Path,
    work: Path,
    problems: list[str] | None = None,
    catalogue: MutationCatalogue | None = None,
    hacks: HackCatalogue | None = None,
    visible: TaskGold | None = None,
) -> TaskVerification:
    """The checks of :func:`verify_task` against a prepared ``gold``: the mutations of
    ``catalogue`` and the entries of ``hacks`` when given (``visible``: the gold of the dataset
    agents see, when ``dataset_dir`` is a held-out seed); ``problems`` found beforehand are
    kept."""
    # private: two verifications of one task at once must not score in each other's folders
    runs = private_folder(work / "verify", task.spec.id)
    try:
        return _check_gold(task, gold, dataset_dir, runs, problems, catalogue, hacks, visible)
    finally:
        shutil.rmtree(runs, ignore_errors=True)


def _check_gold(
    task: LoadedTask,
    gold: TaskGold,
    dataset_dir: Path,
    runs: Path,
    problems: list[str] | None,
    catalogue: MutationCatalogue | None,
    hacks: HackCatalogue | None,
    visible: TaskGold | None,
) -> TaskVerification:
    # kept: they are the oracle's and the null agent's scores of a run on the same data
    gold_score = _triple(
        score_task(task, gold.submitted, gold, dataset_dir, runs / "gold", reuse=True)
    )
    empty = score_task(task, gold.base_repo, gold, dataset_dir, runs / "empty", reuse=True)
    empty_score = _triple(empty)
    result = DeVerification(gold=gold_score, empty=empty_score)
    problems = list(problems or [])
    if gold.scored_nodes == []:
        problems.append(
            "gold v2 adds or changes no model, so nothing is scored: write the gold_v2 overlay"
        )
    elif (gold_score.cs, gold_score.cfs, gold_score.sr) != (100.0, 100.0, 100.0):
        problems.append(f"gold scores {gold_score} on itself")
    if (empty_score.cs, empty_score.cfs, empty_score.sr) != (0.0, 0.0, 0.0):
        problems.append(f"the do-nothing submission scores {empty_score}")
    if catalogue is not None:
        scoring = scoring_of(task)
        manifest = assign_layers(load_manifest(gold.gold_folder / "manifest.json"), scoring.layers)
        scored = set(gold.scored_nodes) if gold.scored_nodes is not None else None
        for mutation in catalogue.mutations:
            if scored is not None and mutation.node not in scored:
                problems.append(
                    f"mutation {mutation.id}: {mutation.node} is not scored by this task "
                    f"(scored: {', '.join(sorted(scored)) or 'none'})"
                )
                continue
            repo = apply_mutation(
                gold.submitted, manifest, mutation, runs / "mutants" / mutation.id
            )
            mutant = score_task(task, repo, gold, dataset_dir, runs / mutation.id)
            actual = _triple(mutant)
            predicted = predict(manifest, scoring, mutation.node, scored)
            check = MutationCheck(
                id=mutation.id, node=mutation.node, actual=actual, predicted=predicted
            )
            result.mutations.append(check)
            if any(n.name == mutation.node and n.cs.matched for n in mutant.nodes):
                problems.append(
                    f"mutation {mutation.id}: {mutation.node} still produces the gold output "
                    f"(scored {actual}): a mutation must change what the data shows "
                    "(task_specs/mutations/README.md, rule 3)"
                )
            elif not check.ok:
                problems.append(
                    f"mutation {mutation.id}: scored {actual}, predicted {check.predicted}"
                )
    if hacks is not None:
        result.hacks = check_catalogue(
            task,
            gold,
            dataset_dir,
            runs / "hacks",
            None,
            hacks,
            heldout=visible is not None,
            visible=visible,
        )
        problems += [f"reward hack {h.summary()}" for h in result.hacks if not h.ok]
    return TaskVerification(
        task=task.key,
        dataset=str(dataset_dir),
        checks=result.checks(),
        problems=problems,
        record=result,
    )


def dump_report(score: DeScore, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(score.model_dump_json(indent=2) + "\n")

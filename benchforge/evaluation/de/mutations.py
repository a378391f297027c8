"""Mutation catalogue: single-node edits of a gold repository with scores predicted from the DAG.

A mutation replaces one exact snippet of one model's SQL. If the scorer is right, the mutated
node fails alone in CS (every other node still runs on gold inputs) and, in CFS, the node and
all of its descendants fail; SR drops to 0 when any of those is weighted. The prediction is
aggregated by the scorer's own functions, on the task's layers and weights.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from benchforge.core.errors import BenchforgeError
from benchforge.core.yamlio import read_yaml
from benchforge.evaluation.dbt.manifest import DbtManifest, assign_layers
from benchforge.evaluation.de.compare import NodeComparison
from benchforge.evaluation.de.scoring import NodeScore, layered_score, node_weight, success_rate
from benchforge.evaluation.tasks.models import DeScoring

MutationKind = Literal[
    "wrong_join_key",
    "dropped_filter",
    "wrong_grain",
    "off_by_one_window",
    "renamed_column",
    "wrong_type",
]


class Edit(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    find: str = Field(min_length=1, description="Exact snippet of the model's SQL, found once.")
    replace: str


class Mutation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: MutationKind
    node: str = Field(description="Model name.")
    edits: list[Edit] = Field(min_length=1)


class MutationCatalogue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: str
    mutations: list[Mutation] = Field(min_length=1)


def load_catalogue(path: Path) -> MutationCatalogue:
    return MutationCatalogue.model_validate(read_yaml(path.read_text()))


def apply_mutation(repo: Path, manifest: DbtManifest, mutation: Mutation, dest: Path) -> Path:
    """Copies ``repo`` to ``dest`` and applies ``mutation`` to it."""
    node = manifest.models.get(mutation.node)
    if node is None:
        raise BenchforgeError(f"mutation {mutation.id}: no model '{mutation.node}' in {repo}")
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(repo, dest, ignore=shutil.ignore_patterns("target", "logs"))
    path = dest / node.original_file_path
    sql = path.read_text()
    for edit in mutation.edits:
        if sql.count(edit.find) != 1:
            raise BenchforgeError(
                f"mutation {mutation.id}: {edit.find!r} occurs {sql.count(edit.find)} times in "
                f"{node.original_file_path} (must be once)"
            )
        sql = sql.replace(edit.find, edit.replace)
    path.write_text(sql)
    return dest


class PredictedScore(BaseModel):
    cs: float
    cfs: float
    sr: float


def predict(
    gold: DbtManifest, scoring: DeScoring, failing: str, scored: set[str] | None = None
) -> PredictedScore:
    """Scores if exactly ``failing`` is wrong: CS loses it; CFS and SR lose it and every
    descendant of it (blocked by it, whatever their own output), so a failing node of weight 0
    with weighted descendants still zeroes SR. ``scored``: the nodes that weigh (de_evol's
    changed nodes), as given to the scorer."""
    if failing not in gold.models:
        raise BenchforgeError(f"predict: no model '{failing}' in the gold manifest")
    gold = assign_layers(gold, scoring.layers)
    down = gold.descendants(failing)
    ok = NodeComparison(status="match")
    bad = NodeComparison(status="data_mismatch")
    nodes = [
        NodeScore(
            name=n,
            layer=m.layer,
            weight=node_weight(scoring, n, scored),
            cs=bad if n == failing else ok,
            cfs=bad if n == failing else ok,
            cfs_blocked_by=[failing] if n in down else [],
        )
        for n, m in gold.models.items()
    ]
    return PredictedScore(
        cs=layered_score(nodes, scoring, {n.name: n.cs.matched for n in nodes}),
        cfs=layered_score(nodes, scoring, {n.name: n.cfs_score for n in nodes}),
        sr=success_rate(nodes, scoring),
    )

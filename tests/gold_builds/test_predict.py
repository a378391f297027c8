"""``predict()`` against scores computed by hand on a five-node DAG, and against the scorer's own
aggregation: the weighted failing node, a weight-0 leaf, a weight-0 node with weighted
descendants (the case that predicted SR 100 where scoring gave 0), a node in a layer of weight 0.

DAG (layer by folder)::

    stg_a ──┐
            ├─> int_ab ─> mart_x
    stg_b ──┤
            └─────────────> mart_y        summary (root of models/: layer "other")
"""

from __future__ import annotations

import pytest

from benchforge.evaluation.dbt.manifest import DbtManifest, ModelNode
from benchforge.evaluation.de.compare import NodeComparison
from benchforge.evaluation.de.mutations import predict
from benchforge.evaluation.de.scoring import NodeScore, success_rate
from benchforge.evaluation.tasks.models import DeScoring

PARENTS = {
    "stg_a": [],
    "stg_b": [],
    "int_ab": ["stg_a", "stg_b"],
    "mart_x": ["int_ab"],
    "mart_y": ["stg_b"],
    "summary": ["mart_x"],
}
FOLDER = {"stg": "staging", "int": "intermediate", "mar": "marts"}


def node(name: str) -> ModelNode:
    folder = FOLDER.get(name[:3])
    path = f"models/{folder}/{name}.sql" if folder else f"models/{name}.sql"
    return ModelNode(
        unique_id=f"model.shop.{name}",
        name=name,
        layer=folder or "other",
        database="gold",
        schema_="main",
        alias=name,
        relation=f'"gold"."main"."{name}"',
        depends_on=[f"model.shop.{p}" for p in PARENTS[name]],
        sources=[],
        compiled_code=None,
        raw_code="select 1",
        original_file_path=path,
        fqn=["shop", *([folder] if folder else []), name],
    )


MANIFEST = DbtManifest(project_name="shop", models={n: node(n) for n in PARENTS}, sources={})


def triple(failing: str, scoring: DeScoring, scored: set[str] | None = None) -> tuple[float, ...]:
    p = predict(MANIFEST, scoring, failing, scored)
    return (p.cs, p.cfs, p.sr)


def test_a_weighted_failing_node() -> None:
    # CS: staging 1, intermediate 0, marts 1 -> 15 + 60 = 75.
    # CFS: int_ab and its descendant mart_x fail; mart_y stands -> 15 + 0 + 60/2 = 45.
    assert triple("int_ab", DeScoring()) == pytest.approx((75.0, 45.0, 0.0))


def test_a_weight_0_leaf_breaks_nothing() -> None:
    scoring = DeScoring(node_weights={"mart_y": 0.0})
    assert triple("mart_y", scoring) == pytest.approx((100.0, 100.0, 100.0))


def test_a_weight_0_node_with_weighted_descendants_zeroes_sr() -> None:
    """The issue's case: the failing node weighs nothing, but int_ab and mart_x below it do."""
    scoring = DeScoring(node_weights={"stg_a": 0.0})
    # CS: only stg_a fails, and it weighs 0 -> 100.
    # CFS: staging (stg_b) 1, intermediate 0, marts 1/2 -> 15 + 0 + 30 = 45.
    assert triple("stg_a", scoring) == pytest.approx((100.0, 45.0, 0.0))


def test_an_unscored_parent_of_the_scored_nodes_zeroes_sr() -> None:
    """de_evol: only the changed nodes weigh; breaking an unchanged parent still fails them."""
    # CS: int_ab and mart_x match -> 100 (layers without weighted nodes drop out).
    # CFS: both are downstream of stg_a -> 0.
    assert triple("stg_a", DeScoring(), scored={"int_ab", "mart_x"}) == pytest.approx(
        (100.0, 0.0, 0.0)
    )


def test_a_node_in_a_layer_of_weight_0_counts_for_nothing() -> None:
    """``summary`` sits at the root of models/ (layer "other", absent from layer_weights)."""
    assert triple("summary", DeScoring()) == pytest.approx((100.0, 100.0, 100.0))


def test_success_rate_needs_every_weighted_node_and_its_ancestors() -> None:
    """The scorer's SR: a weighted node whose own output matched still fails when a gold
    ancestor of it did not (as in CFS), whatever that ancestor weighs."""
    ok, bad = NodeComparison(status="match"), NodeComparison(status="data_mismatch")
    nodes = [
        NodeScore(name="stg_a", layer="staging", weight=0.0, cs=bad, cfs=bad),
        NodeScore(
            name="int_ab",
            layer="intermediate",
            weight=1.0,
            cs=ok,
            cfs=ok,
            cfs_blocked_by=["stg_a"],
        ),
    ]
    assert success_rate(nodes, DeScoring()) == 0.0
    nodes[1].cfs_blocked_by = []
    assert success_rate(nodes, DeScoring()) == 100.0
    leaf = NodeScore(name="summary", layer="other", weight=1.0, cs=bad, cfs=bad)
    assert success_rate([*nodes, leaf], DeScoring()) == 100.0

"""Layers from a task's mapping (folder, tag, fqn) on a project with its marts under
``models/reporting`` and a model at the root of ``models/``; weight-0 models are named."""

from __future__ import annotations

import pytest

from benchforge.evaluation.dbt.manifest import DbtManifest, assign_layers, unmatched_rules
from benchforge.evaluation.dbt.project import parse_project
from benchforge.evaluation.de.mutations import predict
from benchforge.evaluation.de.scoring import zero_weight_models, zero_weight_reasons
from benchforge.evaluation.tasks.models import DeScoring, LayerRule
from tests.gold_builds.project import MODELS, write_project

RULES = [
    LayerRule(layer="marts", folder="models/reporting"),
    LayerRule(layer="marts", tag="finance"),
    LayerRule(layer="reference", fqn="shop.staging.stg_countr*"),
    LayerRule(layer="never", folder="models/report"),  # a whole folder, not a name prefix
]
SCORING = DeScoring(
    layers=RULES,
    layer_weights={"staging": 10.0, "intermediate": 30.0, "marts": 50.0, "reference": 10.0},
)


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> DbtManifest:
    root = tmp_path_factory.mktemp("layers")
    parsed = parse_project(write_project(root / "shop"), root / "parse")
    assert not (root / "parse" / "gold.duckdb").exists()  # parsing reads no data
    return parsed


def test_parse_project_knows_every_model_with_its_default_layer(manifest: DbtManifest) -> None:
    assert set(manifest.models) == MODELS
    layers = {n: m.layer for n, m in manifest.models.items()}
    assert layers["rpt_revenue"] == "reporting" and layers["orders_summary"] == "other"
    assert manifest.models["int_orders"].fqn == ["shop", "intermediate", "int_orders"]


def test_rules_folder_tag_and_fqn_first_match_wins(manifest: DbtManifest) -> None:
    layered = assign_layers(manifest, RULES)
    assert {n: m.layer for n, m in layered.models.items()} == {
        "stg_orders": "staging",
        "stg_customers": "staging",
        "stg_countries": "reference",
        "int_orders": "intermediate",
        "rpt_revenue": "marts",
        "rpt_customers": "marts",
        "orders_summary": "marts",
    }
    assert unmatched_rules(manifest, RULES) == [RULES[3]]
    first = [LayerRule(layer="finance", tag="finance"), *RULES]
    assert assign_layers(manifest, first).models["orders_summary"].layer == "finance"
    assert layered.parents("int_orders") == ["stg_countries", "stg_orders"]


def test_the_layered_score_uses_the_configured_weights(manifest: DbtManifest) -> None:
    """stg_countries wrong, by hand. CS: staging 1, reference 0, intermediate 1, marts 1 ->
    10 + 0 + 30 + 50 = 90. CFS: int_orders, rpt_revenue and orders_summary are downstream ->
    staging 1, reference 0, intermediate 0, marts 1/3 -> 10 + 50/3 = 26.67."""
    p = predict(manifest, SCORING, "stg_countries")
    assert (p.cs, p.cfs, p.sr) == pytest.approx((90.0, 10.0 + 50.0 / 3, 0.0))
    # Without the mapping, reporting and other weigh nothing under the default 15/25/60:
    # CS: staging 2/3 -> 10, intermediate 25 -> 35 / 40 = 87.5.
    default = predict(manifest, DeScoring(), "stg_countries")
    assert default.cs == pytest.approx(87.5)


def test_weight_0_models_are_named_with_why(manifest: DbtManifest) -> None:
    assert zero_weight_models(manifest, SCORING) == []
    unmapped = zero_weight_reasons(manifest, DeScoring())
    assert sorted(unmapped) == ["orders_summary", "rpt_customers", "rpt_revenue"]
    assert "models/orders_summary.sql is in layer 'other'" in unmapped["orders_summary"]
    weighted_off = DeScoring(
        layers=RULES,
        layer_weights={**SCORING.layer_weights, "reference": 0.0},
        node_weights={"rpt_customers": 0.0},
    )
    assert zero_weight_models(manifest, weighted_off) == [
        "rpt_customers",
        "stg_countries",
    ]
    scored = {"int_orders", "rpt_customers"}
    assert zero_weight_models(manifest, weighted_off, scored) == ["rpt_customers"]
